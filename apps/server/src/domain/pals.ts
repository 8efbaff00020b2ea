// Pals of an enterprise: deployment from a package (each deployment of an id is a new version),
// look-up (P2) and the searches of P1 and C1 (DESIGN §8).
import type * as Wire from '@pal-workflow/types';
import type { Expression, SqlBool } from 'kysely';
import type { PalRow } from '../storage/schema.js';
import type { DomainContext } from './context.js';
import { getEnterprise } from './enterprises.js';
import { NotFoundError } from './errors.js';
import { loadPalPackage, type PalManifest, type PalPackage } from './pal-manifest.js';
import { optional, stringFilterConditions, withoutUndefined, type Page } from './search.js';
import { requireId, requireStartRecord } from './validate.js';
import { fold } from '../storage/conditions.js';
import { checkWorkflowSyntax } from '../workflows/syntax-check.js';

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

/** PalSearch of the spec (generated from the XSD); absent booleans are false, an absent startRecord is 0. */
export type PalSearch = Partial<Wire.PalSearch>;

export interface DeployResult {
  id: string;
  name?: string;
  version: number;
  /** False when skipIfUnchanged found the same package already deployed. */
  changed: boolean;
}

export function toPalInfo(row: PalRow): PalInfo {
  return withoutUndefined({
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
  return withoutUndefined({
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
const keyOf = (value: string | undefined) => (value === undefined ? null : fold(value));

/** Reads a pal folder and deploys it; see deployPalPackage. */
export async function deployPal(
  ctx: DomainContext,
  enterpriseId: string,
  folder: string,
  options: { skipIfUnchanged?: boolean } = {},
): Promise<DeployResult> {
  return deployPalPackage(ctx, enterpriseId, await loadPalPackage(folder), options);
}

/**
 * Deploys a package to the enterprise. A new id becomes version 1; an id already deployed gets
 * the next version, which replaces what P1, P2 and T1 see (earlier versions stay stored). With
 * skipIfUnchanged, a package identical to the current version changes nothing.
 */
export async function deployPalPackage(
  ctx: DomainContext,
  enterpriseId: string,
  pkg: PalPackage,
  options: { skipIfUnchanged?: boolean } = {},
): Promise<DeployResult> {
  await getEnterprise(ctx, enterpriseId);
  await checkWorkflowSyntax(pkg.files);
  const m = pkg.manifest;
  const now = ctx.now().toISOString();
  return ctx.db.transaction().execute(async (trx) => {
    const existing = await trx
      .selectFrom('pals')
      .select(['version', 'content_hash', 'create_date'])
      .where('enterprise_id', '=', enterpriseId)
      .where('id', '=', m.id)
      .executeTakeFirst();
    if (existing && options.skipIfUnchanged && existing.content_hash === pkg.contentHash) {
      return { id: m.id, name: m.name, version: existing.version, changed: false };
    }
    const version = existing ? existing.version + 1 : 1;
    const columns = {
      version,
      name: m.name ?? null,
      name_key: keyOf(m.name),
      description: m.description ?? null,
      description_key: keyOf(m.description),
      category: m.category ?? null,
      category_key: keyOf(m.category),
      publisher: m.publisher ?? null,
      publisher_key: keyOf(m.publisher),
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
    if (existing) {
      await trx
        .updateTable('pals')
        .set(columns)
        .where('enterprise_id', '=', enterpriseId)
        .where('id', '=', m.id)
        .execute();
    } else {
      await trx
        .insertInto('pals')
        .values({ enterprise_id: enterpriseId, id: m.id, create_date: now, ...columns })
        .execute();
    }
    await trx
      .insertInto('pal_versions')
      .values({
        enterprise_id: enterpriseId,
        pal_id: m.id,
        version,
        manifest: columns.manifest,
        files: JSON.stringify(pkg.files),
        content_hash: pkg.contentHash,
        deployed_at: now,
      })
      .execute();
    ctx.log.info({ enterpriseId, palId: m.id, version }, 'pal deployed');
    return { id: m.id, name: m.name, version, changed: true };
  });
}

/** `parameter` is the name the caller gave the id (P2's is `id`), for the 400 that names it. */
async function palRow(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
  parameter = 'palId',
): Promise<PalRow> {
  const row = await ctx.db
    .selectFrom('pals')
    .selectAll()
    .where('enterprise_id', '=', enterpriseId)
    .where('id', '=', requireId(parameter, palId))
    .executeTakeFirst();
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
  return ctx.cache.get(`pal\u0000${enterpriseId}\u0000${palId}`, async () =>
    toPalInfo(await palRow(ctx, enterpriseId, palId, parameter)),
  );
}

/** The whole pal, including its manifest. 404 as getPal. */
export async function getPalDetails(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
): Promise<PalDetails> {
  return toPalDetails(await palRow(ctx, enterpriseId, palId));
}

/** The workflow sources of one deployed version (path in the pal folder → text). */
export async function getPalFiles(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
  version: number,
): Promise<Record<string, string>> {
  const row = await ctx.db
    .selectFrom('pal_versions')
    .select('files')
    .where('enterprise_id', '=', enterpriseId)
    .where('pal_id', '=', palId)
    .where('version', '=', version)
    .executeTakeFirst();
  if (!row) throw NotFoundError.of('pal version', `${palId}@${version}`);
  return JSON.parse(row.files) as Record<string, string>;
}

/** Marks a pal not deployed: it stays visible (deployed=false) but T1 refuses it. */
export async function undeployPal(
  ctx: DomainContext,
  enterpriseId: string,
  palId: string,
): Promise<PalInfo> {
  await palRow(ctx, enterpriseId, palId);
  await ctx.db
    .updateTable('pals')
    .set({ deployed: 0, last_modified_date: ctx.now().toISOString() })
    .where('enterprise_id', '=', enterpriseId)
    .where('id', '=', palId)
    .execute();
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
  search: PalSearch = {},
  options: { consoleOnly?: boolean } = {},
): Promise<Page<PalInfo>> {
  const key = `pals\u0000${enterpriseId}\u0000${options.consoleOnly === true}\u0000${JSON.stringify(search)}`;
  return ctx.cache.get(key, () => findPals(ctx, enterpriseId, search, options));
}

async function findPals(
  ctx: DomainContext,
  enterpriseId: string,
  search: PalSearch,
  options: { consoleOnly?: boolean },
): Promise<Page<PalInfo>> {
  const startRecord = requireStartRecord(search.startRecord);
  const strings = stringFilterConditions([
    {
      field: 'name',
      value: search.name,
      exact: search.exactName,
      column: 'name',
      keyColumn: 'name_key',
    },
    {
      field: 'description',
      value: search.description,
      exact: search.exactDescription,
      column: 'description',
      keyColumn: 'description_key',
    },
    {
      field: 'category',
      value: search.category,
      exact: search.exactCategory,
      column: 'category',
      keyColumn: 'category_key',
    },
    {
      field: 'publisher',
      value: search.publisher,
      exact: search.exactPublisher,
      column: 'publisher',
      keyColumn: 'publisher_key',
    },
  ]);

  const query = ctx.db
    .selectFrom('pals')
    .where('enterprise_id', '=', enterpriseId)
    .$if(!search.includeTest, (q) => q.where('test', '=', 0))
    .$if(!search.includeInstalled, (q) => q.where('installed', '=', 0))
    .$if(options.consoleOnly === true, (q) => q.where('mode_console', '=', 1))
    .$if(strings.length > 0, (q) =>
      q.where((eb) => (search.matchAny ? eb.or(strings) : eb.and(strings)) as Expression<SqlBool>),
    );

  const [count, rows] = await Promise.all([
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    query.selectAll().orderBy('id').limit(ctx.config.pageSize).offset(startRecord).execute(),
  ]);
  return { items: rows.map(toPalInfo), total: Number(count.total) };
}

/** Every pal of the enterprise, test and installed ones too, ordered by id (the CLI's list). */
export async function listPals(ctx: DomainContext, enterpriseId: string): Promise<PalInfo[]> {
  const rows = await ctx.db
    .selectFrom('pals')
    .selectAll()
    .where('enterprise_id', '=', enterpriseId)
    .orderBy('id')
    .execute();
  return rows.map(toPalInfo);
}
