/** A body that does not match its schema: its problems with their paths and reasons. */
export interface DecodeIssue {
  /** e.g. `consoleContent.documents[0].fields[1].x` */
  path: string;
  message: string;
}

/**
 * The most problems an error names. A body within the size limit can hold hundreds of thousands
 * of wrong items; naming each made an answer 40 times the body's size and held the event loop
 * for seconds. The first ones tell the client what is wrong.
 */
export const MAX_DECODE_ISSUES = 20;

/** The longest message of one problem, cut there. */
export const MAX_ISSUE_CHARS = 500;

export class DecodeError extends Error {
  readonly code = 'INVALID_ARGUMENT';
  readonly statusCode = 400;
  /** At most MAX_DECODE_ISSUES, and then a last one saying that more were left out. */
  readonly issues: DecodeIssue[];
  constructor(issues: readonly DecodeIssue[], leftOut: number | 'some' = 0) {
    const more = issues.length > MAX_DECODE_ISSUES ? issues.length - MAX_DECODE_ISSUES : 0;
    // One problem may name any number of things (zod's "Unrecognized keys" lists every key).
    const kept = issues
      .slice(0, MAX_DECODE_ISSUES)
      .map((issue) =>
        issue.message.length > MAX_ISSUE_CHARS
          ? { ...issue, message: `${issue.message.slice(0, MAX_ISSUE_CHARS)}…` }
          : issue,
      );
    const notNamed = leftOut === 'some' ? 'some' : leftOut + more;
    if (notNamed === 'some' || notNamed > 0)
      kept.push({
        path: '',
        message: `${notNamed === 'some' ? 'more problems' : `${notNamed} more problem${notNamed === 1 ? '' : 's'}`} not listed (the first ${MAX_DECODE_ISSUES} are)`,
      });
    super(kept.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; '));
    this.name = 'DecodeError';
    this.issues = kept;
  }
}

/**
 * The problems a decoder collects, up to MAX_DECODE_ISSUES: one more ends the decoding at once
 * with a DecodeError, so a body of countless wrong items costs no more than one of twenty.
 */
export class IssueList extends Array<DecodeIssue> {
  static override get [Symbol.species]() {
    return Array;
  }

  override push(...items: DecodeIssue[]): number {
    const length = super.push(...items);
    if (length > MAX_DECODE_ISSUES) throw new DecodeError(this.slice(0, MAX_DECODE_ISSUES), 'some');
    return length;
  }
}

export function joinPath(path: readonly PropertyKey[], root = ''): string {
  return path.reduce<string>(
    (acc, key) =>
      typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key),
    root,
  );
}
