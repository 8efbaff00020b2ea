import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, isPublicAddress } from './webhook-urls.js';

describe('isPublicAddress', () => {
  it.each([
    ['93.184.215.14', true],
    ['8.8.8.8', true],
    ['2606:4700:4700::1111', true],
    ['127.0.0.1', false],
    ['127.255.255.254', false],
    ['10.0.0.1', false],
    ['172.16.0.1', false],
    ['172.31.255.255', false],
    ['172.32.0.1', true],
    ['192.168.0.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['::1', false],
    ['::', false],
    ['fd12:3456::1', false],
    ['fe80::1', false],
    ['ff02::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:7f00:1', false],
    ['::ffff:8.8.8.8', true],
    ['64:ff9b::10.0.0.1', false],
    ['64:ff9b::8.8.8.8', true],
    // IPv4 carried in other ways: IPv4-compatible, translated (SIIT), 6to4; and Teredo.
    ['::7f00:1', false],
    ['::127.0.0.1', false],
    ['::8.8.8.8', false],
    ['::ffff:0:7f00:1', false],
    ['2002:7f00:1::', false],
    ['2002:808:808::1', false],
    ['2001::1', false],
    ['2001:0:4136:e378::1', false],
    ['2001:4860:4860::8888', true],
    ['not an address', false],
  ])('%s → %s', (address, want) => {
    expect(isPublicAddress(address)).toBe(want);
  });
});

describe('checkWebhookUrl', () => {
  it('takes a public literal address and normalises the URL', async () => {
    expect(await checkWebhookUrl('https://93.184.215.14/hook?x=1', false)).toBe(
      'https://93.184.215.14/hook?x=1',
    );
  });

  it.each([
    ['http://127.0.0.1/', 'loopback'],
    ['http://0x7f.1/', 'loopback'], // written in hex, still 127.0.0.1
    ['http://[::1]:8080/', 'loopback'],
    ['http://[::7f00:1]/', 'loopback'],
    ['http://[2002:7f00:1::]/', 'loopback'],
    ['http://localhost/', 'loopback'],
    ['gopher://example.com/', 'http:// or https://'],
    ['https://u:p@example.com/', 'credentials'],
    ['https://example.com/#x', 'fragment'],
    [`https://example.com/${'a'.repeat(2048)}`, 'at most 2048'],
  ])('refuses %s (%s)', async (url, why) => {
    await expect(checkWebhookUrl(url, false)).rejects.toThrow(why);
  });

  it('measures the URL as it is kept and sent: non-ASCII characters percent-encoded', async () => {
    // 1,020 characters as given; each emoji is 12 characters written out.
    const url = `https://example.com/${'\u{1F600}'.repeat(500)}`;
    expect(url.length).toBeLessThan(2048);
    await expect(checkWebhookUrl(url, true)).rejects.toThrow('it is 6020');
    expect(await checkWebhookUrl(`https://example.com/${'\u{1F600}'.repeat(10)}`, true)).toBe(
      `https://example.com/${'%F0%9F%98%80'.repeat(10)}`,
    );
  });

  it('takes inner addresses when allowed', async () => {
    expect(await checkWebhookUrl('http://127.0.0.1:9/h', true)).toBe('http://127.0.0.1:9/h');
  });
});
