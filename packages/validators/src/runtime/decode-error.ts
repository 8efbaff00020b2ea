/** A body that does not match its schema: every problem with its path and reason. */
export interface DecodeIssue {
  /** e.g. `consoleContent.documents[0].fields[1].x` */
  path: string;
  message: string;
}

export class DecodeError extends Error {
  readonly code = 'INVALID_ARGUMENT';
  readonly statusCode = 400;
  constructor(readonly issues: DecodeIssue[]) {
    super(issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; '));
    this.name = 'DecodeError';
  }
}

export function joinPath(path: readonly PropertyKey[], root = ''): string {
  return path.reduce<string>(
    (acc, key) =>
      typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key),
    root,
  );
}
