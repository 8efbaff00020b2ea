import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualClock, testContext, type TestContext } from '../../test/helpers.js';
import { ClientCredentials, CLIENT_CACHE_TTL_MS } from '../http/credentials.js';
import {
  createClient,
  deleteClient,
  deleteClientByUsername,
  listClients,
  rotateClientSecret,
  upsertClientWithSecret,
} from './clients.js';
import { createEnterprise, ensureEnterprise, getEnterpriseByName } from './enterprises.js';
import { ConflictError, InvalidArgumentError, NotFoundError } from './errors.js';

describe('enterprises', () => {
  let t: TestContext;
  beforeEach(async () => {
    t = await testContext();
  });
  afterEach(() => t.close());

  it('creates an enterprise with a unique name, whatever its case', async () => {
    const acme = await createEnterprise(t.ctx, '  Acme Corp ');
    expect(acme.name).toBe('Acme Corp');
    expect(acme.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    await expect(createEnterprise(t.ctx, 'ACME CORP')).rejects.toThrow(ConflictError);
    expect((await getEnterpriseByName(t.ctx, 'acme corp')).id).toBe(acme.id);
    await expect(getEnterpriseByName(t.ctx, 'nobody')).rejects.toThrow(NotFoundError);
    await expect(createEnterprise(t.ctx, '   ')).rejects.toThrow(InvalidArgumentError);
  });

  it('ensureEnterprise creates once and then finds', async () => {
    const first = await ensureEnterprise(t.ctx, 'demo');
    const second = await ensureEnterprise(t.ctx, 'Demo');
    expect(first.created).toBe(true);
    expect(second.created).toBe(false);
    expect(second.enterprise.id).toBe(first.enterprise.id);
  });
});

describe('API clients', () => {
  let t: TestContext;
  const clock = manualClock();
  let enterpriseId: string;
  let auth: ClientCredentials;
  beforeEach(async () => {
    t = await testContext({}, { now: clock.now });
    auth = new ClientCredentials(t.ctx);
    enterpriseId = (await createEnterprise(t.ctx, 'Acme Corp')).id;
  });
  afterEach(() => t.close());

  it('generates a 256-bit secret, stores only its keyed hash, and authenticates with it', async () => {
    const client = await createClient(t.ctx, enterpriseId);
    expect(client.username).toMatch(/^acme-corp-[a-z0-9x]{8}$/);
    expect(client.password).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stored = await t.ctx.db.selectFrom('api_clients').selectAll().executeTakeFirstOrThrow();
    expect(stored.secret_hash).not.toContain(client.password);
    expect(Buffer.from(stored.secret_hash, 'base64url')).toHaveLength(32);

    expect(await auth.authenticate(client.username, client.password)).toEqual({
      clientId: client.clientId,
      enterpriseId,
    });
    expect(await auth.authenticate(client.username, `${client.password}x`)).toBeNull();
    expect(await auth.authenticate(client.username, '')).toBeNull();
    expect(await auth.authenticate('nobody', client.password)).toBeNull();
    expect(await auth.authenticate(client.username, 'x'.repeat(5000))).toBeNull();
  });

  it('refuses a taken or malformed username', async () => {
    await createClient(t.ctx, enterpriseId, { username: 'erp' });
    await expect(createClient(t.ctx, enterpriseId, { username: 'erp' })).rejects.toThrow(
      ConflictError,
    );
    await expect(createClient(t.ctx, enterpriseId, { username: 'a:b' })).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(createClient(t.ctx, 'no-such-enterprise')).rejects.toThrow(NotFoundError);
    expect((await listClients(t.ctx, enterpriseId)).map((c) => c.username)).toEqual(['erp']);
  });

  it('serves a seen client from memory, and re-reads it after the cache time', async () => {
    const client = await createClient(t.ctx, enterpriseId);
    expect(await auth.authenticate(client.username, client.password)).not.toBeNull();
    // Removed behind the service's back (another process): the cached row still answers ...
    await t.ctx.db.deleteFrom('api_clients').execute();
    expect(await auth.authenticate(client.username, client.password)).not.toBeNull();
    // ... until it is read again.
    clock.advance(CLIENT_CACHE_TTL_MS);
    expect(await auth.authenticate(client.username, client.password)).toBeNull();
  });

  it('stops a deleted client at once', async () => {
    const client = await createClient(t.ctx, enterpriseId);
    expect(await auth.authenticate(client.username, client.password)).not.toBeNull();
    const other = (await createEnterprise(t.ctx, 'Other')).id;
    await expect(deleteClient(t.ctx, other, client.clientId)).rejects.toThrow(NotFoundError);
    expect(await auth.authenticate(client.username, client.password)).not.toBeNull();
    await deleteClient(t.ctx, enterpriseId, client.clientId);
    expect(await auth.authenticate(client.username, client.password)).toBeNull();
  });

  it('gives a client a derived secret, and changing it takes effect at once', async () => {
    await upsertClientWithSecret(t.ctx, enterpriseId, 'demo', 'first-secret');
    expect(await auth.authenticate('demo', 'first-secret')).not.toBeNull();
    await upsertClientWithSecret(t.ctx, enterpriseId, 'demo', 'second-secret');
    expect(await auth.authenticate('demo', 'first-secret')).toBeNull();
    expect(await auth.authenticate('demo', 'second-secret')).not.toBeNull();
    const other = (await createEnterprise(t.ctx, 'Other')).id;
    await expect(upsertClientWithSecret(t.ctx, other, 'demo', 'x')).rejects.toThrow(ConflictError);
  });

  it('rotate: the new secret works at once, the old one for the grace period and then no more', async () => {
    const grace = t.ctx.config.clientSecretGraceSeconds * 1000;
    expect(grace).toBe(24 * 3_600_000);
    const client = await createClient(t.ctx, enterpriseId, { username: 'erp' });
    const me = { clientId: client.clientId, enterpriseId };
    const rotated = await rotateClientSecret(t.ctx, enterpriseId, 'erp');
    expect(rotated.password).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rotated.password).not.toBe(client.password);
    expect(rotated.oldPasswordExpiresAt).toBe(
      new Date(clock.now().getTime() + grace).toISOString(),
    );
    expect(await auth.authenticate('erp', rotated.password)).toEqual(me);
    // The old secret is accepted, and says until when (so a verified header is kept no longer).
    expect(await auth.authenticate('erp', client.password)).toEqual({
      ...me,
      secretExpiresAt: clock.now().getTime() + grace,
    });
    clock.advance(grace - 1);
    expect(await auth.authenticate('erp', client.password)).not.toBeNull();
    clock.advance(1);
    expect(await auth.authenticate('erp', client.password)).toBeNull();
    expect(await auth.authenticate('erp', rotated.password)).toEqual(me);

    // A second rotation ends the first one's grace: only the latest old secret is kept.
    const again = await rotateClientSecret(t.ctx, enterpriseId, 'erp');
    expect(await auth.authenticate('erp', again.password)).toEqual(me);
    expect(await auth.authenticate('erp', rotated.password)).not.toBeNull();
    expect(await auth.authenticate('erp', client.password)).toBeNull();
    // Another enterprise's client reads as missing.
    const other = (await createEnterprise(t.ctx, 'Other')).id;
    await expect(rotateClientSecret(t.ctx, other, 'erp')).rejects.toThrow(
      'API client "erp" not found',
    );
    expect(await auth.authenticate('erp', again.password)).toEqual(me);
  });

  it('a header verified with the old secret is not remembered past the grace period', async () => {
    const client = await createClient(t.ctx, enterpriseId, { username: 'erp' });
    await rotateClientSecret(t.ctx, enterpriseId, 'erp');
    const header = `Basic ${Buffer.from(`erp:${client.password}`).toString('base64')}`;
    const snapshot = auth.snapshot();
    const verified = await auth.authenticate('erp', client.password);
    auth.rememberHeader(header, 'erp', verified!, snapshot);
    expect(auth.verifiedHeader(header)?.client.clientId).toBe(client.clientId);
    clock.advance(t.ctx.config.clientSecretGraceSeconds * 1000);
    expect(auth.verifiedHeader(header)).toBeUndefined();
  });

  it('rotate without a grace period (CLIENT_SECRET_GRACE_SECONDS=0): the old secret stops at once', async () => {
    const strict = await testContext({ CLIENT_SECRET_GRACE_SECONDS: '0' }, { now: clock.now });
    try {
      const credentials = new ClientCredentials(strict.ctx);
      const acme = (await createEnterprise(strict.ctx, 'Acme')).id;
      const client = await createClient(strict.ctx, acme, { username: 'erp' });
      const rotated = await rotateClientSecret(strict.ctx, acme, 'erp');
      expect(rotated.oldPasswordExpiresAt).toBe(clock.now().toISOString());
      expect(await credentials.authenticate('erp', client.password)).toBeNull();
      expect(await credentials.authenticate('erp', rotated.password)).not.toBeNull();
      credentials.close();
    } finally {
      await strict.close();
    }
  });

  it('delete by username: the client stops at once; another enterprise cannot delete it', async () => {
    const client = await createClient(t.ctx, enterpriseId, { username: 'erp' });
    const rotated = await rotateClientSecret(t.ctx, enterpriseId, 'erp');
    const other = (await createEnterprise(t.ctx, 'Other')).id;
    await expect(deleteClientByUsername(t.ctx, other, 'erp')).rejects.toThrow(NotFoundError);
    expect(await auth.authenticate('erp', rotated.password)).not.toBeNull();
    await deleteClientByUsername(t.ctx, enterpriseId, 'erp');
    expect(await auth.authenticate('erp', rotated.password)).toBeNull();
    expect(await auth.authenticate('erp', client.password)).toBeNull();
    await expect(deleteClientByUsername(t.ctx, enterpriseId, 'erp')).rejects.toThrow(
      'API client "erp" not found',
    );
  });
});
