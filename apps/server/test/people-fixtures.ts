// Fixtures of the people tests (SSOs, invitations, console access, roles): two enterprises, so
// that every test can show another enterprise's SSO reads as missing, and two persons.
import type { Mailer } from '../src/mail/mailer.js';
import { createEnterprise } from '../src/domain/enterprises.js';
import { testContext, type TestContext } from './helpers.js';

export const ALICE = { firstName: 'Alice', lastName: 'Ng', email: 'Alice.Ng@Example.com' };
export const BOB = { firstName: 'Bob', lastName: 'Ray', email: 'bob@example.com' };

/** A fresh test context with the enterprises Acme and Other; close `t` after the test. */
export async function acmeAndOther(
  env: Record<string, string> = {},
  options: { now?: () => Date; mailer?: Mailer } = {},
): Promise<{ t: TestContext; acme: string; other: string }> {
  const t = await testContext(env, options);
  const acme = (await createEnterprise(t.ctx, 'Acme')).id;
  const other = (await createEnterprise(t.ctx, 'Other')).id;
  return { t, acme, other };
}
