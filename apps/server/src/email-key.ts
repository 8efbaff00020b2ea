// The form an e-mail address is compared in (DESIGN §5: one account per address). The domain
// (storage, a migration) and the E operations use it alike: a key written one way and looked up
// another would let one mailbox become two accounts.
import { domainToASCII } from 'node:url';

/**
 * One key per mailbox, however the address is written: case folded; the mailbox name in NFKC
 * (macOS sends `é` as `e` and a combining accent; `ｅｖｅ` in fullwidth letters is `eve`); the
 * domain as DNS knows it (IDNA: `exämple.com` is `xn--exmple-cua.com`, as a mail server sends to
 * it). A change of this function changes every stored key: it needs a migration of its own
 * (0033 is this one's).
 */
export function emailKey(email: string): string {
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at).normalize('NFKC').toLowerCase();
  const domain = email.slice(at + 1).normalize('NFKC');
  // domainToASCII answers '' for a name IDNA refuses; such a name is compared as it is.
  return `${local}@${(domainToASCII(domain) || domain).toLowerCase()}`;
}
