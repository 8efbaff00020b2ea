// What a TEXT field holds, when its author says (the manifest's `input`): the session page then
// asks the phone for the keyboard that fits (digits and a decimal mark for an amount, @ for an
// e-mail address), offers the browser's date picker, and lets the browser fill in what it knows
// of the person (their name, their company). Hints for the page only: the service does not
// check the value's form, the workflow does, as with any field.

/** Each kind of value a field may declare. */
export const FIELD_INPUTS = [
  'name',
  'email',
  'tel',
  'url',
  'organization',
  'address',
  'postal-code',
  'date',
  'decimal',
  'integer',
] as const;

export type FieldInput = (typeof FIELD_INPUTS)[number];

/** The kinds a TEXTAREA may declare (an address takes several lines); the rest are one line. */
export const TEXTAREA_INPUTS: readonly FieldInput[] = ['address'];

/** The attributes of a field's control for its kind, beside those every control has. */
export interface InputAttributes {
  /** The `type` of an `<input>` (text when absent). */
  type?: 'email' | 'tel' | 'url' | 'date';
  inputmode?: 'decimal' | 'numeric';
  autocomplete?: string;
  /** Off for what is not prose: an address, a code. */
  spellcheck?: false;
  autocapitalize?: 'off' | 'words';
}

export function inputAttributes(input: FieldInput | undefined): InputAttributes {
  switch (input) {
    case 'name':
      return { autocomplete: 'name', autocapitalize: 'words', spellcheck: false };
    case 'email':
      return { type: 'email', autocomplete: 'email', spellcheck: false, autocapitalize: 'off' };
    case 'tel':
      return { type: 'tel', autocomplete: 'tel' };
    case 'url':
      return { type: 'url', autocomplete: 'url', spellcheck: false, autocapitalize: 'off' };
    case 'organization':
      return { autocomplete: 'organization', spellcheck: false };
    case 'address':
      return { autocomplete: 'street-address', spellcheck: false };
    case 'postal-code':
      return { autocomplete: 'postal-code', spellcheck: false };
    case 'date':
      return { type: 'date' };
    case 'decimal':
      return { inputmode: 'decimal' };
    case 'integer':
      return { inputmode: 'numeric' };
    case undefined:
      return {};
  }
}
