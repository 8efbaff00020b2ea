// Where webhooks may go (docs/events.md, SSRF): http(s) URLs whose host is a public address.
// Loopback, private, link-local, shared, multicast and reserved ranges are refused unless
// WEBHOOK_ALLOW_PRIVATE=true, both when an endpoint is added and at every send, where the
// address checked is the one connected to (outbox/webhook-sender.ts), so a name that later
// resolves elsewhere (DNS rebinding) cannot reach an inner address.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { InvalidArgumentError } from './errors.js';

/** Longest endpoint URL accepted. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  // Unspecified, loopback, and the deprecated IPv4-compatible ::a.b.c.d (any of them)
  ['::', 96],
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT), ::ffff:0:a.b.c.d
  ['64:ff9b:1::', 48], // local NAT64
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments, Teredo among them
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (deprecated), which carries any IPv4 address, loopback too
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');

/**
 * An IPv4 address carried in an IPv6 one that reaches it (::ffff:a.b.c.d, 64:ff9b::a.b.c.d); the
 * other ways of carrying one are refused as ranges (NOT_PUBLIC).
 */
function embeddedIpv4(address: string): string | undefined {
  const match = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (match) return match[1];
  // The same written in hex: ::ffff:7f00:1
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const value = (parseInt(hex[1]!, 16) << 16) | parseInt(hex[2]!, 16);
  return [24, 16, 8, 0].map((shift) => (value >>> shift) & 255).join('.');
}

/** True for an address on the public internet; false for loopback, private and the like. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !NOT_PUBLIC.check(address, 'ipv4');
  if (family !== 6) return false;
  const v4 = embeddedIpv4(address);
  if (v4 !== undefined) return isPublicAddress(v4);
  return !NOT_PUBLIC.check(address, 'ipv6');
}

/** The URL's host as an address or a name, without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * An endpoint URL as given to `pal webhook add`: absolute http(s), no credentials, no fragment,
 * at most MAX_WEBHOOK_URL_LENGTH characters, and (unless `allowPrivate`) a host that is or
 * resolves only to public addresses. 400 (InvalidArgumentError) otherwise.
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<string> {
  const refuse = (why: string) => new InvalidArgumentError(`url: ${why}`);
  if (raw.length > MAX_WEBHOOK_URL_LENGTH)
    throw refuse(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse(`"${raw}" is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw refuse('must be an http:// or https:// URL');
  if (url.username || url.password) throw refuse('must not hold credentials');
  if (url.hash) throw refuse('must not have a fragment');
  // What is kept and sent is the URL written out (non-ASCII percent-encoded, a name in punycode):
  // up to nine times as long as what was given.
  const written = url.toString();
  if (written.length > MAX_WEBHOOK_URL_LENGTH)
    throw refuse(
      `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters written out (non-ASCII characters percent-encoded): it is ${written.length}`,
    );
  if (!allowPrivate) {
    const host = hostOf(url);
    const addresses = isIP(host)
      ? [host]
      : await lookup(host, { all: true, verbatim: true }).then(
          (found) => found.map((a) => a.address),
          () => {
            throw refuse(`the host "${host}" does not resolve`);
          },
        );
    const inner = addresses.find((a) => !isPublicAddress(a));
    if (inner !== undefined)
      throw refuse(
        `"${host}" is a loopback, private or link-local address (${inner}); set WEBHOOK_ALLOW_PRIVATE=true to allow such endpoints`,
      );
  }
  return written;
}
