// The searches of docs/decisions.md ("Searches") over real HTTP: P1 and C1 (PalSearch) and T2
// (TransactionSearch), every filter alone and combined: "contains" ignoring case vs exact*
// (case-sensitive equality), matchAny, includeTest, includeInstalled,
// palId/status/systemStatus/webServiceStatus exact, sso, startRecord paging (PAGE_SIZE is small
// here) including past the end, X-Total-Count, and 400 for bad header values. Explicit cases first;
// then a sweep of filter combinations against a small model of the rules, page by page.
import type { PalInfo, TransactionInfo } from '@pal-workflow/client';
import { openApiDocument } from '@pal-workflow/server-skeleton';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPalPackage } from '../src/domain/pal-manifest.js';
import { deployPalPackage } from '../src/domain/pals.js';
import { assignRole } from '../src/domain/transaction-roles.js';
import {
  moveWebServiceStatus,
  setTransactionStatus,
  transitionTransaction,
} from '../src/domain/transactions.js';
import { expectError, PALS_A, startHarness, type Harness, type Manifest } from './harness.js';

const PAGE_SIZE = 3;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { PAGE_SIZE: String(PAGE_SIZE) } });
});
afterAll(() => h?.close());

type Headers = Record<string, string>;

/** One page of a search through fetch in JSON: the items and X-Total-Count. */
async function page<T>(path: string, headers: Headers): Promise<{ items: T[]; total: number }> {
  const answer = await h.http(path, { accept: 'application/json', headers });
  expect(answer.status, `${path} ${JSON.stringify(headers)}: ${answer.text}`).toBe(200);
  const total = answer.headers.get('X-Total-Count');
  expect(total, 'X-Total-Count').toMatch(/^\d+$/);
  const items = JSON.parse(answer.text) as T[];
  expect(items.length).toBeLessThanOrEqual(PAGE_SIZE);
  return { items, total: Number(total) };
}

/**
 * Every match, page by page with startRecord: each page is full until the last, X-Total-Count is
 * the same on every page, and a page past the end is empty (with the same count).
 */
async function all<T extends { id?: string }>(
  path: string,
  headers: Headers = {},
): Promise<string[]> {
  const first = await page<T>(path, headers);
  const ids = first.items.map((x) => x.id!);
  for (let start = PAGE_SIZE; start < first.total; start += PAGE_SIZE) {
    const next = await page<T>(path, { ...headers, startRecord: String(start) });
    expect(next.total).toBe(first.total);
    expect(next.items.length).toBe(Math.min(PAGE_SIZE, first.total - start));
    ids.push(...next.items.map((x) => x.id!));
  }
  expect(ids.length).toBe(first.total);
  const past = await page<T>(path, { ...headers, startRecord: String(first.total + PAGE_SIZE) });
  expect(past).toEqual({ items: [], total: first.total });
  return ids;
}

const P1 = '/services/rest/pals';
const C1 = '/services/rest/console/consolePalList';
const T2 = '/services/rest/transactions';
const pals = (headers?: Headers) => all<PalInfo>(P1, headers);
const consolePals = (headers?: Headers) => all<PalInfo>(C1, headers);
const transactions = (headers?: Headers) => all<TransactionInfo>(T2, headers);
const sorted = (ids: string[]) => [...ids].sort();

// ------------------------------------------------ a model of docs/decisions.md "Searches" for pals

interface PalSearch {
  name?: string;
  description?: string;
  category?: string;
  publisher?: string;
  exactName?: boolean;
  exactDescription?: boolean;
  exactCategory?: boolean;
  exactPublisher?: boolean;
  includeTest?: boolean;
  includeInstalled?: boolean;
  matchAny?: boolean;
}

function modelPals(search: PalSearch, consoleOnly: boolean): string[] {
  const fields = ['name', 'description', 'category', 'publisher'] as const;
  const exactFlag = {
    name: 'exactName',
    description: 'exactDescription',
    category: 'exactCategory',
    publisher: 'exactPublisher',
  } as const;
  return PALS_A.filter((m: Manifest) => {
    if (m.test && !search.includeTest) return false;
    if (m.installed && !search.includeInstalled) return false;
    if (consoleOnly && !m.modes?.console) return false;
    const tests = fields
      .filter((f) => search[f] !== undefined && search[f] !== '')
      .map((f) => {
        const value = m[f];
        if (value === undefined) return false;
        return search[exactFlag[f]]
          ? value === search[f]
          : value.toLowerCase().includes(search[f]!.toLowerCase());
      });
    if (tests.length === 0) return true;
    return search.matchAny ? tests.some(Boolean) : tests.every(Boolean);
  })
    .map((m) => m.id)
    .sort();
}

const asHeaders = (search: object): Headers =>
  Object.fromEntries(
    Object.entries(search)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, String(v)]),
  );

describe('P1 and C1 (PalSearch headers)', () => {
  it('without headers: test and installed pals hidden, ordered by id, paged by PAGE_SIZE', async () => {
    const visible = PALS_A.filter((m) => !m.test && !m.installed).map((m) => m.id);
    expect(visible.length).toBeGreaterThan(PAGE_SIZE);
    expect(await pals()).toEqual(sorted(visible));
    expect(await consolePals()).toEqual(['leave-request', 'team-directory']);
  });

  it('includeTest and includeInstalled each add their pals, together all of them', async () => {
    expect(await pals({ includeTest: 'true' })).toEqual(
      sorted([
        'bare',
        'expense-approval',
        'expense-sandbox',
        'leave-request',
        'team-directory',
        'travel-expenses',
      ]),
    );
    expect(await pals({ includeInstalled: 'true' })).toEqual(
      sorted([
        'bare',
        'expense-approval',
        'it-tools',
        'leave-request',
        'team-directory',
        'travel-expenses',
      ]),
    );
    expect(await pals({ includeTest: 'true', includeInstalled: 'true' })).toEqual(
      sorted(PALS_A.map((m) => m.id)),
    );
    expect(await pals({ includeTest: 'false', includeInstalled: '0' })).toEqual(await pals());
    expect(await consolePals({ includeTest: '1' })).toEqual([
      'expense-sandbox',
      'leave-request',
      'team-directory',
    ]);
    expect(await consolePals({ includeInstalled: 'TRUE' })).toEqual([
      'it-tools',
      'leave-request',
      'team-directory',
    ]);
    expect(await consolePals({ includeTest: 'true', includeInstalled: 'true' })).toEqual([
      'expense-sandbox',
      'it-tools',
      'leave-request',
      'legacy-expenses',
      'team-directory',
    ]);
  });

  it('name: contains ignoring case; with exactName, case-sensitive equality', async () => {
    expect(await pals({ name: 'expense' })).toEqual(['expense-approval', 'travel-expenses']);
    expect(await pals({ name: 'EXPENSE' })).toEqual(['expense-approval', 'travel-expenses']);
    expect(await pals({ name: 'xPeNs', includeTest: 'true' })).toEqual([
      'expense-approval',
      'expense-sandbox',
      'travel-expenses',
    ]);
    expect(await pals({ name: 'Expense Approval', exactName: 'true' })).toEqual([
      'expense-approval',
    ]);
    expect(await pals({ name: 'expense approval', exactName: 'true' })).toEqual([]);
    expect(await pals({ name: 'Expense', exactName: 'true' })).toEqual([]);
    // exactName without a name filters nothing; a name that is empty is no filter.
    expect(await pals({ exactName: 'true' })).toEqual(await pals());
    expect(await pals({ name: '' })).toEqual(await pals());
    // The other enterprise's pal names are not searched.
    expect(await pals({ name: 'globex' })).toEqual([]);
  });

  it('description, category and publisher: contains vs exact, each alone', async () => {
    expect(await pals({ description: 'EXPENSE' })).toEqual(['expense-approval', 'team-directory']);
    expect(await pals({ description: 'expense', includeInstalled: 'true' })).toEqual([
      'expense-approval',
      'it-tools',
      'team-directory',
    ]);
    expect(
      await pals({ description: 'Approve travel and purchase expenses', exactDescription: 'true' }),
    ).toEqual(['expense-approval']);
    expect(
      await pals({ description: 'approve travel and purchase expenses', exactDescription: 'true' }),
    ).toEqual([]);

    expect(await pals({ category: 'FIN' })).toEqual(['expense-approval', 'travel-expenses']);
    expect(await pals({ category: 'finance', exactCategory: 'true' })).toEqual(['travel-expenses']);
    expect(await pals({ category: 'Finance', exactCategory: 'true' })).toEqual([
      'expense-approval',
    ]);

    expect(await pals({ publisher: 'acme' })).toEqual([
      'expense-approval',
      'leave-request',
      'team-directory',
    ]);
    expect(await pals({ publisher: 'Acme People', exactPublisher: 'true' })).toEqual([
      'leave-request',
      'team-directory',
    ]);
    expect(await pals({ publisher: 'acme people', exactPublisher: 'true' })).toEqual([]);
  });

  it('LIKE wildcards in a filter match literally', async () => {
    expect(await pals({ description: '100%' })).toEqual(['travel-expenses']);
    expect(await pals({ description: '%' })).toEqual(['travel-expenses']);
    expect(await pals({ description: 'k_l' })).toEqual(['leave-request']);
    expect(await pals({ description: '_' })).toEqual(['leave-request']);
    expect(await pals({ description: 'sick-leave' })).toEqual([]);
    expect(await pals({ name: '\\' })).toEqual([]);
  });

  it('string filters AND; matchAny ORs them', async () => {
    expect(await pals({ name: 'travel', category: 'HR' })).toEqual([]);
    expect(await pals({ name: 'travel', category: 'HR', matchAny: 'true' })).toEqual([
      'leave-request',
      'travel-expenses',
    ]);
    expect(await pals({ name: 'expense', publisher: 'acme' })).toEqual(['expense-approval']);
    expect(await pals({ name: 'expense', publisher: 'acme', matchAny: 'true' })).toEqual([
      'expense-approval',
      'leave-request',
      'team-directory',
      'travel-expenses',
    ]);
    // With exact flags inside the OR.
    expect(
      await pals({
        name: 'Leave Request',
        exactName: 'true',
        publisher: 'globex',
        matchAny: 'true',
      }),
    ).toEqual(['leave-request', 'travel-expenses']);
    // matchAny with one filter, or none, is the same as without.
    expect(await pals({ category: 'people', matchAny: 'true' })).toEqual(['team-directory']);
    expect(await pals({ matchAny: 'true' })).toEqual(await pals());
    // matchAny never brings back hidden pals.
    expect(await pals({ name: 'tools', category: 'tools', matchAny: 'true' })).toEqual([]);
    expect(
      await pals({ name: 'tools', category: 'tools', matchAny: 'true', includeInstalled: 'true' }),
    ).toEqual(['it-tools']);
  });

  it('C1 applies the same filters to console-mode pals only', async () => {
    expect(await consolePals({ name: 'expense' })).toEqual([]);
    expect(await consolePals({ description: 'expense' })).toEqual(['team-directory']);
    expect(
      await consolePals({ name: 'expense', includeTest: 'true', includeInstalled: 'true' }),
    ).toEqual(['expense-sandbox', 'legacy-expenses']);
    expect(
      await consolePals({
        publisher: 'Acme People',
        exactPublisher: 'true',
        name: 'leave',
        matchAny: 'false',
      }),
    ).toEqual(['leave-request']);
  });

  it('header names match in any case', async () => {
    expect(await pals({ NAME: 'Expense Approval', EXACTNAME: 'true' })).toEqual([
      'expense-approval',
    ]);
    expect(await pals({ Category: 'hr', IncludeTest: 'true' })).toEqual(['leave-request']);
    expect(await consolePals({ includeinstalled: 'true', PUBLISHER: 'it' })).toEqual(['it-tools']);
  });

  it('startRecord: a 0-based offset; X-Total-Count counts every match; past the end is empty', async () => {
    const everything = sorted(PALS_A.map((m) => m.id));
    const headers = { includeTest: 'true', includeInstalled: 'true' };
    for (let start = 0; start <= everything.length + 1; start++) {
      const got = await page<PalInfo>(P1, { ...headers, startRecord: String(start) });
      expect(got.total).toBe(everything.length);
      expect(got.items.map((p) => p.id)).toEqual(everything.slice(start, start + PAGE_SIZE));
    }
    expect(await page<PalInfo>(P1, { ...headers, startRecord: '2147483647' })).toEqual({
      items: [],
      total: everything.length,
    });
    // The generated client in XML reads the same header.
    const xml = await h.a.xml.pals.searchPalsRaw({
      includeTest: true,
      includeInstalled: true,
      startRecord: 2,
    });
    expect(xml.raw.headers.get('X-Total-Count')).toBe(String(everything.length));
    expect((await xml.value()).map((p) => p.id)).toEqual(everything.slice(2, 2 + PAGE_SIZE));
    const c1 = await h.a.xml.console.listConsolePalsRaw({ startRecord: 1 });
    expect(c1.raw.headers.get('X-Total-Count')).toBe('2');
    expect((await c1.value()).map((p) => p.id)).toEqual(['team-directory']);
  });

  it('agrees with the model over a sweep of combinations, for P1 and C1', async () => {
    const names = [undefined, 'expense', 'Expense Approval', 'EXPENSES'];
    const categories = [undefined, 'finance', 'Finance', 'o'];
    const publishers = [undefined, 'acme'];
    let checked = 0;
    for (const name of names)
      for (const category of categories)
        for (const publisher of publishers)
          for (const exactName of [false, true])
            for (const exactCategory of [false, true])
              for (const matchAny of [false, true])
                for (const hidden of [0, 1, 2, 3]) {
                  if (exactName && name === undefined) continue;
                  if (exactCategory && category === undefined) continue;
                  const search: PalSearch = {
                    name,
                    category,
                    publisher,
                    exactName,
                    exactCategory,
                    matchAny,
                    includeTest: (hidden & 1) === 1,
                    includeInstalled: (hidden & 2) === 2,
                  };
                  for (const consoleOnly of [false, true]) {
                    const got = await page<PalInfo>(consoleOnly ? C1 : P1, asHeaders(search));
                    const expected = modelPals(search, consoleOnly);
                    expect(got.total, JSON.stringify({ consoleOnly, ...search })).toBe(
                      expected.length,
                    );
                    expect(got.items.map((p) => p.id)).toEqual(expected.slice(0, PAGE_SIZE));
                    checked++;
                  }
                }
    expect(checked).toBeGreaterThan(500);
  });

  it('answers 400 for bad header values, naming the header', async () => {
    for (const path of [P1, C1]) {
      for (const [header, value] of [
        ['startRecord', 'abc'],
        ['startRecord', '-1'],
        ['startRecord', '1.5'],
        ['startRecord', '99999999999'],
        ['exactName', 'maybe'],
        ['exactDescription', 'yes'],
        ['exactCategory', '2'],
        ['exactPublisher', 'on'],
        ['includeTest', 'yes'],
        ['includeInstalled', 'no'],
        ['matchAny', 'any'],
      ] as const) {
        const messages = expectError(
          await h.http(path, { headers: { [header]: value } }),
          400,
          'INVALID_ARGUMENT',
        );
        expect(messages.join(' '), `${path} ${header}: ${value}`).toContain(header);
      }
      const long = expectError(
        await h.http(path, { accept: 'application/json', headers: { name: 'x'.repeat(1001) } }),
        400,
        'INVALID_ARGUMENT',
        'json',
      );
      expect(long.join(' ')).toContain('name');
      expectError(
        await h.http(path, { headers: { startRecord: ['1', '2'].join(', ') } }),
        400,
        'INVALID_ARGUMENT',
      );
    }
  });
});

describe('beyond ASCII', () => {
  it('"contains" ignores case beyond ASCII in P1 and T2 (header values are Latin-1); exact does not', async () => {
    // In the second enterprise, so the first one's expectations above stay as they are.
    await deployPalPackage(
      h.domain,
      h.b.enterpriseId,
      await buildPalPackage(
        {
          id: 'aerzte',
          name: 'Ärzte-Überweisung',
          category: 'Gesundheit',
          modes: { transaction: true },
        },
        {},
      ),
    );
    const search = (headers: Headers) =>
      h.http(P1, { auth: h.b, accept: 'application/json', headers });
    const ids = async (headers: Headers) =>
      (JSON.parse((await search(headers)).text) as PalInfo[]).map((p) => p.id);
    expect(await ids({ name: 'ÄRZTE' })).toEqual(['aerzte']);
    expect(await ids({ name: 'überw' })).toEqual(['aerzte']);
    expect(await ids({ name: 'Ärzte-Überweisung', exactName: 'true' })).toEqual(['aerzte']);
    expect(await ids({ name: 'ärzte-überweisung', exactName: 'true' })).toEqual([]);
    const tx = await h.b.json.transactions.createTransaction({ palId: 'aerzte' });
    for (const name of ['ÜBERWEISUNG', 'Üb', 'ÄRZTE-Ü']) {
      const answer = await h.http(T2, { auth: h.b, accept: 'application/json', headers: { name } });
      expect(
        (JSON.parse(answer.text) as TransactionInfo[]).map((t) => t.id),
        name,
      ).toEqual([tx]);
    }
  });
});

describe('header values are UTF-8 (docs/decisions.md, "Searches")', () => {
  // Beyond Latin-1, in the second enterprise. A transaction's name is its pal's.
  let tx: string;
  beforeAll(async () => {
    await deployPalPackage(
      h.domain,
      h.b.enterpriseId,
      await buildPalPackage(
        { id: 'lodz', name: 'Łódź Übergabe', modes: { transaction: true } },
        {},
      ),
    );
    tx = await h.b.json.transactions.createTransaction({ palId: 'lodz' });
  });
  /** What curl sends: the text's UTF-8 bytes as they are (node:http writes a string as Latin-1). */
  const rawUtf8 = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
  const found = async (path: string, headers: Headers) => {
    const answer = await h.fromAddress('127.0.0.1', path, {
      auth: h.b,
      accept: 'application/json',
      headers,
    });
    expect(answer.status, answer.text).toBe(200);
    return (JSON.parse(answer.text) as { id: string }[]).map((x) => x.id);
  };

  it('reads raw UTF-8 bytes as UTF-8, in P1 and T2, contains and exact', async () => {
    expect(await found(P1, { name: rawUtf8('łÓdź') })).toEqual(['lodz']);
    expect(await found(P1, { name: rawUtf8('Łódź Übergabe'), exactName: 'true' })).toEqual([
      'lodz',
    ]);
    expect(await found(T2, { name: rawUtf8('ŁÓDŹ ü') })).toEqual([tx]);
    expect(await found(T2, { name: rawUtf8('Łodz') })).toEqual([]);
  });

  it("decodes RFC 8187's form, and refuses one that does not decode", async () => {
    expect(await found(P1, { name: "UTF-8''%C5%82%C3%B3d%C5%BA" })).toEqual(['lodz']);
    expect(await found(T2, { name: "utf-8'pl'%C5%81%C3%B3d%C5%BA%20%C3%9C" })).toEqual([tx]);
    const broken = await h.http(T2, { auth: h.b, headers: { name: "UTF-8''%C5" } });
    expectError(broken, 400, 'INVALID_ARGUMENT');
    expect(broken.text).toContain('header name');
  });

  it('counts a filter in characters, as the XSD does: 1,000 of them, however many bytes', async () => {
    const answer = (text: string) =>
      h.fromAddress('127.0.0.1', T2, { auth: h.b, headers: { name: rawUtf8(text) } });
    expect((await answer('ż'.repeat(1000))).status).toBe(200);
    expect((await answer('😀'.repeat(1000))).status).toBe(200);
    const over = await answer('ż'.repeat(1001));
    expectError(over, 400, 'INVALID_ARGUMENT');
    expect(over.text).toContain('at most 1000 characters');
  });

  it.each(['json', 'xml'] as const)(
    'the generated client (%s) finds text beyond Latin-1, and keeps spaces at either end',
    async (format) => {
      const client = h.b[format];
      expect((await client.pals.searchPals({ name: 'łódź' })).map((p) => p.id)).toEqual(['lodz']);
      expect(
        (await client.transactions.searchTransactions({ name: 'ź ü' })).map((t) => t.id),
      ).toEqual([tx]);
      expect((await client.pals.searchPals({ name: ' übergabe' })).map((p) => p.id)).toEqual([
        'lodz',
      ]);
      expect(await client.pals.searchPals({ name: 'übergabe ' })).toEqual([]);
      expect(await client.pals.searchPals({ name: "UTF-8''%C5%81" })).toEqual([]);
    },
  );
});

// ------------------------------------------------------------------ T2

describe('T2 (TransactionSearch headers)', () => {
  let tx: Record<'approval1' | 'approval2' | 'travel' | 'leave' | 'sandbox' | 'globex', string>;
  let sso: string;
  let otherSso: string;

  beforeAll(async () => {
    const create = (palId: string, client = h.a.json) =>
      client.transactions.createTransaction({ palId });
    // In creation order, which is T2's order.
    tx = {
      approval1: await create('expense-approval'),
      approval2: await create('expense-approval'),
      travel: await create('travel-expenses'),
      leave: await create('leave-request'),
      sandbox: await create('expense-sandbox'),
      globex: await create('globex-secret', h.b.json),
    };
    const e = h.a.enterpriseId;
    await setTransactionStatus(h.domain, e, tx.approval2, 'APPROVED');
    await transitionTransaction(h.domain, e, tx.travel, 'complete');
    await moveWebServiceStatus(h.domain, e, tx.leave, 'start');
    sso = await h.a.json.enterprise.createSso({
      firstName: 'Sam',
      lastName: 'Search',
      email: 'sam@example.test',
    });
    otherSso = await h.a.json.enterprise.createSso({
      firstName: 'Olga',
      lastName: 'Other',
      email: 'olga@example.test',
    });
    await assignRole(h.domain, e, tx.approval1, sso, 'participant');
    // Two roles on one transaction: still one match.
    await assignRole(h.domain, e, tx.travel, sso, 'owner');
    await assignRole(h.domain, e, tx.travel, sso, 'reviewer');
    await assignRole(h.domain, e, tx.sandbox, sso, 'participant');
    await assignRole(h.domain, e, tx.leave, otherSso, 'participant');
  });

  const ids = (...keys: (keyof typeof tx)[]) => keys.map((k) => tx[k]);

  it('without headers: every non-test transaction of the enterprise, in creation order', async () => {
    expect(await transactions()).toEqual(ids('approval1', 'approval2', 'travel', 'leave'));
    expect(await transactions({ includeTest: 'true' })).toEqual(
      ids('approval1', 'approval2', 'travel', 'leave', 'sandbox'),
    );
    expect(await transactions({ includeTest: 'false' })).toEqual(
      ids('approval1', 'approval2', 'travel', 'leave'),
    );
  });

  it('name: contains ignoring case (long and short needles), or exact', async () => {
    expect(await transactions({ name: 'expense' })).toEqual(
      ids('approval1', 'approval2', 'travel'),
    );
    expect(await transactions({ name: 'EXPENSES' })).toEqual(ids('travel'));
    expect(await transactions({ name: 'nse app' })).toEqual(ids('approval1', 'approval2'));
    // Shorter than a trigram.
    expect(await transactions({ name: 'Ex' })).toEqual(ids('approval1', 'approval2', 'travel'));
    expect(await transactions({ name: 'q' })).toEqual(ids('leave'));
    expect(await transactions({ name: 'expense', includeTest: 'true' })).toEqual(
      ids('approval1', 'approval2', 'travel', 'sandbox'),
    );
    expect(await transactions({ name: 'Expense Approval', exactName: 'true' })).toEqual(
      ids('approval1', 'approval2'),
    );
    expect(await transactions({ name: 'expense approval', exactName: 'true' })).toEqual([]);
    expect(await transactions({ name: 'Expense', exactName: 'true' })).toEqual([]);
    // Characters with a meaning to the full-text index or to LIKE are literal.
    for (const needle of ['"', 'nse"', 'exp*', 'expense OR leave', 'NEAR(a b)', '%', '_', 'e%e'])
      expect(await transactions({ name: needle }), needle).toEqual([]);
    expect(await transactions({ name: 'globex' })).toEqual([]);
  });

  it('description and category: contains vs exact', async () => {
    expect(await transactions({ description: 'EXPENSES' })).toEqual(ids('approval1', 'approval2'));
    expect(await transactions({ description: '100%' })).toEqual(ids('travel'));
    expect(await transactions({ description: 'k_l' })).toEqual(ids('leave'));
    expect(
      await transactions({
        description: 'Request holidays or sick_leave',
        exactDescription: 'true',
      }),
    ).toEqual(ids('leave'));
    expect(
      await transactions({
        description: 'request holidays or sick_leave',
        exactDescription: 'true',
      }),
    ).toEqual([]);
    expect(await transactions({ category: 'fin' })).toEqual(
      ids('approval1', 'approval2', 'travel'),
    );
    expect(await transactions({ category: 'finance', exactCategory: 'true' })).toEqual(
      ids('travel'),
    );
    expect(await transactions({ category: 'Finance', exactCategory: 'true' })).toEqual(
      ids('approval1', 'approval2'),
    );
    expect(
      await transactions({ category: 'Finance', exactCategory: 'true', includeTest: 'true' }),
    ).toEqual(ids('approval1', 'approval2', 'sandbox'));
  });

  it('status, systemStatus, webServiceStatus and palId: exact', async () => {
    expect(await transactions({ status: 'APPROVED' })).toEqual(ids('approval2'));
    expect(await transactions({ status: 'approved' })).toEqual([]);
    expect(await transactions({ status: 'APPROV' })).toEqual([]);
    expect(await transactions({ status: 'NEW' })).toEqual(ids('approval1', 'travel', 'leave'));
    expect(await transactions({ systemStatus: 'COMPLETED' })).toEqual(ids('travel'));
    expect(await transactions({ systemStatus: 'OPEN' })).toEqual(
      ids('approval1', 'approval2', 'leave'),
    );
    expect(await transactions({ systemStatus: 'open' })).toEqual([]);
    expect(await transactions({ webServiceStatus: 'RUNNING' })).toEqual(ids('leave'));
    expect(await transactions({ webServiceStatus: 'IDLE', includeTest: 'true' })).toEqual(
      ids('approval1', 'approval2', 'travel', 'sandbox'),
    );
    expect(await transactions({ palId: 'expense-approval' })).toEqual(
      ids('approval1', 'approval2'),
    );
    expect(await transactions({ palId: 'expense' })).toEqual([]);
    expect(await transactions({ palId: 'EXPENSE-APPROVAL' })).toEqual([]);
    expect(await transactions({ palId: 'expense-sandbox' })).toEqual([]);
    expect(await transactions({ palId: 'expense-sandbox', includeTest: 'true' })).toEqual(
      ids('sandbox'),
    );
    // Another enterprise's pal: nothing, and nothing of its transactions.
    expect(await transactions({ palId: 'globex-secret' })).toEqual([]);
  });

  it('sso: the transactions on which that SSO holds a role, each once', async () => {
    expect(await transactions({ sso })).toEqual(ids('approval1', 'travel'));
    expect(await transactions({ sso, includeTest: 'true' })).toEqual(
      ids('approval1', 'travel', 'sandbox'),
    );
    expect(await transactions({ sso: otherSso })).toEqual(ids('leave'));
    expect(await transactions({ sso: 'AAAAAAAAAAAAAAAAAAAAAA' })).toEqual([]);
    // Through the generated client in both formats.
    for (const client of [h.a.json, h.a.xml]) {
      const found = await client.transactions.searchTransactionsRaw({ sso });
      expect(found.raw.headers.get('X-Total-Count')).toBe('2');
      expect((await found.value()).map((t) => t.id)).toEqual(ids('approval1', 'travel'));
    }
  });

  it('filters combine with AND', async () => {
    expect(await transactions({ name: 'expense', status: 'NEW' })).toEqual(
      ids('approval1', 'travel'),
    );
    expect(await transactions({ name: 'expense', palId: 'travel-expenses' })).toEqual(
      ids('travel'),
    );
    expect(await transactions({ name: 'expense', systemStatus: 'OPEN', sso })).toEqual(
      ids('approval1'),
    );
    expect(
      await transactions({ category: 'finance', exactCategory: 'true', systemStatus: 'OPEN' }),
    ).toEqual([]);
    expect(
      await transactions({
        description: 'expenses',
        status: 'APPROVED',
        webServiceStatus: 'IDLE',
        palId: 'expense-approval',
      }),
    ).toEqual(ids('approval2'));
    expect(
      await transactions({ sso, palId: 'expense-sandbox', includeTest: 'true', name: 'sandbox' }),
    ).toEqual(ids('sandbox'));
    // matchAny is no TransactionSearch field: the filters still AND.
    expect(await transactions({ name: 'expense', category: 'hr', matchAny: 'true' })).toEqual([]);
  });

  it('startRecord pages in creation order; past the end is empty with the full count', async () => {
    const everything = ids('approval1', 'approval2', 'travel', 'leave', 'sandbox');
    for (let start = 0; start <= everything.length + 1; start++) {
      const got = await page<TransactionInfo>(T2, {
        includeTest: 'true',
        startRecord: String(start),
      });
      expect(got.total).toBe(everything.length);
      expect(got.items.map((t) => t.id)).toEqual(everything.slice(start, start + PAGE_SIZE));
    }
    const named = await page<TransactionInfo>(T2, { name: 'expense', startRecord: '2' });
    expect(named).toEqual({ items: [expect.objectContaining({ id: tx.travel })], total: 3 });
    const past = await h.a.xml.transactions.searchTransactionsRaw({ startRecord: 100 });
    expect(past.raw.headers.get('X-Total-Count')).toBe('4');
    expect(await past.value()).toEqual([]);
  });

  it('lists each transaction as T10 shows it', async () => {
    const listed = await h.a.json.transactions.searchTransactions({
      includeTest: true,
      startRecord: 0,
    });
    for (const info of listed)
      expect(info).toEqual(await h.a.json.transactions.getTransaction({ id: info.id! }));
    const travel = listed.find((t) => t.id === tx.travel)!;
    expect(travel).toMatchObject({
      status: 'NEW',
      webServiceStatus: 'IDLE',
      name: 'Travel Expenses',
    });
    expect(Date.parse(travel.modifiedDate!)).toBeGreaterThanOrEqual(Date.parse(travel.createDate!));
  });

  it('answers 400 for bad header values, naming the header', async () => {
    for (const [header, value] of [
      ['startRecord', 'abc'],
      ['startRecord', '-1'],
      ['startRecord', ''.padEnd(12, '9')],
      ['exactName', 'maybe'],
      ['exactDescription', 'sure'],
      ['exactCategory', 'y'],
      ['includeTest', 'yes'],
    ] as const) {
      const messages = expectError(
        await h.http(T2, { headers: { [header]: value } }),
        400,
        'INVALID_ARGUMENT',
      );
      expect(messages.join(' '), `${header}: ${value}`).toContain(header);
    }
    for (const header of [
      'name',
      'description',
      'category',
      'status',
      'systemStatus',
      'webServiceStatus',
      'palId',
      'sso',
    ]) {
      const messages = expectError(
        await h.http(T2, { headers: { [header]: 'x'.repeat(1001) } }),
        400,
        'INVALID_ARGUMENT',
      );
      expect(messages.join(' ')).toContain(header);
    }
  });
});

describe('T2 counts exactly up to TOTAL_COUNT_CAP, then says the count is a lower bound', () => {
  let capped: Harness;
  beforeAll(async () => {
    capped = await startHarness({ env: { TOTAL_COUNT_CAP: '3', PAGE_SIZE: '2' } });
    for (let i = 0; i < 5; i++)
      await capped.a.json.transactions.createTransaction({ palId: 'expense-approval' });
    await capped.a.json.transactions.createTransaction({ palId: 'leave-request' });
  });
  afterAll(() => capped?.close());

  const search = async (headers: Headers) => {
    const answer = await capped.http(T2, { accept: 'application/json', headers });
    expect(answer.status, answer.text).toBe(200);
    return {
      names: (JSON.parse(answer.text) as TransactionInfo[]).map((t) => t.name),
      total: answer.headers.get('X-Total-Count'),
      relation: answer.headers.get('X-Total-Count-Relation'),
    };
  };

  it('past the cap: X-Total-Count is the cap and X-Total-Count-Relation is gte; pages go on', async () => {
    expect(await search({})).toEqual({
      names: ['Expense Approval', 'Expense Approval'],
      total: '3',
      relation: 'gte',
    });
    expect(await search({ name: 'expense' })).toMatchObject({ total: '3', relation: 'gte' });
    // Paging is not capped: the last of the six is still there.
    expect(await search({ startRecord: '4' })).toEqual({
      names: ['Expense Approval', 'Leave Request'],
      total: '3',
      relation: 'gte',
    });
  });

  it('at or under the cap: the exact count, and no relation header', async () => {
    expect(await search({ name: 'leave' })).toEqual({
      names: ['Leave Request'],
      total: '1',
      relation: null,
    });
    await capped.a.json.transactions.createTransaction({ palId: 'leave-request' });
    await capped.a.json.transactions.createTransaction({ palId: 'leave-request' });
    expect(await search({ name: 'leave' })).toMatchObject({ total: '3', relation: null });
  });

  it('declares the header in the OpenAPI document', () => {
    expect(capped.undeclaredStatuses()).toEqual([]);
    const declared = JSON.stringify(openApiDocument.paths['/services/rest/transactions']);
    expect(declared).toContain('X-Total-Count-Relation');
  });
});
