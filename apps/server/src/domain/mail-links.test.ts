// The sealed values of mailed links: they round-trip, and anything else is refused before a
// transaction is looked at (400), or as expired (410).
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { GoneError, InvalidArgumentError } from './errors.js';
import { createMailLink, MAIL_LINK_LIFETIME_MS, readMailLink } from './mail-links.js';

const config = loadConfig({
  PAL_SECRET_KEY: 'c3'.repeat(32),
  PUBLIC_URL: 'https://pal.example.test',
  DATA_DIR: '/tmp/pal-unused',
});
const now = new Date('2026-11-24T10:00:00.000Z');
const link = { enterpriseId: 'e1', transactionId: 't1', recipientSso: 's1', action: 'approve' };

function values(url: string): [string, string] {
  const params = new URL(url).searchParams;
  return [params.get('encryptedToken')!, params.get('encryptedAction')!];
}

describe('mail links', () => {
  it('round-trip, under PUBLIC_URL and the service root', () => {
    const url = createMailLink(config, link, now);
    expect(url).toMatch(
      /^https:\/\/pal\.example\.test\/services\/mail\?encryptedToken=[\w-]+&encryptedAction=[\w-]+$/,
    );
    expect(readMailLink(config, ...values(url), now)).toEqual({
      ...link,
      expiresAt: new Date(now.getTime() + MAIL_LINK_LIFETIME_MS).toISOString(),
    });
    // A new IV each time: two links to the same thing differ.
    expect(values(createMailLink(config, link, now))).not.toEqual(values(url));
  });

  it('expire after 7 days: 410', () => {
    const [token, action] = values(createMailLink(config, link, now));
    const later = new Date(now.getTime() + MAIL_LINK_LIFETIME_MS + 1);
    expect(() => readMailLink(config, token, action, later)).toThrow(GoneError);
  });

  it.each([
    ['empty', () => ''],
    ['too short', (t: string) => t.slice(0, 20)],
    ['truncated', (t: string) => t.slice(0, -1)],
    ['not base64url', (t: string) => `${t.slice(0, -1)}+`],
    ['too long', (t: string) => t.repeat(100)],
    ['tampered', (t: string) => `${t.slice(0, 10)}${t[10] === 'A' ? 'B' : 'A'}${t.slice(11)}`],
  ])('refuse a token or an action that is %s: 400', (_name, change) => {
    const [token, action] = values(createMailLink(config, link, now));
    expect(() => readMailLink(config, change(token), action, now)).toThrow(InvalidArgumentError);
    expect(() => readMailLink(config, token, change(action), now)).toThrow(InvalidArgumentError);
  });

  it("refuse another mail's action, and another key's link: 400", () => {
    const [token] = values(createMailLink(config, link, now));
    const [, otherAction] = values(createMailLink(config, { ...link, action: 'return' }, now));
    expect(() => readMailLink(config, token, otherAction, now)).toThrow(InvalidArgumentError);
    const rotated = { ...config, secretKey: Buffer.alloc(32, 7) };
    expect(() => readMailLink(rotated, ...values(createMailLink(config, link, now)), now)).toThrow(
      InvalidArgumentError,
    );
  });
});
