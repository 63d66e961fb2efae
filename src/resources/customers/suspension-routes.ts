import { z } from 'zod';
import { defineRoute } from '../../api/route';
import { CustomerSchema, serializeCustomer } from '../../customers/customer';
import { reactivateCustomer, suspendCustomer } from '../../customers/suspension';
import { CustomerIdParams } from './schemas';

// Sandbox: what a compliance operator does with `npm run cli -- customers suspend|reactivate`
// (docs/KYC.md, "Suspension").

export const sandboxSuspendCustomer = defineRoute({
  method: 'post',
  path: '/v0/sandbox/customers/{customer_id}/suspend',
  summary: 'Sandbox: suspend a customer, as a compliance operator would (nothing new starts; funded transfers are held in review)',
  tag: 'Sandbox',
  permission: 'payments:write',
  sandboxOnly: true,
  params: CustomerIdParams,
  body: z.strictObject({ reason: z.string().trim().min(1).max(500).describe('Why: shown on the customer and on the transfers it holds') }),
  responses: { 200: CustomerSchema },
  handler: async ({ deps, tenant, params, body, auth }) => ({
    status: 200,
    body: serializeCustomer(await suspendCustomer(deps.db, tenant, params.customer_id, { reason: body.reason, operator: `sandbox:${auth.keyId}` })),
  }),
});

export const sandboxReactivateCustomer = defineRoute({
  method: 'post',
  path: '/v0/sandbox/customers/{customer_id}/reactivate',
  summary: 'Sandbox: lift a suspension; the customer goes back to the status it had',
  tag: 'Sandbox',
  permission: 'payments:write',
  sandboxOnly: true,
  params: CustomerIdParams,
  responses: { 200: CustomerSchema },
  handler: async ({ deps, tenant, params }) => ({
    status: 200,
    body: serializeCustomer(await reactivateCustomer(deps.db, tenant, params.customer_id)),
  }),
});
