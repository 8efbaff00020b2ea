// `pal webhook …` end to end: each command in its own process (tsx on src/main.ts, the bin)
// against a fresh database of the project's engine, its --json output parsed.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseEnv } from './engine.js';
import { runPal as pal, type CliRun } from './pal-process.js';
import { tempDir, TEST_SECRET_KEY } from './helpers.js';

function json(run: CliRun): Record<string, unknown> {
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

describe('pal webhook', () => {
  const dir = tempDir('pal-cli-webhooks-');
  let env: Record<string, string>;
  beforeAll(async () => {
    env = {
      DATA_DIR: join(dir.path, 'data'),
      PAL_SECRET_KEY: TEST_SECRET_KEY,
      ...(await freshDatabaseEnv()),
    };
    expect((await pal(env, 'enterprise', 'create', 'Hooks Inc')).code).toBe(0);
  });
  afterAll(() => dir.remove());

  let id: string;
  let secret: string;
  /** `pal webhook add` of a loopback URL for Hooks Inc, with loopback allowed. */
  const addLoopback = (...options: string[]) =>
    pal(
      { ...env, WEBHOOK_ALLOW_PRIVATE: 'true' },
      'webhook',
      'add',
      'http://127.0.0.1:9/h',
      '--enterprise',
      'Hooks Inc',
      ...options,
    );
  it('add prints {id, url, secret} once; a loopback URL is refused without WEBHOOK_ALLOW_PRIVATE', async () => {
    const refused = await pal(
      env,
      'webhook',
      'add',
      'http://127.0.0.1:9/h',
      '--enterprise',
      'Hooks Inc',
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('WEBHOOK_ALLOW_PRIVATE');
    const unknown = await addLoopback('--events', 'sso.created,sso.nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown event type "sso.nope"');
    for (const empty of ['', ' , ']) {
      const none = await addLoopback('--events', empty);
      expect(none.code).toBe(1);
      expect(none.stderr).toContain('events: name at least one event type');
    }

    const added = json(
      await addLoopback('--events', 'sso.created,transaction.completed', '--json'),
    );
    expect(added).toEqual({
      id: expect.stringMatching(/^ep_[A-Za-z0-9_-]{22}$/),
      url: 'http://127.0.0.1:9/h',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    id = added.id as string;
    secret = added.secret as string;
  });

  it('list shows the endpoint and never its secret', async () => {
    const run = await pal(env, 'webhook', 'list', '--enterprise', 'Hooks Inc', '--json');
    expect(json(run)).toEqual({
      endpoints: [
        {
          id,
          url: 'http://127.0.0.1:9/h',
          events: ['sso.created', 'transaction.completed'],
          createdAt: expect.any(String),
        },
      ],
    });
    expect(run.stdout).not.toContain(secret.slice(6));
    const text = await pal(env, 'webhook', 'list', '--enterprise', 'Hooks Inc');
    expect(text.stdout).toContain(`${id}  http://127.0.0.1:9/h  sso.created,transaction.completed`);
  });

  it('rotate-secret shows a new secret and how long the old one signs', async () => {
    const rotated = json(await pal(env, 'webhook', 'rotate-secret', id, '--json'));
    expect(rotated).toEqual({
      id,
      url: 'http://127.0.0.1:9/h',
      secret: expect.stringMatching(/^whsec_/),
      previousSecretUntil: expect.any(String),
    });
    expect(rotated.secret).not.toBe(secret);
    const hours = (Date.parse(rotated.previousSecretUntil as string) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(23.9);
    expect(hours).toBeLessThanOrEqual(24);
  });

  it('deliveries, redeliver of an unknown message, remove', async () => {
    expect(json(await pal(env, 'webhook', 'deliveries', id, '--json'))).toEqual({ deliveries: [] });
    const unknown = await pal(env, 'webhook', 'redeliver', 'msg_nothing');
    expect([unknown.code, unknown.stderr]).toEqual([
      1,
      'error: webhook message "msg_nothing" not found\n',
    ]);
    expect(json(await pal(env, 'webhook', 'remove', id, '--json'))).toEqual({ id, removed: true });
    const again = await pal(env, 'webhook', 'remove', id);
    expect(again.code).toBe(1);
    expect(json(await pal(env, 'webhook', 'list', '--enterprise', 'Hooks Inc', '--json'))).toEqual({
      endpoints: [],
    });
  });
});
