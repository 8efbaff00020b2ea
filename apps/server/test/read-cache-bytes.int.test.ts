// P1 and P2 answer from the read cache, whose values are frozen all the way down, and the routes
// send the bytes such a value was first written as (the skeleton's deepFreeze). Those bytes must
// be what a fresh serialization of the same pals gives, in JSON and in XML (the harness validates
// every XML answer against the XSDs), before and after a write; and nothing can change a cached
// value behind them: the change throws.
import { isImmutable } from '@pal-workflow/server-skeleton';
import type { PalInfo } from '@pal-workflow/types';
import { encodeJson, encodeXml } from '@pal-workflow/validators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPal, searchPals } from '../src/domain/pals.js';
import { deployManifest, palSearch } from './helpers.js';
import { manifestOf, startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.close());

const P2 = '/services/rest/pals/expense-approval';
const P1 = '/services/rest/pals';
const FORMATS = [
  ['application/json', 'json'],
  ['application/xml', 'xml'],
] as const;

/** The pals as the database holds them now, serialized afresh: a copy that is not frozen. */
async function fresh(format: 'json' | 'xml', path: string): Promise<string> {
  const enterpriseId = h.a.enterpriseId;
  if (path === P2) {
    const pal = structuredClone(await getPal(h.domain, enterpriseId, 'expense-approval'));
    expect(isImmutable(pal)).toBe(false);
    return format === 'json' ? encodeJson('palInfo', pal) : encodeXml('palInfo', pal);
  }
  const { items } = structuredClone(await searchPals(h.domain, enterpriseId, palSearch()));
  return format === 'json' ? encodeJson('palInfoList', items) : encodeXml('palInfoList', items);
}

describe('cached reads sent as the bytes they were first written as', () => {
  it('are the bytes of a fresh serialization, in JSON and XML, and follow a write', async () => {
    const validated = h.xmlValidated();
    for (const name of ['Expense Approval', 'Expenses, approved & <checked>'])
      for (const path of [P2, P1])
        for (const [accept, format] of FORMATS) {
          const first = await h.http(path, { accept });
          const again = await h.http(path, { accept });
          expect(first.status).toBe(200);
          expect(first.text).toContain(format === 'json' ? `"${name}"` : 'Expense');
          expect(again.text).toBe(first.text);
          expect(again.text).toBe(await fresh(format, path));
          // After the write below, the next round must show the new name.
          if (path === P1 && format === 'xml' && name === 'Expense Approval')
            await deployManifest(h.domain, h.a.enterpriseId, {
              ...manifestOf('expense-approval'),
              name: 'Expenses, approved & <checked>',
            });
        }
    expect(h.xmlValidated() - validated).toBe(8);
  });

  it('cannot be changed behind the bytes: a change throws', async () => {
    const pal = await getPal(h.domain, h.a.enterpriseId, 'expense-approval');
    const page = await searchPals(h.domain, h.a.enterpriseId, palSearch());
    expect(isImmutable(pal)).toBe(true);
    expect(isImmutable(page.items)).toBe(true);
    const attempts: (() => void)[] = [
      () => ((pal as { name?: string }).name = 'Changed'),
      () => delete (pal as { description?: string }).description,
      () => (page.items as PalInfo[]).push({ ...pal, id: 'added' }),
      () => ((page.items[0] as { name?: string }).name = 'Changed'),
      () => ((page as { total: number }).total = 99),
    ];
    for (const attempt of attempts) expect(attempt).toThrow(TypeError);
    for (const [accept, format] of FORMATS) {
      expect((await h.http(P2, { accept })).text).toBe(await fresh(format, P2));
      expect((await h.http(P1, { accept })).text).toBe(await fresh(format, P1));
    }
  });
});
