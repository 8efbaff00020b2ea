// The form an e-mail address is compared in (DESIGN §5: one account per address). The domain
// (storage, a migration) and the E operations use it alike: a key written one way and looked up
// another would let one mailbox become two accounts.
import { domainToASCII } from 'node:url';

/**
 * A last label that makes the URL parser read a host as an IPv4 address (`2130706433`, `0x7f.1`
 * are 127.0.0.1 to it): such a domain is compared as it is written, not as the address.
 */
const ENDS_IN_A_NUMBER = /(?:^|\.)(?:\d+|0x[0-9a-f]*)\.?$/i;

/**
 * One key per mailbox, however the address is written: case folded; the mailbox name in NFKC
 * (macOS sends `é` as `e` and a combining accent; `ｅｖｅ` in fullwidth letters is `eve`); the
 * domain as DNS knows it (IDNA, whose own mapping folds width: `exämple.com` is
 * `xn--exmple-cua.com`, as a mail server sends to it). A domain IDNA refuses (`x⒈com`) is compared
 * as written. A change of this function changes stored keys: it needs a migration of its own
 * (0033 is this one's).
 */
export function emailKey(email: string): string {
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at).normalize('NFKC').toLowerCase();
  const domain = email.slice(at + 1).normalize('NFC');
  const ascii = ENDS_IN_A_NUMBER.test(domain) ? '' : domainToASCII(domain);
  return `${local}@${(ascii || domain).toLowerCase()}`;
}
