import { tenantRows } from '../../db/tenant-scope';
import { invalidState } from '../../errors';
import { paginate } from '../../api/pagination';
import { defineRoute } from '../../api/route';
import { changedAttributes, recordChangeWithEvent, recordEvent } from '../../domain/events';
import { newId, secretBase62 } from '../../ids';
import { sha256Hex } from '../../crypto';
import { closeKycWorkflow } from '../../kyc/workflow-client';
import { assertCustomerNotDeleted, CustomerSchema, findCustomer, serializeCustomer } from '../../customers/customer';
import type { CustomerRow } from '../../db/schema';
import { sandboxReactivateCustomer, sandboxSuspendCustomer } from './suspension-routes';
import { CustomerCreate, CustomerIdParams, CustomerListQuery, CustomerListSchema, CustomerPatch, IDENTITY_FIELDS } from './schemas';

const TAG = 'Customers';

export const createCustomer = defineRoute({
  method: 'post',
  path: '/v0/customers',
  summary: 'Create a customer (KYC starts with its first submission)',
  tag: TAG,
  permission: 'customers:write',
  body: CustomerCreate,
  responses: { 201: CustomerSchema },
  handler: async ({ deps, tenant, body, writeStatement }) => {
    const now = new Date();
    // The link token is shown once; only its hash is kept, so a database leak reveals no link.
    const token = secretBase62(43);
    const linkExpiresAt = new Date(now.getTime() + deps.config.KYC_LINK_TTL_HOURS * 3600_000);
    const row: CustomerRow = {
      id: newId('customer', now.getTime()),
      developer_id: tenant.developerId,
      environment: tenant.environment,
      type: body.type,
      email: body.email.toLowerCase(),
      first_name: body.first_name ?? null,
      last_name: body.last_name ?? null,
      business_name: body.business_name ?? null,
      phone: body.phone ?? null,
      date_of_birth: body.date_of_birth ?? null,
      address: body.address ?? null,
      tax_id_encrypted: body.tax_id ? deps.cipher.encrypt(body.tax_id) : null,
      status: 'pending',
      kyc_status: 'not_started',
      risk_rating: null,
      endorsements: [],
      rejection_reasons: null,
      incomplete_reasons: null,
      review_reasons: null,
      kyc_decision: null,
      kyc_link_token_hash: sha256Hex(token),
      kyc_link_expires_at: linkExpiresAt,
      suspension: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    const customer = serializeCustomer(row);
    // One SQL statement, the customer and its event: nothing else on this path (KYC's workflow starts
    // with the first submission: kyc_status not_started → pending when KYC is initiated, spec 2.1).
    return writeStatement(async (db) => {
      const insert = db.insertInto('customers').values({
        ...row, address: row.address && JSON.stringify(row.address), rejection_reasons: null, incomplete_reasons: null, review_reasons: null, kyc_decision: null, suspension: null,
      });
      await recordChangeWithEvent(db, tenant, insert, { type: 'customer.created', objectId: row.id, data: customer }, now);
      return {
        status: 201,
        body: { ...customer, kyc_link: `${deps.config.publicBaseUrl}/kyc/${token}`, kyc_link_expires_at: linkExpiresAt.toISOString() },
      };
    });
  },
});

export const listCustomers = defineRoute({
  method: 'get',
  path: '/v0/customers',
  summary: 'List customers, newest first',
  tag: TAG,
  permission: 'customers:read',
  query: CustomerListQuery,
  responses: { 200: CustomerListSchema },
  handler: async ({ deps, tenant, query }) => {
    let q = tenantRows(deps.db, 'customers', tenant);
    // Deleted customers stay readable by id but leave lists unless asked for.
    q = query.status ? q.where('status', '=', query.status) : q.where('status', '<>', 'deleted');
    if (query.kyc_status) q = q.where('kyc_status', '=', query.kyc_status);
    if (query.type) q = q.where('type', '=', query.type);
    if (query.email) q = q.where('email', '=', query.email);
    return { status: 200, body: await paginate(q, query, (row) => serializeCustomer(row)) };
  },
});

export const getCustomer = defineRoute({
  method: 'get',
  path: '/v0/customers/{customer_id}',
  summary: 'Retrieve a customer',
  tag: TAG,
  permission: 'customers:read',
  params: CustomerIdParams,
  responses: { 200: CustomerSchema },
  handler: async ({ deps, tenant, params }) => ({
    status: 200,
    body: serializeCustomer(await findCustomer(deps.db, tenant, params.customer_id)),
  }),
});

export const updateCustomer = defineRoute({
  method: 'patch',
  path: '/v0/customers/{customer_id}',
  summary: 'Update contact details, address, and identity fields before KYC approval',
  tag: TAG,
  permission: 'customers:write',
  params: CustomerIdParams,
  body: CustomerPatch,
  responses: { 200: CustomerSchema },
  handler: async ({ deps, tenant, params, body, write }) =>
    write(async (trx) => {
      const row = await findCustomer(trx, tenant, params.customer_id, { forUpdate: true });
      assertCustomerNotDeleted(row);
      const identityChange = IDENTITY_FIELDS.filter((f) => body[f] !== undefined);
      if (identityChange.length > 0 && row.kyc_status === 'approved') {
        throw invalidState(`'${identityChange[0]}' cannot change after KYC approval; contact support to correct identity data`);
      }
      if (row.type === 'individual' && body.business_name !== undefined) {
        throw invalidState("'business_name' applies to business customers only");
      }
      if (row.type === 'business' && body.date_of_birth !== undefined) {
        throw invalidState("'date_of_birth' applies to individual customers only");
      }
      const before = serializeCustomer(row);
      const now = new Date();
      const updated = await trx
        .updateTable('customers')
        .set({
          ...(body.email !== undefined ? { email: body.email.toLowerCase() } : {}),
          ...(body.phone !== undefined ? { phone: body.phone } : {}),
          ...(body.address !== undefined ? { address: JSON.stringify(body.address) } : {}),
          ...(body.first_name !== undefined ? { first_name: body.first_name } : {}),
          ...(body.last_name !== undefined ? { last_name: body.last_name } : {}),
          ...(body.business_name !== undefined ? { business_name: body.business_name } : {}),
          ...(body.date_of_birth !== undefined ? { date_of_birth: body.date_of_birth } : {}),
          ...(body.tax_id !== undefined ? { tax_id_encrypted: deps.cipher.encrypt(body.tax_id) } : {}),
          updated_at: now,
        })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      const after = serializeCustomer(updated);
      const previous = changedAttributes(before, after);
      if (body.tax_id !== undefined) previous.tax_id_provided = before.tax_id_provided;
      await recordEvent(trx, tenant, { type: 'customer.updated', objectId: row.id, data: after, previousAttributes: previous }, now);
      return { status: 200, body: after };
    }),
});

export const deleteCustomer = defineRoute({
  method: 'delete',
  path: '/v0/customers/{customer_id}',
  summary: 'Soft-delete a customer: still readable by id, no further changes',
  tag: TAG,
  permission: 'customers:write',
  params: CustomerIdParams,
  responses: { 200: CustomerSchema },
  handler: async ({ deps, tenant, params, write }) =>
    write(async (trx) => {
      const row = await findCustomer(trx, tenant, params.customer_id, { forUpdate: true });
      assertCustomerNotDeleted(row);
      const now = new Date();
      const updated = await trx
        .updateTable('customers')
        .set({ status: 'deleted', deleted_at: now, updated_at: now, kyc_link_token_hash: null })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      const after = serializeCustomer(updated);
      await recordEvent(trx, tenant, {
        type: 'customer.deleted', objectId: row.id, data: after, previousAttributes: { status: row.status },
      }, now);
      await closeKycWorkflow(deps, row.id);
      return { status: 200, body: after };
    }),
});

export const customerRoutes = [
  createCustomer,
  listCustomers,
  getCustomer,
  updateCustomer,
  deleteCustomer,
  sandboxSuspendCustomer,
  sandboxReactivateCustomer,
];
