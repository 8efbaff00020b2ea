// Labels as a person reads them: what cleaning keeps (scripts that need joiners, emoji, flags)
// and drops (what could make a label read otherwise), and the cap counted as a person counts.
import { describe, expect, it } from 'vitest';
import {
  cutLabel,
  FIELD_LABEL_MAX,
  fieldLabel,
  labelProblem,
  readableLabel,
} from './field-labels.js';

describe('readableLabel', () => {
  it.each([
    ['VAT number', 'VAT number'],
    ['  Amount\n(CHF)\t ', 'Amount (CHF)'],
    // Bidirectional override and isolate, left-to-right mark, soft hyphen: dropped.
    ['Amount\u202e (CHF)\u2066x\u2069\u200e', 'Amount (CHF)x'],
    ['Kosten\u00adstelle', 'Kostenstelle'],
    // A surrogate without its pair is no character.
    ['a\ud800b\udc00c', 'abc'],
    ['line\u2028break\u0000', 'line break'],
    // Joiners and tags are part of the words and pictures they join.
    ['می\u200cخواهم', 'می\u200cخواهم'],
    ['नमस्\u200dते', 'नमस्\u200dते'],
    ['👨\u200d👩\u200d👧 family', '👨\u200d👩\u200d👧 family'],
    [
      '🏴\udb40\udc67\udb40\udc62\udb40\udc73\udb40\udc63\udb40\udc74\udb40\udc7f',
      '🏴\udb40\udc67\udb40\udc62\udb40\udc73\udb40\udc63\udb40\udc74\udb40\udc7f',
    ],
  ])('%j reads %j', (text, label) => expect(readableLabel(text)).toBe(label));

  it('is nothing when nothing readable is left', () => {
    for (const text of ['', '   ', '\u202e', '\n\t', '\u200e\u00ad']) {
      expect(readableLabel(text)).toBeUndefined();
    }
  });
});

describe('cutLabel and labelProblem', () => {
  it('counts characters as a person does: an accent with its letter, a skin tone with its hand', () => {
    const accented = 'e\u0301'.repeat(FIELD_LABEL_MAX);
    expect(cutLabel(accented)).toBe(accented);
    expect(labelProblem(accented)).toBeUndefined();
    expect(cutLabel(`${accented}e\u0301`)).toBe(accented);
    expect(labelProblem(`${accented}e\u0301`)).toBe(
      `must be at most ${FIELD_LABEL_MAX} characters`,
    );
    const hands = '👍🏽'.repeat(FIELD_LABEL_MAX);
    expect(labelProblem(hands)).toBeUndefined();
    expect(cutLabel(`${hands}👍🏽`)).toBe(hands);
    expect(cutLabel(`${'x'.repeat(FIELD_LABEL_MAX - 1)} y`)).toBe('x'.repeat(FIELD_LABEL_MAX - 1));
  });

  it('refuses a manifest label with nothing readable in it', () => {
    expect(labelProblem('\u202e')).toBe('must hold readable text');
    expect(labelProblem(' ')).toBe('must hold readable text');
    expect(labelProblem('Your note')).toBeUndefined();
  });
});

describe('fieldLabel', () => {
  it("reads a label by the field's own id only, else makes one from the id", () => {
    const labels = JSON.parse('{"__proto__": "Not a prototype", "vatId": "VAT number"}') as Record<
      string,
      string
    >;
    expect(fieldLabel(labels, '__proto__')).toBe('Not a prototype');
    expect(fieldLabel(labels, 'vatId')).toBe('VAT number');
    expect(fieldLabel(labels, 'constructor')).toBe('Constructor');
    expect(fieldLabel(labels, 'hasOwnProperty')).toBe('Has own property');
    expect(fieldLabel(undefined, 'employee_name')).toBe('Employee name');
  });
});
