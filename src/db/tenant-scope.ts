import type { Kysely, SelectQueryBuilder, Selectable, Transaction } from 'kysely';
import { notFound } from '../errors';
import type { Database, Environment } from './schema';

/** A developer account's environment: every query of a request, and every stored row, is scoped by it. */
export interface Tenant {
  developerId: string;
  environment: Environment;
}

/** The tenant a stored row belongs to (activities, which act on rows rather than for an API key). */
export const tenantOf = (row: { developer_id: string; environment: Tenant['environment'] }): Tenant =>
  ({ developerId: row.developer_id, environment: row.environment });

type TenantTable = 'customers' | 'events' | 'screenings' | 'screening_batches' | 'external_accounts' | 'transfers' | 'payments' | 'webhook_endpoints' | 'wallets' | 'wallet_transactions' | 'platform_accounts' | 'mpc_sessions' | 'payment_routes' | 'route_deposits';

/**
 * Every read of tenant data starts here: the rows of the key's developer account and environment
 * only, so another tenant's id is indistinguishable from an unknown one.
 */
export function tenantRows<T extends TenantTable>(
  db: Kysely<Database> | Transaction<Database>,
  table: T,
  tenant: Tenant,
): SelectQueryBuilder<Database, T, Selectable<Database[T]>> {
  const q = (db as Kysely<Database>)
    .selectFrom(table as TenantTable)
    .selectAll()
    .where('developer_id', '=', tenant.developerId)
    .where('environment', '=', tenant.environment);
  return q as unknown as SelectQueryBuilder<Database, T, Selectable<Database[T]>>;
}

/** One row of the tenant by id, or the 404 an unknown id gets (also for another tenant's id). */
export async function findTenantRow<T extends TenantTable>(
  db: Kysely<Database> | Transaction<Database>,
  table: T,
  tenant: Tenant,
  id: string,
  opts: { what: string; forUpdate?: boolean },
): Promise<Selectable<Database[T]>> {
  let q = (tenantRows(db, table, tenant) as unknown as SelectQueryBuilder<Database, TenantTable, { id: string }>).where('id', '=', id);
  if (opts.forUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  if (!row) throw notFound(opts.what, id);
  return row as unknown as Selectable<Database[T]>;
}
