import type { Db } from '../db';
import type { CustomerRow, CustomerSuspension } from '../db/schema';
import { tenantOf, type Tenant } from '../db/tenant-scope';
import { recordEvents } from '../domain/events';
import { invalidState, notFound } from '../errors';
import { assertCustomerNotDeleted, findCustomer, serializeCustomer } from './customer';

/**
 * A compliance freeze (docs/KYC.md): a suspended customer starts nothing new (transfers, wallets,
 * accounts, external accounts: 409 naming the status), and a transfer whose funds arrive meanwhile
 * is held in review with the suspension's reason instead of being paid out. KYC stays as it was.
 */
export async function suspendCustomer(db: Db, scope: Tenant | null, customerId: string, by: { reason: string; operator: string }): Promise<CustomerRow> {
  return changeSuspension(db, scope, customerId, (row, now) => {
    if (row.status === 'suspended') throw invalidState(`Customer ${row.id} is already suspended`);
    const suspension: CustomerSuspension = { reason: by.reason, operator: by.operator, suspended_at: now.toISOString(), previous_status: row.status as 'pending' | 'active' };
    return { status: 'suspended', suspension, event: 'customer.suspended' };
  });
}

/** Lifts a suspension: the customer goes back to the status it had (or that KYC gave it meanwhile). */
export async function reactivateCustomer(db: Db, scope: Tenant | null, customerId: string): Promise<CustomerRow> {
  return changeSuspension(db, scope, customerId, (row) => {
    if (row.status !== 'suspended') throw invalidState(`Customer ${row.id} is ${row.status}, not suspended`);
    return { status: row.suspension?.previous_status ?? 'active', suspension: null, event: 'customer.reactivated' };
  });
}

/** `scope`: the API key's tenant (another tenant's customer is a 404), or null for an operator's CLI. */
async function changeSuspension(
  db: Db, scope: Tenant | null, customerId: string,
  change: (row: CustomerRow, now: Date) => { status: CustomerRow['status']; suspension: CustomerSuspension | null; event: 'customer.suspended' | 'customer.reactivated' },
): Promise<CustomerRow> {
  return db.transaction().execute(async (trx) => {
    const row = scope
      ? await findCustomer(trx, scope, customerId, { forUpdate: true })
      : await trx.selectFrom('customers').selectAll().where('id', '=', customerId).forUpdate().executeTakeFirst();
    if (!row) throw notFound('customer', customerId);
    assertCustomerNotDeleted(row);
    const now = new Date();
    const next = change(row, now);
    const updated = await trx.updateTable('customers')
      .set({ status: next.status, suspension: next.suspension ? JSON.stringify(next.suspension) : null, updated_at: now })
      .where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
    const data = serializeCustomer(updated);
    await recordEvents(trx, tenantOf(row), [
      { type: 'customer.updated', objectId: row.id, data, previousAttributes: { status: row.status }, at: now },
      { type: next.event, objectId: row.id, data, at: new Date(now.getTime() + 1) },
    ]);
    return updated;
  });
}
