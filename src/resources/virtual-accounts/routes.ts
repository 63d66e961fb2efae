import { z } from 'zod';
import { listParams, listSchema, paginate } from '../../api/pagination';
import { defineRoute } from '../../api/route';
import { findCustomer } from '../../customers/customer';
import { tenantRows } from '../../db/tenant-scope';
import { ASSET_SCALE, formatAmount, parseAmount } from '../../domain/money';
import { FIAT_RAILS, railBoundsMinor } from '../../domain/rails';
import { invalidField } from '../../errors';
import { routeDrains, serializeVirtualAccountDeposit, VirtualAccountDepositSchema } from '../../payment-routes/drains';
import {
  createVirtualAccount, prepareVirtualAccount, serializeVirtualAccount, updateVirtualAccount,
  VirtualAccountCreate, VirtualAccountSchema, VirtualAccountUpdate,
} from '../../payment-routes/virtual-accounts';
import { findPaymentRoute, prepareRouteChange } from '../../payment-routes/route-changes';
import { handleRailEvent } from '../../transfers/rail-events';
import { CustomerIdParams } from '../customers/schemas';

const TAG = 'Virtual accounts';
const BASE = '/v0/customers/{customer_id}/virtual_accounts';
const VirtualAccountParams = z.strictObject({ customer_id: z.string(), virtual_account_id: z.string() });
const VirtualAccountIdParams = z.strictObject({ virtual_account_id: z.string() });

export const createVirtualAccountRoute = defineRoute({
  method: 'post',
  path: BASE,
  summary: "Create a customer's permanent bank deposit details: every payment to them becomes a transfer to the destination",
  tag: TAG,
  permission: 'transfers:write',
  params: CustomerIdParams,
  body: VirtualAccountCreate,
  responses: { 201: VirtualAccountSchema },
  handler: async ({ deps, tenant, params, body, write }) => {
    await prepareVirtualAccount(deps, tenant, params.customer_id, body);
    return write(async (trx) => ({
      status: 201, body: serializeVirtualAccount(deps.config, await createVirtualAccount(trx, deps, tenant, params.customer_id, body)),
    }));
  },
});

export const listVirtualAccounts = defineRoute({
  method: 'get',
  path: BASE,
  summary: "List the customer's virtual accounts, newest first",
  tag: TAG,
  permission: 'transfers:read',
  params: CustomerIdParams,
  query: z.strictObject({ ...listParams, status: z.enum(['active', 'deactivated']).optional() }),
  responses: { 200: listSchema(VirtualAccountSchema, 'VirtualAccount') },
  handler: async ({ deps, tenant, params, query }) => {
    await findCustomer(deps.db, tenant, params.customer_id);
    let q = tenantRows(deps.db, 'payment_routes', tenant).where('customer_id', '=', params.customer_id).where('kind', '=', 'virtual_account');
    if (query.status) q = q.where('status', '=', query.status);
    return { status: 200, body: await paginate(q, query, (row) => serializeVirtualAccount(deps.config, row)) };
  },
});

export const getVirtualAccount = defineRoute({
  method: 'get',
  path: `${BASE}/{virtual_account_id}`,
  summary: 'Retrieve a virtual account',
  tag: TAG,
  permission: 'transfers:read',
  params: VirtualAccountParams,
  responses: { 200: VirtualAccountSchema },
  handler: async ({ deps, tenant, params }) => ({
    status: 200,
    body: serializeVirtualAccount(deps.config, await findPaymentRoute(deps.db, tenant, 'virtual_account', params.virtual_account_id, { customerId: params.customer_id })),
  }),
});

export const updateVirtualAccountRoute = defineRoute({
  method: 'patch',
  path: `${BASE}/{virtual_account_id}`,
  summary: "Change where the account's next deposits go, its developer fee or its limits",
  tag: TAG,
  permission: 'transfers:write',
  params: VirtualAccountParams,
  body: VirtualAccountUpdate,
  responses: { 200: VirtualAccountSchema },
  handler: async ({ deps, tenant, params, body, write }) => {
    await prepareRouteChange(deps, tenant, 'virtual_account', params.customer_id, params.virtual_account_id, body);
    return write(async (trx) => ({
      status: 200,
      body: serializeVirtualAccount(deps.config, await updateVirtualAccount(deps, trx, tenant, params.customer_id, params.virtual_account_id, body)),
    }));
  },
});

const statusRoute = (action: 'deactivate' | 'reactivate', status: 'active' | 'deactivated', summary: string) => defineRoute({
  method: 'post',
  path: `${BASE}/{virtual_account_id}/${action}`,
  summary,
  tag: TAG,
  permission: 'transfers:write',
  params: VirtualAccountParams,
  responses: { 200: VirtualAccountSchema },
  handler: async ({ deps, tenant, params, write }) => write(async (trx) => ({
    status: 200,
    body: serializeVirtualAccount(deps.config, await updateVirtualAccount(deps, trx, tenant, params.customer_id, params.virtual_account_id, { status })),
  })),
});

export const virtualAccountHistory = defineRoute({
  method: 'get',
  path: '/v0/virtual_accounts/{virtual_account_id}/history',
  summary: 'Each deposit the account received, newest first, and what became of it',
  tag: TAG,
  permission: 'transfers:read',
  params: VirtualAccountIdParams,
  query: z.strictObject({ ...listParams }),
  responses: { 200: listSchema(VirtualAccountDepositSchema, 'VirtualAccountDeposit') },
  handler: async ({ deps, tenant, params, query }) => {
    const route = await findPaymentRoute(deps.db, tenant, 'virtual_account', params.virtual_account_id);
    return { status: 200, body: await paginate(routeDrains(deps.db, tenant, route.id), query, (row) => serializeVirtualAccountDeposit(row, row.transfer_state)) };
  },
});

export const sandboxVirtualAccountDeposit = defineRoute({
  method: 'post',
  path: '/v0/sandbox/virtual_accounts/{virtual_account_id}/deposit',
  summary: "Sandbox: a payment to the virtual account's deposit details arrives, as the rail's provider would report it",
  tag: 'Sandbox',
  permission: 'payments:write',
  sandboxOnly: true,
  params: VirtualAccountIdParams,
  body: z.strictObject({
    amount: z.string(),
    currency: z.string().trim().toLowerCase().optional().describe("By default the account's currency"),
    payment_rail: z.enum(FIAT_RAILS).optional().describe("By default the account's rail"),
  }),
  responses: { 200: VirtualAccountDepositSchema },
  handler: async ({ deps, tenant, params, body }) => {
    const route = await findPaymentRoute(deps.db, tenant, 'virtual_account', params.virtual_account_id);
    const rail = body.payment_rail ?? route.source_rail as (typeof FIAT_RAILS)[number];
    const currency = body.currency ?? route.source_currency;
    const scale = ASSET_SCALE[currency];
    if (scale === undefined) throw invalidField('body', 'currency', `${currency} is not a currency the platform knows`);
    const amountMinor = parseAmount(body.amount, scale);
    if (amountMinor === null) throw invalidField('body', 'amount', `must be a positive amount with at most ${scale} decimals for ${currency}`);
    const { max } = railBoundsMinor(rail, currency);
    if (amountMinor > max) throw invalidField('body', 'amount', `${rail} carries at most ${formatAmount(max, scale)} ${currency} in one payment`);
    const inbound = await deps.sandbox.rails.receiveInbound({ tenant, rail, amountMinor, currency, reference: route.deposit_reference! });
    // The path a provider's webhook takes (rail-events.ts), as the simulated provider's event.
    await handleRailEvent(deps, {
      id: `sandbox:${inbound.id}`, type: 'payment.received', providerPaymentId: inbound.id, rail, currency, amountMinor, reference: route.deposit_reference!,
    }, tenant.environment);
    const deposit = await routeDrains(deps.db, tenant, route.id).where('deposit_key', '=', `${rail}:${inbound.id}`).executeTakeFirstOrThrow();
    return { status: 200, body: serializeVirtualAccountDeposit(deposit, deposit.transfer_state) };
  },
});

export const virtualAccountRoutes = [
  createVirtualAccountRoute, listVirtualAccounts, getVirtualAccount, updateVirtualAccountRoute,
  statusRoute('deactivate', 'deactivated', 'Stop forwarding: payments that arrive from now on go back to their sender'),
  statusRoute('reactivate', 'active', 'Forward deposits again'),
  virtualAccountHistory, sandboxVirtualAccountDeposit,
];
