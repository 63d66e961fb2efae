// Customers (spec 2.2): their records, and what developers see of them.
import type { Kysely, Transaction } from 'kysely';
import { findTenantRow, type Tenant } from '../db/tenant-scope';
import { ApiError, invalidField, invalidState, invalidStateField } from '../errors';
import type { CustomerRow, Database } from '../db/schema';
import { z } from 'zod';
import { ENDORSEMENTS, KYC_STATUSES } from '../domain/kyc';
import { countryCode } from '../domain/validation';
import { objectId } from '../ids';

type Executor = Kysely<Database> | Transaction<Database>;

/** A postal address as a request gives it (customers, beneficial owners). */
export const AddressInput = z.strictObject({
  line1: z.string().trim().min(1, 'must not be empty').max(200),
  line2: z.string().trim().max(200).optional(),
  city: z.string().trim().min(1, 'must not be empty').max(100),
  state: z.string().trim().max(100).optional(),
  postal_code: z.string().trim().max(20).optional(),
  country: countryCode,
});

// A customer as developers see it: API answers and the data of its events.
const timestamp = z.iso.datetime();

export const AddressSchema = z
  .object({
    line1: z.string(),
    line2: z.string().optional(),
    city: z.string(),
    state: z.string().optional(),
    postal_code: z.string().optional(),
    country: z.string().length(2),
  })
  .meta({ id: 'Address' });

export const CustomerSchema = z
  .object({
    id: objectId('cus'),
    object: z.literal('customer'),
    type: z.enum(['individual', 'business']),
    email: z.string(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    business_name: z.string().nullable(),
    phone: z.string().nullable(),
    date_of_birth: z.string().nullable(),
    tax_id_provided: z.boolean(),
    address: AddressSchema.nullable(),
    status: z.enum(['pending', 'active', 'suspended', 'deleted']),
    kyc_status: z.enum(KYC_STATUSES),
    risk_rating: z.enum(['low', 'medium', 'high']).nullable(),
    endorsements: z.array(z.enum(ENDORSEMENTS)),
    suspension: z.object({ reason: z.string(), suspended_at: timestamp }).nullable()
      .describe('While status is suspended: why and since when (a compliance freeze; no new transfers, wallets or accounts)'),
    rejection_reasons: z.array(z.string()).optional().describe('Present when kyc_status is rejected'),
    incomplete_reasons: z.array(z.string()).optional().describe('Present when kyc_status is incomplete'),
    review_reasons: z.array(z.string()).optional().describe('Present when kyc_status is manual_review (e.g. sanctions_potential_match)'),
    kyc_link: z.string().optional().describe('Returned when the customer is created: the hosted KYC page'),
    kyc_link_expires_at: timestamp.optional(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Customer' });
export type Customer = z.infer<typeof CustomerSchema>;

export function findCustomer(db: Executor, tenant: Tenant, id: string, opts: { forUpdate?: boolean } = {}) {
  return findTenantRow(db, 'customers', tenant, id, { what: 'customer', ...opts });
}

/**
 * The customer a request body names in `key`: an unknown one is a fault in the body (400 naming the
 * field), not a missing route; other errors (an outage) pass through.
 */
export function findBodyCustomer(db: Executor, tenant: Tenant, id: string, key: string) {
  return findCustomer(db, tenant, id).catch((err) => {
    throw err instanceof ApiError && err.code === 'not_found' ? unknownBodyCustomer(id, key) : err;
  });
}

/** The 400 for a request body naming a customer the key's tenant does not have. */
export const unknownBodyCustomer = (id: string, key: string) => invalidField('body', key, `No such customer: '${id}'`);

/**
 * A customer the platform may hold funds for (`what`: custodial wallets, platform accounts): active,
 * KYC-approved and endorsed `can_hold_custody`; a 409 naming `customer_id` otherwise.
 */
export async function findCustodyCustomer(
  trx: Executor, tenant: Tenant, id: string, what: string, endorsement: 'can_hold_custody' | 'can_use_mpc' = 'can_hold_custody',
): Promise<CustomerRow> {
  const customer = await findBodyCustomer(trx, tenant, id, 'customer_id');
  if (customer.status !== 'active' || customer.kyc_status !== 'approved') {
    throw invalidStateField('customer_id', `Customer ${customer.id} is ${customer.status} with KYC ${customer.kyc_status}; ${what} need an active, KYC-approved customer`);
  }
  if (!customer.endorsements.includes(endorsement)) {
    throw invalidStateField('customer_id', `Customer ${customer.id} lacks the ${endorsement} endorsement that ${what} need`);
  }
  return customer;
}

/** A suspended customer (a compliance freeze, docs/KYC.md) links nothing new: a 409 naming the status. */
export function assertCustomerNotSuspended(row: CustomerRow, key = 'customer_id') {
  if (row.status === 'suspended') {
    throw invalidStateField(key, `Customer ${row.id} is suspended (${row.suspension?.reason ?? 'a compliance freeze'}); nothing new starts until it is reactivated`);
  }
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
    suspension: row.status === 'suspended' && row.suspension ? { reason: row.suspension.reason, suspended_at: row.suspension.suspended_at } : null,
    ...(row.kyc_status === 'rejected' ? { rejection_reasons: row.rejection_reasons ?? [] } : {}),
    ...(row.kyc_status === 'incomplete' ? { incomplete_reasons: row.incomplete_reasons ?? [] } : {}),
    ...(row.kyc_status === 'manual_review' ? { review_reasons: row.review_reasons ?? [] } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ...extra,
  };
}
