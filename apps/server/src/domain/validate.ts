// Checks of caller input shared by the domain modules. Each failure is an InvalidArgumentError
// whose message starts with the parameter's name, as the API calls it.
import { InvalidArgumentError } from './errors.js';

export const MAX_NAME_LENGTH = 100;
export const MAX_EMAIL_LENGTH = 254;

// Control characters (C0, DEL, C1) have no place in names, ids or addresses.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// A pragmatic address check: local@domain, a dot-separated domain of letters, digits and hyphens.
const EMAIL =
  /^[\p{L}\p{N}.!#$%&'*+/=?^_`{|}~-]+@[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?)*$/u;

/** A required, trimmed, single-line text of at most `max` characters. */
export function requireText(field: string, value: unknown, max = MAX_NAME_LENGTH): string {
  if (typeof value !== 'string') throw new InvalidArgumentError(`${field}: is required`);
  const text = value.trim();
  if (text === '') throw new InvalidArgumentError(`${field}: must not be empty`);
  if ([...text].length > max)
    throw new InvalidArgumentError(`${field}: must be at most ${max} characters`);
  if (CONTROL.test(text))
    throw new InvalidArgumentError(`${field}: must not contain control characters`);
  return text;
}

/** An id given by the caller (pal, transaction, SSO): required. Its length is the schema's (200). */
export function requireId(field: string, value: unknown): string {
  if (typeof value !== 'string' || value === '')
    throw new InvalidArgumentError(`${field}: is required`);
  if (CONTROL.test(value)) {
    throw new InvalidArgumentError(`${field}: is not a valid id`);
  }
  return value;
}

/**
 * A syntactically valid e-mail address, trimmed and in NFC (an accent typed on a Mac comes as a
 * letter and a combining mark, which the address check would refuse); its case is kept.
 * Comparisons use emailKey.
 */
export function requireEmail(field: string, value: unknown): string {
  const email = requireText(
    field,
    typeof value === 'string' ? value.normalize('NFC') : value,
    MAX_EMAIL_LENGTH,
  );
  if (!EMAIL.test(email))
    throw new InvalidArgumentError(`${field}: "${email}" is not an e-mail address`);
  return email;
}

export { emailKey } from '../email-key.js';
