import { z } from 'zod';
import { defineRoute } from '../../api/route';
import { CustomerIdParams } from '../customers/schemas';
import { CustomerSchema, findCustomer, serializeCustomer } from '../../customers/customer';
import { KycSubmissionInput, submitKyc } from '../../kyc/submissions';
import { decideKyc } from '../../kyc/workflow-client';

export const submitKycRoute = defineRoute({
  method: 'post',
  path: '/v0/customers/{customer_id}/kyc',
  summary: 'Submit identity documents (and beneficial owners for businesses); publishable keys allowed',
  tag: 'KYC',
  permission: 'customers:write',
  publishable: true,
  params: CustomerIdParams,
  body: KycSubmissionInput,
  responses: { 202: CustomerSchema },
  handler: async ({ deps, tenant, params, body }) => ({
    status: 202,
    body: await submitKyc(deps, tenant, params.customer_id, body, 'api'),
  }),
});

export const KycDecisionInput = z.strictObject({
  decision: z.enum(['approve', 'reject']),
  reasons: z.array(z.string().trim().min(1).max(200)).min(1).max(10).optional(),
});

export const sandboxKycDecisionRoute = defineRoute({
  method: 'post',
  path: '/v0/sandbox/customers/{customer_id}/kyc_decision',
  summary: 'Sandbox: decide a KYC case waiting in manual_review, as a compliance operator would',
  tag: 'Sandbox',
  permission: 'payments:write',
  sandboxOnly: true,
  params: CustomerIdParams,
  body: KycDecisionInput,
  responses: { 200: CustomerSchema },
  handler: async ({ deps, tenant, params, body, auth }) => {
    const customer = await findCustomer(deps.db, tenant, params.customer_id);
    await decideKyc(deps, customer.id, { decision: body.decision, reasons: body.reasons, operator: `sandbox:${auth.keyId}` });
    return { status: 200, body: serializeCustomer(await findCustomer(deps.db, tenant, customer.id)) };
  },
});

export const kycRoutes = [submitKycRoute, sandboxKycDecisionRoute];
