// Pals of an enterprise: deployment from a package (each deployment of an id is a new version),
// look-up (P2) and the searches of P1 and C1 (docs/decisions.md, "Searches").
import type { Page } from '@pal-workflow/server-skeleton';
import type * as Wire from '@pal-workflow/types';
import {
  findPalRow,
  findPalVersion,
  listPalRows,
  searchPalRows,
  setPalUndeployed,
  writePalDeployment,
  type PalColumns,
} from '../storage/pals.js';
import type { PalRow } from '../storage/schema.js';
import { foldedKey } from '../storage/text-filters.js';
import { recordAudit } from './audit.js';
import type { DomainContext } from './context.js';
import { getEnterprise } from './enterprises.js';
import { NotFoundError } from './errors.js';
import {
  loadPalPackage,
  parsePalManifest,
  type PalManifest,
  type PalPackage,
} from './pal-manifest.js';
import { documentRows } from './pal-documents.js';
import { optional, textFilters, withoutUndefined } from './search.js';
import { requireId } from './validate.js';

/** The spec's PalInfo (generated from the XSD): absent strings are left out, dates are ISO-8601; the domain always knows the id. */
export type PalInfo = Wire.PalInfo & { id: string };

/** Everything the service knows of a pal, for the domain's own use. */
export interface PalDetails extends PalInfo {
  enterpriseId: string;
  version: number;
  publisher?: string;
  test: boolean;
  installed: boolean;
  manifest: PalManifest;
}

/** PalSearch of the spec, as the skeleton reads it from the search headers (absent booleans false, startRecord 0). */
export type PalSearch = Wire.PalSearch;

export interface DeployResult {
  id: string;
  name?: string;
  version: number;
  /** False when skipIfUnchanged found the same package already deployed. */
  changed: boolean;
  /**
   * What deploy found odd but let pass, one a line as `FOLDER/pal.json: KEY: message` (a
   * module the pal's modes run that exports none of the functions the engine calls); absent
   * when nothing.
   */
  warnings?: string[];
}

export function toPalInfo(row: PalRow): PalInfo {
  return withoutUndefined<PalInfo>({
    id: row.id,
    name: optional(row.name),
    description: optional(row.description),
    category: optional(row.category),
    branchName: optional(row.branch_name),
    createDate: row.create_date,
    lastModifiedDate: row.last_modified_date,
    deployed: row.deployed === 1,
    modeTransaction: row.mode_transaction === 1,
    modeConsole: row.mode_console === 1,
    modeWeb: row.mode_web === 1,
    shadow: row.shadow === 1,
    shell: row.shell === 1,
  });
}

function toPalDetails(row: PalRow): PalDetails {
  return withoutUndefined<PalDetails>({
    ...toPalInfo(row),
    enterpriseId: row.enterprise_id,
    version: row.version,
    publisher: optional(row.publisher),
    test: row.test === 1,
    installed: row.installed === 1,
    manifest: JSON.parse(row.manifest) as PalManifest,
  });
}

const flag = (value: boolean) => (value ? 1 : 0);

/** Reads a pal folder and deploys it; see deployPalPackage. */
export async function deployPal(
  ctx: DomainContext,
  enterpriseId: string,
  folder: string,
  options: { skipIfUnchanged?: boolean } = {},
): Promise<DeployResult> {
  const pkg = await loadPalPackage(folder, { documentMaxBytes: ctx.config.documentMaxBytes });
  return deployPalPackage(ctx, enterpriseId, pkg, options);
}

/**
 * Deploys a package to the enterprise. A new id becomes version 1; an id already deployed gets
 * the next version, which replaces what P1, P2 and T1 see (earlier versions stay stored, with
 * their workflow sources and documents). With skipIfUnchanged, a package identical to the
 * current version changes nothing.
 */
export async function deployPalPackage(
  ctx: DomainContext,
  enterpriseId: string,
  pkg: PalPackage,
  options: { skipIfUnchanged?: boolean } = {},
): Promise<DeployResult> {
  await getEnterprise(ctx, enterpriseId);
  const warnings = await ctx.checkWorkflows(pkg);
  const m = pkg.manifest;
  const now = ctx.now().toISOString();
  const files = JSON.stringify(pkg.files);
  const outcome = await writePalDeployment(ctx.db, enterpriseId, m.id, (current) => {
    if (current && options.skipIfUnchanged && current.content_hash === pkg.contentHash) {
      return { result: { id: m.id, name: m.name, version: current.version, changed: false } };
    }
    const version = current ? current.version + 1 : 1;
    const columns: PalColumns = {
      version,
      name: m.name ?? null,
      name_key: foldedKey(m.name),
      description: m.description ?? null,
      description_key: foldedKey(m.description),
      category: m.category ?? null,
      category_key: foldedKey(m.category),
      publisher: m.publisher ?? null,
      publisher_key: foldedKey(m.publisher),
      branch_name: m.branchName ?? null,
      mode_transaction: flag(m.modes.transaction),
      mode_console: flag(m.modes.console),
      mode_web: flag(m.modes.web),
      shadow: flag(m.shadow),
      shell: flag(m.shell),
      test: flag(m.test),
      installed: flag(m.installed),
      deployed: 1,
      manifest: JSON.stringify(m),
      content_hash: pkg.contentHash,
      last_modified_date: now,
    };
    const result = { id: m.id, name: m.name, version, changed: true };
    const documents = documentRows(pkg.documents);
    return { columns, files, documents, createDate: now, result };
  });
  if (outcome.changed) {
    ctx.log.info({ enterpriseId, palId: m.id, version: outcome.version }, 'pal deployed');
    await recordAudit(ctx, ctx.db, {
      action: 'pal.deployed',
      enterpriseId,
      target: { type: 'pal', id: m.id },
      details: { version: outcome.version },
    });
  }
  return warnings.length > 0 ? { ...outcome, warnings } : outcome;
}

/** `parameter` is the name the caller gave the id (P2's is `id`), for the 400 that names it. */
async function palRow(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
  parameter = 'palId',
): Promise<PalRow> {
  const row = await findPalRow(ctx.db, enterpriseId, requireId(parameter, palId));
  if (!row) throw NotFoundError.of('pal', palId);
  return row;
}

/** P2: a pal of the enterprise, whatever its flags. 404 when the enterprise has no such pal. */
export async function getPal(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
  parameter = 'palId',
): Promise<PalInfo> {
  return ctx.cache.get(`pal\u0000${enterpriseId}\u0000${palId}`, ctx.db, async () =>
    toPalInfo(await palRow(ctx, enterpriseId, palId, parameter)),
  );
}

const palDetailsKey = (enterpriseId: string, palId: string) =>
  `palDetails\u0000${enterpriseId}\u0000${palId}`;

/**
 * The pal's details when the cache holds them now, without a read; for a transaction that writes
 * no pal, and would otherwise read and parse the manifest while it holds the writer (P3's entry).
 */
export function cachedPalDetails(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
): PalDetails | undefined {
  return ctx.cache.peek<PalDetails>(palDetailsKey(enterpriseId, palId));
}

/**
 * The whole pal, including its manifest. 404 as getPal. Cached as getPal is (frozen): every T1,
 * T5 and T6 reads it, and its manifest may be megabytes of JSON.
 */
export async function getPalDetails(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
): Promise<PalDetails> {
  let manifestChars = 0;
  return ctx.cache.get(
    palDetailsKey(enterpriseId, palId),
    ctx.db,
    async () => {
      const row = await palRow(ctx, enterpriseId, palId);
      manifestChars = row.manifest.length;
      return toPalDetails(row);
    },
    // A parsed manifest takes a few times its JSON in memory: the estimate is three.
    () => 3 * manifestChars,
  );
}

/** One deployed version: its manifest and workflow sources (path in the pal folder → text). */
export async function getPalVersion(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
  version: number,
): Promise<{ manifest: PalManifest; files: Record<string, string> }> {
  const row = await findPalVersion(ctx.db, enterpriseId, palId, version);
  if (!row) throw NotFoundError.of('pal version', `${palId}@${version}`);
  return {
    manifest: parsePalManifest(JSON.parse(row.manifest), 'pal.json'),
    files: JSON.parse(row.files) as Record<string, string>,
  };
}

/** Marks a pal not deployed: it stays visible (deployed=false) but T1 refuses it. */
export async function undeployPal(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
): Promise<PalInfo> {
  await palRow(ctx, enterpriseId, palId);
  await setPalUndeployed(ctx.db, enterpriseId, palId, ctx.now().toISOString());
  return getPal(ctx, enterpriseId, palId);
}

/**
 * P1 (and C1 with consoleOnly): the enterprise's pals matching the search, ordered by id.
 * - name, description, category, publisher: "contains", ignoring case; with the matching exact*
 *   flag, case-sensitive equality. matchAny ORs the string filters given, otherwise they AND.
 * - test pals and installed pals are left out unless includeTest / includeInstalled.
 * - startRecord: 0-based offset; a page holds PAGE_SIZE items; `total` counts all matches.
 */
export async function searchPals(
  ctx: DomainContext,
  enterpriseId: string,
  search: PalSearch,
  options: { consoleOnly?: boolean } = {},
): Promise<Page<PalInfo>> {
  const key = `pals\u0000${enterpriseId}\u0000${options.consoleOnly === true}\u0000${JSON.stringify(search)}`;
  return ctx.cache.get(key, ctx.db, () => findPals(ctx, enterpriseId, search, options));
}

async function findPals(
  ctx: DomainContext,
  enterpriseId: string,
  search: PalSearch,
  options: { consoleOnly?: boolean },
): Promise<Page<PalInfo>> {
  const { rows, total } = await searchPalRows(ctx.db, {
    enterpriseId,
    texts: textFilters(search, ['name', 'description', 'category', 'publisher']),
    matchAny: search.matchAny,
    includeTest: search.includeTest,
    includeInstalled: search.includeInstalled,
    consoleOnly: options.consoleOnly === true,
    offset: search.startRecord,
    limit: ctx.config.pageSize,
  });
  return { items: rows.map(toPalInfo), total };
}

/** Every pal of the enterprise, test and installed ones too, ordered by id (the CLI's list). */
export async function listPals(ctx: DomainContext, enterpriseId: string): Promise<PalInfo[]> {
  return (await listPalRows(ctx.db, enterpriseId)).map(toPalInfo);
}
