import { findTenantRow } from '../../db/tenant-scope';
import type { Kysely, Transaction } from 'kysely';
import type { Tenant } from '../../api/context';
import { invalidState } from '../../api/errors';
import type { CustomerRow, Database } from '../../db/schema';
import type { Customer } from './schemas';

type Executor = Kysely<Database> | Transaction<Database>;

export function findCustomer(db: Executor, tenant: Tenant, id: string, opts: { forUpdate?: boolean } = {}) {
  return findTenantRow(db, 'customers', tenant, id, { what: 'customer', ...opts });
}

/** A deleted customer stays readable but takes part in nothing new. */
export function assertCustomerNotDeleted(row: CustomerRow) {
  if (row.status === 'deleted') throw invalidState(`Customer ${row.id} is deleted and can no longer change`);
}

export function serializeCustomer(row: CustomerRow, extra: Partial<Customer> = {}): Customer {
  return {
    id: row.id,
    object: 'customer',
    type: row.type,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    business_name: row.business_name,
    phone: row.phone,
    date_of_birth: row.date_of_birth,
    tax_id_provided: row.tax_id_encrypted !== null,
    address: row.address,
    status: row.status,
    kyc_status: row.kyc_status as Customer['kyc_status'],
    risk_rating: row.risk_rating,
    endorsements: row.endorsements as Customer['endorsements'],
    ...(row.kyc_status === 'rejected' ? { rejection_reasons: row.rejection_reasons ?? [] } : {}),
    ...(row.kyc_status === 'incomplete' ? { incomplete_reasons: row.incomplete_reasons ?? [] } : {}),
    ...(row.kyc_status === 'manual_review' ? { review_reasons: row.review_reasons ?? [] } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...extra,
  };
}
