import type { Kysely, SelectQueryBuilder, Selectable, Transaction } from 'kysely';
import type { Tenant } from '../api/context';
import type { Database } from './schema';

type TenantTable = 'customers' | 'events' | 'screenings' | 'screening_batches' | 'external_accounts';

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
