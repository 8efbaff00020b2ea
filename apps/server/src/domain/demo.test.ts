import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migratedDatabase, tempDir, testConfig } from '../../test/helpers.js';
import type { Config } from '../config.js';
import type { Db } from '../storage/database.js';
import { verifyClient } from './clients.js';
import { createWorkflowContext, type WorkflowContext } from '../workflows/context.js';
import { findSso } from '../storage/ssos.js';
import {
  DEMO_ENTERPRISE,
  DEMO_PEOPLE,
  EXAMPLE_PALS_DIR,
  demoPassword,
  ensureDemo,
} from './demo.js';

describe('ensureDemo', () => {
  let dir: ReturnType<typeof tempDir>;
  let config: Config;
  let db: Db;
  beforeEach(async () => {
    dir = tempDir('pal-demo-');
    config = testConfig(dir.path);
    db = await migratedDatabase(config);
  });
  // The context main.ts hands ensureDemo, for these settings.
  let contexts: WorkflowContext[] = [];
  const contextFor = (settings: Config) => {
    const ctx = createWorkflowContext({ db, config: settings, log: pino({ level: 'silent' }) });
    contexts.push(ctx);
    return ctx;
  };
  afterEach(async () => {
    for (const ctx of contexts) ctx.mailer.close();
    contexts = [];
    await db.destroy();
    dir.remove();
  });

  it('creates the demo employee and manager once, ACTIVE, with their fixed SSO ids', async () => {
    const ctx = contextFor(config);
    const { enterprise } = await ensureDemo(ctx);
    await ensureDemo(ctx);
    for (const person of Object.values(DEMO_PEOPLE)) {
      expect(await findSso(db, enterprise.id, person.sso)).toMatchObject({
        status: 'ACTIVE',
        email: person.email,
        firstName: person.firstName,
      });
    }
    const ssos = await db.selectFrom('ssos').select('id').execute();
    expect(ssos).toHaveLength(2);
  });

  it('finds the repository examples from its own location', () => {
    expect(EXAMPLE_PALS_DIR.replace(/\/$/, '')).toMatch(/\/examples\/pals$/);
    expect(statSync(join(EXAMPLE_PALS_DIR, 'expense-approval', 'pal.json')).isFile()).toBe(true);
  });

  it('creates the enterprise, deploys every example pal and a working client, then changes nothing', async () => {
    const first = await ensureDemo(contextFor(config));
    expect(first.enterprise.name).toBe(DEMO_ENTERPRISE);
    expect(first.pals.map((p) => p.id)).toEqual([
      'customer-onboarding',
      'expense-approval',
      'onboarding-sandbox',
      'team-directory',
    ]);
    expect(first.pals.every((p) => p.version === 1 && p.changed)).toBe(true);
    expect(first.username).toBe('demo');
    expect(first.password).toBe(demoPassword(config.secretKey));
    expect(readFileSync(join(dir.path, 'demo-client.txt'), 'utf8')).toBe(
      `demo:${first.password}\n`,
    );
    expect(statSync(first.credentialsFile).mode & 0o777).toBe(0o600);

    const verify = (username: string, password: string) =>
      verifyClient({ db, config: config }, username, password);
    expect(await verify('demo', first.password)).toMatchObject({
      enterpriseId: first.enterprise.id,
    });

    const second = await ensureDemo(contextFor(config));
    expect(second.enterprise.id).toBe(first.enterprise.id);
    expect(second.password).toBe(first.password);
    expect(second.pals.every((p) => p.version === 1 && !p.changed)).toBe(true);
    expect(await db.selectFrom('enterprises').select('id').execute()).toHaveLength(1);
    expect(await db.selectFrom('api_clients').select('id').execute()).toHaveLength(1);
  });

  it('derives another password from another key, and the old one stops working', async () => {
    const first = await ensureDemo(contextFor(config));
    const rekeyed = { ...config, secretKey: Buffer.alloc(32, 7) };
    const second = await ensureDemo(contextFor(rekeyed));
    expect(second.password).not.toBe(first.password);
    const verify = (username: string, password: string) =>
      verifyClient({ db, config: rekeyed }, username, password);
    expect(await verify('demo', second.password)).not.toBeNull();
    expect(await verify('demo', first.password)).toBeNull();
  });

  it('deploys from another folder when asked, and copes with a missing one', async () => {
    const none = await ensureDemo(contextFor(config), {
      examplesDir: join(dir.path, 'nothing-here'),
    });
    expect(none.pals).toEqual([]);
  });
});
