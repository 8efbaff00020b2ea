// What a run may hand to the host (docs/workflows.md, "Limits"), over real HTTP on each engine:
// the attacks of a hostile pal (test/fixtures/workflow-pals/wf-hostile) each fail with a message
// that names the bound, keep nothing, and leave the server serving; pal.mail.send mails ACTIVE
// SSOs only, within the enterprise's hourly quota (a real SMTP listener, and on PostgreSQL a
// second node sharing the count); and input.palId of every transaction run.
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleResult, Message, TransactionResult } from '@pal-workflow/types';
import { deployPal } from '../src/domain/pals.js';
import { createSso } from '../src/domain/ssos.js';
import { startServer } from '../src/server.js';
import { engine } from './engine.js';
import { apiError, startHarness, type Harness } from './harness.js';
import { runSessionAction } from './workflow-runs.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'workflow-pals');
const MAILS_PER_HOUR = 8;

let h: Harness;
let sso: string;
beforeAll(async () => {
  h = await startHarness({
    smtp: true,
    env: {
      WORKFLOW_TIMEOUT_MS: '5000',
      WORKFLOW_WORKERS: '2',
      WORKFLOW_MAILS_PER_HOUR: String(MAILS_PER_HOUR),
    },
  });
  for (const id of ['wf-hostile', 'wf-tx'])
    await deployPal(h.domain, h.a.enterpriseId, join(FIXTURES, id));
  await deployPal(h.domain, h.b.enterpriseId, join(FIXTURES, 'wf-hostile'));
  sso = await createSso(h.domain, h.a.enterpriseId, {
    firstName: 'Rita',
    lastName: 'Recipient',
    email: 'rita@example.test',
  });
});
afterAll(() => h?.close());

const post = (values: Record<string, string | number>) => ({
  postData: Object.entries(values).map(([name, value]) => ({ name, value: String(value) })),
});

/** C7 of wf-hostile with these postData values. */
const c7 = (values: Record<string, string | number>, tenant = h.a): Promise<ConsoleResult> =>
  tenant.json.console.runConsoleWorkflow({ palId: 'wf-hostile', consoleContent: post(values) });

/** T6 of wf-hostile on a new transaction (or the one given). */
async function t6(
  values: Record<string, string | number>,
  id?: string,
): Promise<TransactionResult & { id: string }> {
  const transactionId =
    id ?? (await h.a.json.transactions.createTransaction({ palId: 'wf-hostile' }));
  const result = await h.a.json.transactions.runTransactionWorkflow({
    transactionId,
    transactionContent: post(values),
  });
  return { ...result, id: transactionId };
}

function failedWith(result: { success?: boolean; messages?: Message[] }) {
  expect(result.success, JSON.stringify(result).slice(0, 500)).toBe(false);
  expect(result.messages).toHaveLength(1);
  return result.messages![0]!;
}

describe('the bounds on what a run hands to the host', () => {
  it('variables set in a loop: the run fails at the names a run may set, and keeps none', async () => {
    const result = await t6({ attack: 'vars', n: 20_000 });
    const message = failedWith(result);
    expect(message.type).toBe('WORKFLOW_MEMORY');
    expect(message.message).toMatch(/pal\.vars\.set: a run may set at most 1000 variables/);
    const info = await h.a.json.transactions.getTransaction({ id: result.id });
    expect(info.webServiceStatus).toBe('FAILED');
    // Nothing was kept: a second run of 1000 names (the most a run may set) succeeds.
    expect((await t6({ attack: 'vars', n: 1000 }, result.id)).success).toBe(true);
  });

  it('a caught bound is still broken: the workflow cannot go on past it', async () => {
    const message = failedWith(await t6({ attack: 'vars-caught', n: 2000 }));
    expect(message.type).toBe('WORKFLOW_MEMORY');
    expect(message.message).toMatch(/at most 1000 variables/);
  });

  it('a limit broken inside a pal method (a getter pal.log reads) fails the run, and keeps nothing after it', async () => {
    const memory = await t6({ attack: 'log-memory' });
    expect(failedWith(memory).type).toBe('WORKFLOW_MEMORY');
    const timedOut = await t6({ attack: 'log-loop' }, memory.id);
    expect(failedWith(timedOut).type).toBe('WORKFLOW_TIMEOUT');
    const after = await t6({ attack: 'read-after' }, memory.id);
    expect(after.messages?.map((m) => m.message)).toEqual(['after: undefined']);
  });

  it('a value no variable may hold (NUL, control character, lone surrogate): a TypeError, nothing kept, no 500', async () => {
    const caught = await t6({ attack: 'unkeepable' });
    expect(caught.success, JSON.stringify(caught)).toBe(true);
    expect(caught.messages?.map((m) => m.message)).toEqual(
      Array(3).fill(
        'pal.vars.set: value holds a character that cannot be kept (a NUL, another control character but tab and line breaks, or a lone surrogate)',
      ),
    );
    // The transaction answers T9 as before (a value XML cannot carry would have broken it).
    const listed = await h.a.json.transactions.runTransaction({
      transactionId: caught.id,
      transactionContent: post({ attack: 'read-after' }),
    });
    expect(listed).toBeDefined();
    // Uncaught, it fails the run cleanly; the next run on the transaction is not held back.
    const uncaught = await t6({ attack: 'unkeepable', uncaught: 'yes' }, caught.id);
    expect(failedWith(uncaught).message).toContain('cannot be kept');
    expect((await t6({ attack: 'unkeepable' }, caught.id)).success).toBe(true);
  });

  it('a commit of its effects that the database refuses: a 500, and the transaction is FAILED, not left RUNNING', async () => {
    // A fault of the service's own kind, made on purpose: the database refuses one variable name.
    if (engine === 'sqlite')
      await sql`create trigger refuse_boom before insert on variables when new.name = 'boom0'
        begin select raise(abort, 'refused by the test'); end`.execute(h.domain.db);
    else {
      await sql`create function refuse_boom() returns trigger language plpgsql as $$
        begin if new.name = 'boom0' then raise exception 'refused by the test'; end if; return new; end $$`.execute(
        h.domain.db,
      );
      await sql`create trigger refuse_boom before insert on variables for each row execute function refuse_boom()`.execute(
        h.domain.db,
      );
    }
    try {
      const id = await h.a.json.transactions.createTransaction({ palId: 'wf-hostile' });
      await apiError(
        h.a.json.transactions.runTransactionWorkflow({
          transactionId: id,
          transactionContent: post({ attack: 'vars', n: 1, prefix: 'boom' }),
        }),
        500,
        'INTERNAL',
      );
      expect((await h.a.json.transactions.getTransaction({ id })).webServiceStatus).toBe('FAILED');
      // The next run is not held back as "already running".
      expect((await t6({ attack: 'read-after' }, id)).success).toBe(true);
    } finally {
      await sql`drop trigger refuse_boom${sql.raw(engine === 'sqlite' ? '' : ' on variables')}`.execute(
        h.domain.db,
      );
    }
  });

  it('large values: the run fails at the bytes a transaction’s variables may hold', async () => {
    const message = failedWith(await t6({ attack: 'vars', n: 40, size: 60_000 }));
    expect(message.type).toBe('WORKFLOW_MEMORY');
    expect(message.message).toMatch(
      /the variables of this transaction would take more than 1048576 bytes/,
    );
  });

  it('console variables in a loop, within runs and across them, stop at the pal’s bounds', async () => {
    const loop = failedWith(await c7({ attack: 'vars', n: 20_000 }));
    expect([loop.type, loop.message]).toEqual([
      'WORKFLOW_MEMORY',
      expect.stringMatching(/a run may set at most 1000 variables/),
    ]);
    // 900 names of 1000 characters: allowed; 200 more make the pal's variables pass 1 MiB.
    expect((await c7({ attack: 'vars', n: 900, size: 1000, prefix: 'a' })).success).toBe(true);
    const grown = failedWith(await c7({ attack: 'vars', n: 200, size: 1000, prefix: 'b' }));
    expect([grown.type, grown.message]).toEqual([
      'WORKFLOW_MEMORY',
      expect.stringMatching(/the variables of this pal would take more than 1048576 bytes/),
    ]);
    // The other enterprise's copy of the pal has variables of its own.
    expect((await c7({ attack: 'vars', n: 200, size: 1000, prefix: 'b' }, h.b)).success).toBe(true);
  });

  it('role changes in a loop: the run fails at the role changes a run may make', async () => {
    const result = await t6({ attack: 'roles', n: 5000, sso });
    const message = failedWith(result);
    expect(message.type).toBe('WORKFLOW_MEMORY');
    expect(message.message).toMatch(/pal\.roles\.assign: a run may make at most 100 role changes/);
    const found = await h.a.json.transactions.searchTransactions({ sso, palId: 'wf-hostile' });
    expect(found.map((t) => t.id)).not.toContain(result.id);
  });

  it('more than 20 mails: the run fails and none is sent', async () => {
    const before = h.mails.length;
    const message = failedWith(await t6({ attack: 'mails', n: 21, sso }));
    expect(message.type).toBe('WORKFLOW_MEMORY');
    expect(message.message).toMatch(/pal\.mail\.send: a run may send at most 20 mails/);
    expect(h.mails.length).toBe(before);
  });

  it.each([
    ['error', 21_000_000, /^Error: x{100}/],
    ['error-name', 1_000_000, /^N{100}…?: short/],
    ['throw-string', 5_000_000, /^thrown value: y{100}/],
  ])(
    'a thrown %s of %i characters comes back cut to the documented length',
    async (attack, n, start) => {
      for (const result of [await c7({ attack, n }), await t6({ attack, n })]) {
        const message = failedWith(result);
        expect(message.type).toBe('WORKFLOW_ERROR');
        expect(message.message).toMatch(start);
        expect(message.message.length).toBeLessThanOrEqual(2200);
        if (attack !== 'error-name')
          expect(message.message).toContain(`(cut to 2000 of ${n} characters)`);
      }
    },
  );

  it('a returned value larger than WORKFLOW_RESULT_MAX_CHARS fails the run', async () => {
    const message = failedWith(await c7({ attack: 'result', n: 5_000_000 }));
    expect(message.type).toBe('WORKFLOW_MEMORY');
    expect(message.message).toMatch(/larger than 4194304 characters of JSON/);
  });

  it('C2 answers a broken bound with 422 WORKFLOW_MEMORY', async () => {
    const e = await apiError(
      h.a.json.console.runConsolePal({ palId: 'wf-hostile', consoleContent: {} }).then(() =>
        h.a.json.console.runConsolePal({
          palId: 'wf-hostile',
          consoleContent: post({ attack: 'vars', n: 5000 }),
        }),
      ),
      422,
      'WORKFLOW_MEMORY',
    );
    expect(e.message).toMatch(/at most 1000 variables/);
  });

  it('the server stays healthy: /healthz answers and normal runs succeed', async () => {
    expect((await h.http('/healthz')).status).toBe(200);
    expect((await c7({})).messages).toEqual([{ message: 'a normal run' }]);
    expect((await t6({})).messages).toEqual([{ message: 'a normal run' }]);
  });
});

describe('pal.mail.send', () => {
  it('refuses an SSO that is not ACTIVE (an invitee who accepted nothing): the run fails, nothing is sent', async () => {
    const email = 'invitee@people.example.test';
    await h.b.json.enterprise.createSso({ firstName: 'Ivo', lastName: 'Invitee', email });
    const pending = await h.a.json.enterprise.inviteSso({ email });
    expect(await h.a.json.enterprise.getSsoStatus({ sso: pending })).toBe('PENDING_ACTIVATION');
    const before = h.mails.length;
    const message = failedWith(await t6({ attack: 'mails', n: 1, sso: pending }));
    expect(message.type).toBe('WORKFLOW_ERROR');
    expect(message.message).toBe(
      `pal.mail.send: SSO "${pending}" is PENDING_ACTIVATION; mail goes only to ACTIVE SSOs`,
    );
    expect(h.mails.slice(before).map((m) => m.envelope.to)).toEqual([]);
  });

  it('counts every mail of the enterprise in the hour; over the quota the run fails and sends nothing', async () => {
    // Earlier tests of this file sent no mail (their runs failed).
    const before = h.mails.length;
    expect((await t6({ attack: 'mails', n: 5, sso })).success).toBe(true);
    expect(h.mails.length).toBe(before + 5);
    const over = failedWith(await t6({ attack: 'mails', n: 4, sso }));
    expect(over.type).toBe('WORKFLOW_ERROR');
    expect(over.message).toMatch(
      new RegExp(
        `the enterprise's quota of ${MAILS_PER_HOUR} workflow mails an hour is used up \\(5 sent this hour, this run would send 4\\)`,
      ),
    );
    expect(h.mails.length).toBe(before + 5);
    // What is left of the quota can still be used; the failed run counted nothing.
    expect((await t6({ attack: 'mails', n: 3, sso })).success).toBe(true);
    expect(h.mails.length).toBe(before + 8);
    expect(failedWith(await t6({ attack: 'mails', n: 1, sso })).message).toMatch(/quota/);
  });

  it.runIf(engine === 'postgres')('the quota is shared by the nodes on one database', async () => {
    // The previous test used this enterprise's quota up on node A: node B refuses too.
    const b = await startServer(h.config, { logger: false });
    try {
      const id = await h.a.json.transactions.createTransaction({ palId: 'wf-hostile' });
      const response = await fetch(`${b.url}/services/rest/transactions/${id}/runWorkflow`, {
        method: 'POST',
        headers: {
          authorization: h.a.authorization,
          accept: 'application/json',
          'content-type': 'application/json',
        },
        body: JSON.stringify(post({ attack: 'mails', n: 1, sso })),
      });
      const result = (await response.json()) as TransactionResult;
      expect(failedWith(result).message).toMatch(/quota of 8 workflow mails an hour/);
    } finally {
      await b.close();
    }
  });

  it('the quota is per enterprise: the other enterprise still sends', async () => {
    const other = await createSso(h.domain, h.b.enterpriseId, {
      firstName: 'Otto',
      lastName: 'Other',
      email: 'otto@example.test',
    });
    const id = await h.b.json.transactions.createTransaction({ palId: 'wf-hostile' });
    const before = h.mails.length;
    const result = await h.b.json.transactions.runTransactionWorkflow({
      transactionId: id,
      transactionContent: post({ attack: 'mails', n: 2, sso: other }),
    });
    expect(result.success).toBe(true);
    expect(h.mails.slice(before).map((m) => m.envelope.to)).toEqual([
      ['otto@example.test'],
      ['otto@example.test'],
    ]);
  });
});

describe('input as docs/workflows.md says', () => {
  it('transaction runs get input.palId: T6, T9 and entries', async () => {
    const id = await h.a.json.transactions.createTransaction({ palId: 'wf-tx' });
    const view = await h.a.json.transactions.runTransactionWorkflow({
      transactionId: id,
      transactionContent: post({ step: 'input' }),
    });
    expect(JSON.parse(view.messages![0]!.message)).toEqual({
      palId: 'wf-tx',
      transactionId: id,
      action: 'runWorkflow',
    });
    const hostile = await h.a.json.transactions.createTransaction({ palId: 'wf-hostile' });
    expect(
      await h.a.json.transactions.runTransaction({
        transactionId: hostile,
        transactionContent: {},
      }),
    ).toEqual([
      { name: 'palId', value: 'wf-hostile' },
      { name: 'transactionId', value: hostile },
    ]);
    const outcome = await runSessionAction(
      h.domain,
      { enterpriseId: h.a.enterpriseId, palId: 'wf-hostile', transactionId: hostile, sso },
      'show',
    );
    expect(outcome.messages.map((m) => JSON.parse(m.message) as unknown)).toEqual([
      { palId: 'wf-hostile', sso },
    ]);
  });
});
