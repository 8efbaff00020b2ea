// The demo set-up that `npm start` runs on every start: the enterprise "demo", the example pals of
// the repository, and an API client whose password is derived from PAL_SECRET_KEY, so the same
// credentials can be printed on every start without being stored in clear (except in
// DATA_DIR/demo-client.txt, readable by its owner only, for convenience).
import { createHmac } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findSso, insertAccount, insertSso } from '../storage/ssos.js';
import { upsertClientWithSecret } from './clients.js';
import type { DomainContext } from './context.js';
import { ensureEnterprise, type Enterprise } from './enterprises.js';
import { PAL_MANIFEST_FILE } from './pal-manifest.js';
import { deployPal, type DeployResult } from './pals.js';
import { emailKey } from './validate.js';
import { makeFolder } from '../folders.js';

export const DEMO_ENTERPRISE = 'demo';
export const DEMO_USERNAME = 'demo';
export const DEMO_CREDENTIALS_FILE = 'demo-client.txt';

/**
 * examples/pals of the repository. This module sits at apps/server/{src,dist}/domain/, four
 * levels below the root, both as TypeScript source and as built JavaScript.
 */
export const EXAMPLE_PALS_DIR = fileURLToPath(
  new URL('../../../../examples/pals/', import.meta.url),
);

/**
 * The people of the demo enterprise, with fixed SSO ids: the employee a README entry URL is
 * for, and the manager whom examples/pals/expense-approval mails a claim to approve (its workflow
 * names this id, as nothing in a browser's claim names an approver).
 */
export const DEMO_PEOPLE = {
  employee: {
    sso: 'demo-employee-erika-sso',
    firstName: 'Erika',
    lastName: 'Employee',
    email: 'erika.employee@demo.example',
  },
  manager: {
    sso: 'demo-manager-morgan-sso',
    firstName: 'Morgan',
    lastName: 'Manager',
    email: 'morgan.manager@demo.example',
  },
} as const;

/**
 * Creates the demo people in the enterprise, ACTIVE, unless their SSO exists already (or their
 * address belongs to another account, which is then left alone).
 */
export async function ensureDemoPeople(ctx: DomainContext, enterpriseId: string): Promise<void> {
  const now = ctx.now().toISOString();
  for (const person of Object.values(DEMO_PEOPLE)) {
    await ctx.db.transaction().execute(async (trx) => {
      if (await findSso(trx, enterpriseId, person.sso)) return;
      const accountId = `${person.sso}-account`;
      const { firstName, lastName, email } = person;
      const fields = { firstName, lastName, email, emailKey: emailKey(email) };
      if (!(await insertAccount(trx, { ...fields, id: accountId, now }))) return;
      await insertSso(trx, { id: person.sso, enterpriseId, accountId, status: 'ACTIVE', now });
    });
  }
}

/** The demo client's password: HMAC-SHA-256(PAL_SECRET_KEY, "demo-client"), base64url. */
export function demoPassword(secretKey: Buffer): string {
  return createHmac('sha256', secretKey).update('demo-client').digest('base64url');
}

export interface DemoSetup {
  enterprise: Enterprise;
  username: string;
  password: string;
  /** The example pals, each deployed (changed=true) or already current (changed=false). */
  pals: DeployResult[];
  /** DATA_DIR/demo-client.txt, holding `username:password`. */
  credentialsFile: string;
}

/**
 * Creates what is missing of the demo: the enterprise, the example pals (a pal whose package has
 * not changed keeps its version), and the API client with its derived password. Safe to run on
 * every start.
 */
export async function ensureDemo(
  ctx: DomainContext,
  options: { examplesDir?: string } = {},
): Promise<DemoSetup> {
  const { config } = ctx;
  const { enterprise } = await ensureEnterprise(ctx, DEMO_ENTERPRISE);
  const examplesDir = options.examplesDir ?? EXAMPLE_PALS_DIR;
  const folders = existsSync(examplesDir)
    ? readdirSync(examplesDir, { withFileTypes: true })
        .filter(
          (entry) =>
            entry.isDirectory() && existsSync(join(examplesDir, entry.name, PAL_MANIFEST_FILE)),
        )
        .map((entry) => join(examplesDir, entry.name))
        .sort()
    : [];
  const pals: DeployResult[] = [];
  for (const folder of folders) {
    const deployed = await deployPal(ctx, enterprise.id, folder, { skipIfUnchanged: true });
    for (const warning of deployed.warnings ?? []) ctx.log.warn(warning);
    pals.push(deployed);
  }

  await ensureDemoPeople(ctx, enterprise.id);

  const password = demoPassword(config.secretKey);
  await upsertClientWithSecret(ctx, enterprise.id, DEMO_USERNAME, password);
  makeFolder(config.dataDir);
  const credentialsFile = join(config.dataDir, DEMO_CREDENTIALS_FILE);
  writeFileSync(credentialsFile, `${DEMO_USERNAME}:${password}\n`, { mode: 0o600 });
  return { enterprise, username: DEMO_USERNAME, password, pals, credentialsFile };
}
