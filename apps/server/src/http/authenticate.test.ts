import { describe, expect, it } from 'vitest';
import { parseBasic } from './authenticate.js';

const encoded = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('parseBasic', () => {
  // '>>>' and '???' encode to 'Pj4+' and 'Pz8/': the two characters the alphabets differ in.
  const pair = { username: 'c>>>', password: 's???x' };
  const header = `Basic ${encoded(`${pair.username}:${pair.password}`)}`;

  it('reads the scheme in any case, blanks around the credentials, and padding left out', () => {
    expect(header).toMatch(/[+/]/);
    expect(header).toMatch(/=$/);
    for (const value of [header, `basic  ${header.slice(6)}\t`, header.replace(/=+$/, '')])
      expect(parseBasic(value)).toEqual(pair);
    expect(parseBasic(`Basic ${encoded('ünï:cødé')}`)).toEqual({
      username: 'ünï',
      password: 'cødé',
    });
  });

  it('refuses what only a lenient decoder reads: the URL alphabet, bytes after the padding', () => {
    for (const value of [
      header.replace(/\+/g, '-').replace(/\//g, '_'),
      `${header}QUFB`,
      `${header}==`,
      `Basic ${header.slice(6, 10)} ${header.slice(10)}`,
      'Basic',
      `Bearer ${header.slice(6)}`,
    ])
      expect(parseBasic(value), value).toBeUndefined();
  });

  it('refuses credentials without a username', () => {
    expect(parseBasic(`Basic ${encoded(':secret')}`)).toBeUndefined();
    expect(parseBasic(`Basic ${encoded('secret')}`)).toBeUndefined();
  });
});
