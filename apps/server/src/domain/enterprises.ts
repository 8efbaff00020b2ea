// Enterprises: the tenants. Everything else (clients, pals, SSOs, transactions) belongs to one.
// Names are unique regardless of case; ids are opaque.
import type { DomainContext } from './context.js';
import { ConflictError, NotFoundError } from './errors.js';
import { randomId } from './ids.js';
import { requireText } from './validate.js';
import {
  findEnterpriseRow,
  findEnterpriseRowByNameKey,
  insertEnterprise,
} from '../storage/enterprises.js';

export interface Enterprise {
  id: string;
  name: string;
  createdAt: string;
}

function toEnterprise(row: { id: string; name: string; created_at: string }): Enterprise {
  return { id: row.id, name: row.name, createdAt: row.created_at };
}

/** Creates an enterprise. 409 when the name (in any case) is taken. */
export async function createEnterprise(ctx: DomainContext, name: string): Promise<Enterprise> {
  const clean = requireText('name', name);
  const row = {
    id: randomId(),
    name: clean,
    name_key: clean.toLowerCase(),
    created_at: ctx.now().toISOString(),
  };
  if (!(await insertEnterprise(ctx.db, row))) {
    throw new ConflictError(`enterprise "${clean}" already exists`);
  }
  return toEnterprise(row);
}

/** The enterprise of that name (in any case), or undefined. */
export async function findEnterpriseByName(
  ctx: DomainContext,
  name: string,
): Promise<Enterprise | undefined> {
  const row = await findEnterpriseRowByNameKey(ctx.db, name.trim().toLowerCase());
  return row && toEnterprise(row);
}

/** The enterprise of that name; 404 when there is none. */
export async function getEnterpriseByName(ctx: DomainContext, name: string): Promise<Enterprise> {
  const enterprise = await findEnterpriseByName(ctx, name);
  if (!enterprise) throw NotFoundError.of('enterprise', name);
  return enterprise;
}

export async function getEnterprise(ctx: DomainContext, id: string): Promise<Enterprise> {
  const row = await findEnterpriseRow(ctx.db, id);
  if (!row) throw NotFoundError.of('enterprise', id);
  return toEnterprise(row);
}

/** The enterprise of that name, created when missing. */
export async function ensureEnterprise(
  ctx: DomainContext,
  name: string,
): Promise<{ enterprise: Enterprise; created: boolean }> {
  const existing = await findEnterpriseByName(ctx, name);
  if (existing) return { enterprise: existing, created: false };
  try {
    return { enterprise: await createEnterprise(ctx, name), created: true };
  } catch (error) {
    // Another process created it in between.
    if (error instanceof ConflictError)
      return { enterprise: await getEnterpriseByName(ctx, name), created: false };
    throw error;
  }
}
