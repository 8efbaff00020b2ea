// The `pal` CLI end to end: each command runs in its own process (tsx on src/main.ts, the bin) against a
// fresh DATA_DIR, and its --json output is parsed.
import { createServer, type AddressInfo } from 'node:net';
import { mkdirSync, truncateSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { claimFormPdf, encryptedPdf } from './documents.js';
import { ROTATION_TIMEOUT_MS, rotateAndDeleteAgainstAServer } from './client-rotation.js';
import { palWithClosedStdout, runPal as pal, type CliRun } from './pal-process.js';
import { tempDir } from './helpers.js';
import { MIGRATION_NAMES } from './migration-names.js';
import { loadConfig } from '../src/config.js';
import { verifyClient } from '../src/domain/clients.js';
import { openDatabase } from '../src/storage/database.js';

const serverDir = fileURLToPath(new URL('..', import.meta.url));
const examples = resolve(serverDir, '../../examples/pals');

/** The one JSON object a --json command prints, and nothing else. */
function json(run: CliRun): Record<string, unknown> {
  return answered(0, run);
}

/** The one JSON object a --json command prints, and nothing else, exiting with `code`. */
function answered(code: number, run: CliRun): Record<string, unknown> {
  expect(run.stderr).toBe('');
  expect(run.code).toBe(code);
  const lines = run.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  const value = JSON.parse(lines[0]) as unknown;
  expect(value).toBeTypeOf('object');
  expect(Array.isArray(value)).toBe(false);
  return value as Record<string, unknown>;
}

describe('pal CLI on a fresh DATA_DIR', () => {
  const dir = tempDir('pal-cli-');
  const env = { DATA_DIR: join(dir.path, 'data') };
  afterAll(() => dir.remove());

  it('migrate creates and migrates the database, then has nothing to do', async () => {
    expect(json(await pal(env, 'migrate', '--json'))).toEqual({
      applied: MIGRATION_NAMES,
      database: join(env.DATA_DIR, 'pal.sqlite'),
    });
    expect(json(await pal(env, 'migrate', '--json'))).toMatchObject({ applied: [] });
    const text = await pal(env, 'migrate');
    expect(text.stdout).toBe(`The database ${join(env.DATA_DIR, 'pal.sqlite')} is up to date.\n`);
  });

  let acmeId: string;
  it('enterprise create prints {id, name}; a taken name fails with status 1', async () => {
    const created = json(await pal(env, 'enterprise', 'create', 'Acme Corp', '--json'));
    expect(created).toEqual({
      id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      name: 'Acme Corp',
    });
    acmeId = created.id as string;
    const again = await pal(env, 'enterprise', 'create', 'acme corp', '--json');
    expect(again).toMatchObject({ code: 1, stdout: '' });
    expect(again.stderr).toBe('error: enterprise "acme corp" already exists\n');
    const text = await pal(env, 'enterprise', 'create', 'Globex');
    expect(text.stdout).toMatch(/^Created enterprise "Globex" \(id [A-Za-z0-9_-]{22}\)\.\n$/);
  });

  it('client create prints {enterprise, username, password}, and those credentials authenticate', async () => {
    const created = json(await pal(env, 'client', 'create', '--enterprise', 'ACME CORP', '--json'));
    expect(created).toEqual({
      enterprise: 'Acme Corp',
      username: expect.stringMatching(/^acme-corp-/),
      password: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    // The embedded-mode key the CLI generated is the one the server will load.
    const config = loadConfig(env);
    expect(config.secretKeySource).toBe('file');
    const db = openDatabase(config);
    try {
      const verify = (username: string, password: string) =>
        verifyClient({ db, config: config }, username, password);
      expect(await verify(created.username as string, created.password as string)).toMatchObject({
        enterpriseId: acmeId,
      });
      expect(await verify(created.username as string, 'wrong')).toBeNull();
    } finally {
      await db.destroy();
    }
    const named = json(
      await pal(env, 'client', 'create', '--enterprise', 'Globex', '--username', 'erp', '--json'),
    );
    expect(named.username).toBe('erp');
  });

  it('pal deploy prints {id, name}; a redeployment is a new version, not an error', async () => {
    const folder = relative(serverDir, join(examples, 'expense-approval'));
    expect(
      json(await pal(env, 'pal', 'deploy', folder, '--enterprise', 'Acme Corp', '--json')),
    ).toEqual({
      id: 'expense-approval',
      name: 'Expense approval',
    });
    const again = await pal(env, 'pal', 'deploy', folder, '--enterprise', 'Acme Corp');
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      'Deployed pal "expense-approval" (Expense approval) to "Acme Corp" as version 2.\n',
    );
    json(
      await pal(
        env,
        'pal',
        'deploy',
        join(examples, 'team-directory'),
        '--enterprise',
        'Acme Corp',
        '--json',
      ),
    );
  });

  it('pal deploy names the file and the key of a bad manifest', async () => {
    const bad = join(dir.path, 'bad-pal');
    mkdirSync(bad);
    writeFileSync(
      join(bad, 'pal.json'),
      JSON.stringify({ id: 'bad', modes: { console: 'yes' }, colour: 1 }),
    );
    const run = await pal(env, 'pal', 'deploy', bad, '--enterprise', 'Acme Corp', '--json');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(
      `${join(bad, 'pal.json')}: modes.console: expected boolean, got string`,
    );
    expect(run.stderr).toContain(`${join(bad, 'pal.json')}: colour: unknown key`);
    const missing = await pal(
      env,
      'pal',
      'deploy',
      join(dir.path, 'nowhere'),
      '--enterprise',
      'Acme Corp',
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('pal.json: not found');
  });

  it('pal deploy refuses a pal whose modules never run, and warns of one that would answer NO_WORKFLOW', async () => {
    // Before: both deployed without a word, and every T6 answered NO_WORKFLOW.
    json(await pal(env, 'enterprise', 'create', 'Runners', '--json'));
    const never = join(dir.path, 'never-runs');
    mkdirSync(join(never, 'workflows'), { recursive: true });
    /** A transaction-mode pal whose one module, `workflows/main.js`, is named `module`. */
    const writePal = (module: string, source: string) => {
      writeFileSync(
        join(never, 'pal.json'),
        JSON.stringify({
          id: 'never-runs',
          modes: { transaction: true },
          workflows: { [module]: 'workflows/main.js' },
        }),
      );
      writeFileSync(join(never, 'workflows', 'main.js'), source);
    };
    writePal('main', 'export function runWorkflow() {}\n');
    const refused = await pal(env, 'pal', 'deploy', never, '--enterprise', 'Runners');
    expect([refused.code, refused.stdout]).toEqual([1, '']);
    expect(refused.stderr).toMatch(
      new RegExp(
        `^error: ${join(never, 'pal.json')}: workflows: no module the service runs \\("main"\\): it runs "transaction" in a transaction-mode pal`,
      ),
    );
    writePal('transaction', 'export function main() {}\n');
    const warned = await pal(env, 'pal', 'deploy', never, '--enterprise', 'Runners');
    expect(warned.code).toBe(0);
    expect(warned.stderr).toBe(
      `warning: ${join(never, 'pal.json')}: workflows.transaction: exports none of the functions T6, T9 and the entries of its transactions call (runWorkflow, run, enter): only a token's or a mail's action can run it\n`,
    );
    expect(warned.stdout).toBe('Deployed pal "never-runs" to "Runners" as version 1.\n');
  });

  it('pal deploy reads a pal with documents, and names the file and the key of each bad one', async () => {
    const good = join(dir.path, 'claims');
    mkdirSync(join(good, 'documents'), { recursive: true });
    writeFileSync(join(good, 'documents/claim.pdf'), await claimFormPdf());
    writeFileSync(
      join(good, 'pal.json'),
      JSON.stringify({
        id: 'claims',
        name: 'Claims',
        documents: [
          {
            file: 'documents/claim.pdf',
            signatures: [
              {
                id: 'employee',
                role: 'participant',
                page: 2,
                x: 50,
                y: 700,
                customWidth: 200,
                customHeight: 60,
              },
            ],
          },
        ],
      }),
    );
    // An enterprise of its own, so that the pal lists below stay as they are.
    json(await pal(env, 'enterprise', 'create', 'Initech', '--json'));
    expect(
      json(await pal(env, 'pal', 'deploy', good, '--enterprise', 'Initech', '--json')),
    ).toEqual({ id: 'claims', name: 'Claims' });

    const bad = join(dir.path, 'bad-documents');
    mkdirSync(join(bad, 'documents'), { recursive: true });
    writeFileSync(join(bad, 'documents/claim.pdf'), await claimFormPdf());
    writeFileSync(join(bad, 'documents/secret.pdf'), encryptedPdf('encrypted-aes256'));
    writeFileSync(join(bad, 'documents/photo.png'), 'not a picture');
    writeFileSync(join(bad, 'documents/huge.pdf'), '%PDF-1.7\n');
    truncateSync(join(bad, 'documents/huge.pdf'), 200 * 1024 * 1024);
    writeFileSync(
      join(bad, 'pal.json'),
      JSON.stringify({
        id: 'bad-documents',
        documents: [
          {
            file: 'documents/claim.pdf',
            fields: [
              { id: 'amount', page: 1, x: 550, y: 100, width: 100, height: 20 },
              {
                id: 'kind',
                type: 'RADIO',
                page: 4,
                x: 10,
                y: 10,
                width: 50,
                height: 20,
                picklist: 'Travel',
              },
            ],
          },
          { file: 'documents/secret.pdf' },
          { file: 'documents/photo.png' },
          { file: 'documents/huge.pdf' },
        ],
      }),
    );
    const run = await pal(env, 'pal', 'deploy', bad, '--enterprise', 'Acme Corp', '--json');
    expect(run).toMatchObject({ code: 1, stdout: '' });
    const manifest = join(bad, 'pal.json');
    // Every problem, each on its own line, and nothing else (no stack trace).
    expect(run.stderr).toBe(
      [
        `error: ${manifest}: documents[0].fields[0]: field "amount" reaches past the right edge of its page (x 550 + width 100 = 650; page 1 is 612 × 792 points)`,
        `${manifest}: documents[0].fields[1].page: field "kind" is on page 4, but "documents/claim.pdf" has 3 pages`,
        `${manifest}: documents[1].file: file "documents/secret.pdf" is encrypted (password-protected or restricted): deploy a copy saved without encryption`,
        `${manifest}: documents[2].file: file "documents/photo.png" is not a PNG image`,
        `${manifest}: documents[3].file: file "documents/huge.pdf" is 200 MiB; at most 25 MiB (DOCUMENT_MAX_MB)`,
      ].join('\n') + '\n',
    );
  });

  it('pal list prints {pals: [PalInfo…]}, only the enterprise pals', async () => {
    const listed = json(await pal(env, 'pal', 'list', '--enterprise', 'Acme Corp', '--json'));
    expect(listed).toEqual({
      pals: [
        {
          id: 'expense-approval',
          name: 'Expense approval',
          description: expect.stringContaining('fill in the claim'),
          category: 'Finance',
          branchName: 'main',
          createDate: expect.any(String),
          lastModifiedDate: expect.any(String),
          deployed: true,
          modeTransaction: true,
          modeConsole: false,
          modeWeb: true,
          shadow: false,
          shell: false,
        },
        expect.objectContaining({ id: 'team-directory', modeConsole: true }),
      ],
    });
    expect(json(await pal(env, 'pal', 'list', '--enterprise', 'Globex', '--json'))).toEqual({
      pals: [],
    });
    const text = await pal(env, 'pal', 'list', '--enterprise', 'Acme Corp');
    expect(text.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+CATEGORY\s+MODES\s+MODIFIED$/);
    expect(text.stdout).toMatch(/team-directory\s+Team directory\s+People\s+console/);
  });

  it("audit prints the enterprise's records, oldest first: one JSON object per line with --json", async () => {
    const run = await pal(env, 'audit', '--enterprise', 'Acme Corp', '--json');
    expect([run.code, run.stderr]).toEqual([0, '']);
    const records = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    // What the commands above did to Acme Corp, each by the operator who ran them.
    expect(records.map((r) => [r.action, r.target, r.details ?? null])).toEqual([
      ['client.created', expect.stringMatching(/^acme-corp-/), null],
      ['pal.deployed', 'expense-approval', { version: 1 }],
      ['pal.deployed', 'expense-approval', { version: 2 }],
      ['pal.deployed', 'team-directory', { version: 1 }],
    ]);
    for (const record of records) {
      expect(record).toMatchObject({
        enterpriseId: acmeId,
        outcome: 'success',
        actorType: 'operator',
        time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      });
      expect(record).not.toHaveProperty('ip');
    }
    // A reader that stops early (`| head`): the command ends quietly, not with EPIPE's stack.
    const cut = await palWithClosedStdout(env, 'audit', '--enterprise', 'Acme Corp', '--json');
    expect(cut).toEqual({ code: 0, stderr: '' });
    const text = await pal(env, 'audit', '--enterprise', 'Acme Corp', '--since', '1h');
    expect(text.stdout.split('\n')[1]).toMatch(
      /^\d{4}-\d{2}-\d{2}T\S+ {2}pal\.deployed {2}success {2}operator:\S+ {2}pal:expense-approval {2}- {2}- {2}version=1$/,
    );
    const future = await pal(env, 'audit', '--enterprise', 'Acme Corp', '--since', '2999-01-01');
    expect(future.stdout).toBe('No audit records for "Acme Corp".\n');
    const bad = await pal(env, 'audit', '--enterprise', 'Acme Corp', '--since', 'yesterday');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--since: expected an ISO-8601 date or time');
  });

  it('fails with status 1 and one message for an unknown enterprise, a bad setting or bad usage', async () => {
    const unknown = await pal(env, 'pal', 'list', '--enterprise', 'Nobody', '--json');
    expect(unknown).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: enterprise "Nobody" not found\n',
    });
    const badSetting = await pal({ ...env, PAGE_SIZE: '5000' }, 'migrate', '--json');
    expect(badSetting.code).toBe(1);
    expect(badSetting.stderr).toBe(
      'error: bad setting PAGE_SIZE: expected an integer from 1 to 1000, got "5000"\n',
    );
    const mysql = await pal({ ...env, DATABASE_URL: 'mysql://db/pal' }, 'migrate');
    expect(mysql.code).toBe(1);
    expect(mysql.stderr).toBe(
      'error: bad setting DATABASE_URL: expected sqlite:PATH, postgres://… (or unset), got "mysql://db/pal"\n',
    );
    // A host name that resolves to nothing: named as HOST, not as a resolver's ENOTFOUND alone.
    const host = await pal({ ...env, HOST: 'no-such-host.invalid', PORT: '0' }, 'serve');
    expect(host.code).toBe(1);
    expect(host.stderr).toMatch(
      /^error: bad setting HOST: cannot listen on "no-such-host\.invalid": getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid\n$/,
    );
    // A port another program holds: named as PORT.
    const holder = createServer();
    await new Promise<void>((done) => holder.listen(0, '127.0.0.1', done));
    const taken = (holder.address() as AddressInfo).port;
    const busy = await pal({ ...env, HOST: '127.0.0.1', PORT: String(taken) }, 'serve');
    holder.close();
    expect(busy.code).toBe(1);
    expect(busy.stderr).toBe(
      `error: bad setting PORT: cannot listen on port ${taken} of "127.0.0.1": listen EADDRINUSE: address already in use 127.0.0.1:${taken}\n`,
    );
    // A SQLite path that is a folder: one line that names the path.
    const folder = await pal({ ...env, DATABASE_URL: `sqlite:${dir.path}` }, 'migrate');
    expect(folder.code).toBe(1);
    expect(folder.stderr).toBe(
      `error: cannot use the database ${dir.path}: unable to open database file\n`,
    );
    const usage = await pal(env, 'client', 'create');
    expect(usage.code).toBe(1);
    expect(usage.stderr).toContain("required option '--enterprise <name>' not specified");
  });
});

describe('pal client rotate and delete, with a server on the same database', () => {
  const dir = tempDir('pal-cli-rotate-');
  afterAll(() => dir.remove());

  it(
    'rotate: the new password works at once, the old one for the grace period; delete stops the client',
    async () => {
      await rotateAndDeleteAgainstAServer(pal, {
        DATA_DIR: join(dir.path, 'data'),
        PAL_SECRET_KEY: 'ef'.repeat(32),
      });
    },
    ROTATION_TIMEOUT_MS,
  );
});

describe('pal CLI commands that change the database', () => {
  const dir = tempDir('pal-cli-fresh-');
  afterAll(() => dir.remove());

  it('migrate it first, so they work on an empty DATA_DIR', async () => {
    const env = { DATA_DIR: dir.path, PAL_SECRET_KEY: 'ab'.repeat(32) };
    expect(json(await pal(env, 'enterprise', 'create', 'First', '--json')).name).toBe('First');
  });
});

describe('pal run: a workflow of a pal folder, without a server or a database', () => {
  const dir = tempDir('pal-cli-run-');
  afterAll(() => dir.remove());
  const input = (name: string, body: unknown) => {
    const file = join(dir.path, name);
    writeFileSync(file, JSON.stringify(body));
    return file;
  };

  /** A console pal folder whose `console` module is `source`. */
  const consolePal = (id: string, source: string) => {
    const folder = join(dir.path, id);
    mkdirSync(join(folder, 'workflows'), { recursive: true });
    const manifest = {
      id,
      modes: { console: true },
      workflows: { console: 'workflows/console.js' },
    };
    writeFileSync(join(folder, 'pal.json'), JSON.stringify(manifest));
    writeFileSync(join(folder, 'workflows', 'console.js'), source);
    return folder;
  };

  it('answers what T6 would, and what the run would keep', async () => {
    const file = input('submit.json', {
      postData: [
        { name: 'step', value: 'submit' },
        { name: 'amount', value: '120.50' },
        { name: 'description', value: 'Train to Lyon' },
      ],
    });
    const args = ['--module', 'transaction', '--export', 'runWorkflow', '--input', file];
    const result = json(
      await pal({}, 'run', join(examples, 'expense-approval'), ...args, '--json'),
    );
    expect(result).toMatchObject({
      operation: 'T6 runTransactionWorkflow',
      status: 200,
      response: { success: true, palId: 'expense-approval', recordsProcessed: 1 },
      effects: { status: 'SUBMITTED', vars: { amount: '120.50', description: 'Train to Lyon' } },
      logs: ['claim submitted {"amount":"120.50","approver":null}'],
    });
    const text = await pal({}, 'run', join(examples, 'expense-approval'), ...args);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('T6 runTransactionWorkflow: 200');
    expect(text.stdout).toContain('kept when run by the service:');
  });

  it.each([
    ['--memory-mb', '999999999', 'a whole number from 8 to 1024'],
    ['--memory-mb', '0', 'a whole number from 8 to 1024'],
    ['--timeout-ms', '1.5', 'a whole number from 10 to 600000'],
  ])('refuses %s %s as the server refuses its setting', async (option, value, want) => {
    // Before: a run's WASM memory failed to link, and the answer blamed the workflow.
    const folder = join(examples, 'team-directory');
    const run = await pal(
      {},
      'run',
      folder,
      '--module',
      'console',
      '--export',
      'run',
      option,
      value,
    );
    expect([run.code, run.stdout, run.stderr]).toEqual([
      1,
      '',
      `error: ${option}: expected ${want}, got "${value}"\n`,
    ]);
  });

  it('answers a failed C2 run as the service would: 422 with the failure type, and exits 2', async () => {
    const failed = answered(
      2,
      await pal(
        {},
        'run',
        join(examples, 'team-directory'),
        '--module',
        'console',
        '--export',
        'run',
        '--input',
        input('nobody.json', { postData: [{ name: 'q', value: 'zzz' }] }),
        '--json',
      ),
    );
    expect(failed).toMatchObject({
      operation: 'C2 runConsolePal',
      status: 422,
      response: {
        success: false,
        messages: [{ type: 'WORKFLOW_ERROR', message: 'Error: nobody matches "zzz"' }],
      },
    });
  });

  it('exits 2 when the run fails or the server would refuse the input, 3 when the workflow says success: false', async () => {
    // Before: each of these exited 0, and a script could not tell.
    const folder = consolePal(
      'outcomes',
      'export function runWorkflow(input) {\n' +
        '  if (input.values.say === "no") return { success: false, messages: [{ message: "no" }] };\n' +
        '  if (input.values.say === "throw") throw new Error("thrown");\n' +
        '  return { messages: [{ message: "yes" }] };\n' +
        '}\n',
    );
    const run = (exportName: string, body: unknown) =>
      pal(
        {},
        'run',
        folder,
        '--module',
        'console',
        '--export',
        exportName,
        '--input',
        input(`${exportName}-${JSON.stringify(body).length}.json`, body),
        '--json',
      );
    const say = (word: string) => ({ postData: [{ name: 'say', value: word }] });
    expect(answered(0, await run('runWorkflow', say('yes'))).response).toMatchObject({
      success: true,
    });
    expect(answered(3, await run('runWorkflow', say('no'))).response).toMatchObject({
      success: false,
      messages: [{ message: 'no' }],
    });
    expect(answered(2, await run('runWorkflow', say('throw'))).response).toMatchObject({
      success: false,
      messages: [{ type: 'WORKFLOW_ERROR', message: 'Error: thrown' }],
    });
    expect(answered(2, await run('nothing', say('yes'))).response).toMatchObject({
      success: false,
      messages: [{ type: 'NO_WORKFLOW' }],
    });
    // Before: a TypeError of `pal run` itself ("….filter is not a function").
    expect(answered(2, await run('runWorkflow', { postData: 'x' }))).toEqual({
      operation: 'C7 runConsoleWorkflow',
      status: 400,
      response: {
        success: false,
        messages: [
          {
            message: 'consoleContent.postData: Invalid input: expected array, received string',
            type: 'INVALID_ARGUMENT',
          },
        ],
      },
      outcome: 'failed',
      logs: [],
    });
    const text = await pal({}, 'run', folder, '--module', 'console', '--export', 'nothing');
    expect([text.code, text.stderr]).toEqual([2, '']);
    expect(text.stdout).toMatch(/^entry action nothing: 200\n\{\n  "success": false,/);
  });

  it('refuses a C5 input file that is not {text, contentType}: it stands for no request', async () => {
    const folder = consolePal('c5-file', 'export function executeWorkflow() {}\n');
    const run = await pal(
      {},
      'run',
      folder,
      '--module',
      'console',
      '--export',
      'executeWorkflow',
      '--input',
      input('c5-body.json', { body: '<a/>', contentType: 'application/xml' }),
    );
    expect([run.code, run.stdout]).toEqual([1, '']);
    expect(run.stderr).toMatch(
      /^error: \S+c5-body\.json: C5's input is \{"text": the document, "contentType": "application\/json" or "application\/xml"\}: /,
    );
  });

  it("answers what C5 would: the workflow gets the document's text and type, as the service gives them", async () => {
    const folder = consolePal(
      'documents',
      'export function executeWorkflow(input) {\n' +
        '  return { messages: [{ message: input.contentType + " " + input.body, type: "INFO" }] };\n' +
        '}\n',
    );
    const document = input('order.json', { text: '{"order":1}', contentType: 'application/json' });
    const run = json(
      await pal(
        {},
        'run',
        folder,
        '--module',
        'console',
        '--export',
        'executeWorkflow',
        '--input',
        document,
        '--json',
      ),
    );
    expect(run).toMatchObject({
      operation: 'C5 executeConsoleWorkflow',
      status: 200,
      response: {
        success: true,
        palId: 'documents',
        messages: [{ message: 'application/json {"order":1}', type: 'INFO' }],
      },
    });
  });

  it('refuses a module that does not compile, naming the file and line', async () => {
    const folder = consolePal('broken', 'export function run() {\n  return {;\n}\n');
    const run = await pal({}, 'run', folder, '--module', 'console', '--export', 'run');
    expect(run.code).toBe(1);
    // The folder as given, as the manifest's errors name it.
    expect(run.stderr).toMatch(/^error: \S+\/broken\/workflows\/console\.js:2: SyntaxError: /);
    const relativeRun = await pal(
      {},
      'run',
      relative(serverDir, folder),
      '--module',
      'console',
      '--export',
      'run',
    );
    expect(relativeRun.stderr).toMatch(
      new RegExp(`^error: ${relative(serverDir, folder)}/workflows/console\\.js:2: SyntaxError: `),
    );
  });
});
