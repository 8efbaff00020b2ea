/** A classified change of the contract and the semver bump it asks for. */

export const BUMPS = ['none', 'patch', 'minor', 'major'] as const;
export type Bump = (typeof BUMPS)[number];
export type ChangeBump = Exclude<Bump, 'none'>;

export interface Change {
  bump: ChangeBump;
  /** A stable name of the rule, e.g. `member-added-optional`, `operation-removed`. */
  kind: string;
  /** Where: `pal.xsd#PalInfo.weight`, `GET /services/rest/pals/{id} responses.200`. */
  path: string;
  reason: string;
}

export interface DiffReport {
  bump: Bump;
  changes: Change[];
}

export function rank(bump: Bump): number {
  return BUMPS.indexOf(bump);
}

export function largest(bumps: Iterable<Bump>): Bump {
  let out: Bump = 'none';
  for (const b of bumps) if (rank(b) > rank(out)) out = b;
  return out;
}

/** Largest first, then by path, so reports and changesets read the same on every run. */
export function sortChanges(changes: Change[]): Change[] {
  return [...changes].sort(
    (a, b) =>
      rank(b.bump) - rank(a.bump) ||
      a.path.localeCompare(b.path) ||
      a.kind.localeCompare(b.kind) ||
      a.reason.localeCompare(b.reason),
  );
}
