import { z } from 'zod';
import { listParams, listSchema, paginate } from '../../api/pagination';
import { defineRoute } from '../../api/route';
import { findCustomer } from '../../customers/customer';
import { tenantRows } from '../../db/tenant-scope';
import {
  createLiquidationAddress, prepareLiquidationAddress, LiquidationAddressCreate, LiquidationAddressSchema, LiquidationAddressUpdate,
  serializeLiquidationAddress, updateLiquidationAddress,
} from '../../payment-routes/liquidation-addresses';
import { DrainSchema, routeDrains, serializeDrain } from '../../payment-routes/drains';
import { findPaymentRoute, prepareRouteChange } from '../../payment-routes/route-changes';
import { startWalletWatcher } from '../../wallets/workflow-client';
import { CustomerIdParams } from '../customers/schemas';

const TAG = 'Liquidation addresses';
const BASE = '/v0/customers/{customer_id}/liquidation_addresses';
const LiquidationAddressParams = z.strictObject({ customer_id: z.string(), liquidation_address_id: z.string() });

export const createLiquidationAddressRoute = defineRoute({
  method: 'post',
  path: BASE,
  summary: "Create a customer's permanent address on a chain: every deposit to it becomes a transfer to the destination",
  tag: TAG,
  permission: 'transfers:write',
  params: CustomerIdParams,
  body: LiquidationAddressCreate,
  responses: { 201: LiquidationAddressSchema },
  handler: async ({ deps, tenant, params, body, write }) => {
    const position = await prepareLiquidationAddress(deps, tenant, params.customer_id, body);
    return write(async (trx) => {
      const row = await createLiquidationAddress(trx, deps, tenant, params.customer_id, body, position);
      // In the transaction: the address exists only if its chain's watcher does.
      await startWalletWatcher(deps, body.chain);
      return { status: 201, body: serializeLiquidationAddress(row) };
    });
  },
});

export const listLiquidationAddresses = defineRoute({
  method: 'get',
  path: BASE,
  summary: "List the customer's liquidation addresses, newest first",
  tag: TAG,
  permission: 'transfers:read',
  params: CustomerIdParams,
  query: z.strictObject({ ...listParams, status: z.enum(['active', 'deactivated']).optional() }),
  responses: { 200: listSchema(LiquidationAddressSchema, 'LiquidationAddress') },
  handler: async ({ deps, tenant, params, query }) => {
    await findCustomer(deps.db, tenant, params.customer_id);
    let q = tenantRows(deps.db, 'payment_routes', tenant).where('customer_id', '=', params.customer_id).where('kind', '=', 'liquidation_address');
    if (query.status) q = q.where('status', '=', query.status);
    return { status: 200, body: await paginate(q, query, serializeLiquidationAddress) };
  },
});

export const getLiquidationAddress = defineRoute({
  method: 'get',
  path: `${BASE}/{liquidation_address_id}`,
  summary: 'Retrieve a liquidation address',
  tag: TAG,
  permission: 'transfers:read',
  params: LiquidationAddressParams,
  responses: { 200: LiquidationAddressSchema },
  handler: async ({ deps, tenant, params }) => ({
    status: 200, body: serializeLiquidationAddress(await findPaymentRoute(deps.db, tenant, 'liquidation_address', params.liquidation_address_id, { customerId: params.customer_id })),
  }),
});

export const updateLiquidationAddressRoute = defineRoute({
  method: 'patch',
  path: `${BASE}/{liquidation_address_id}`,
  summary: "Change where the address's next deposits go, its developer fee, limits or return address",
  tag: TAG,
  permission: 'transfers:write',
  params: LiquidationAddressParams,
  body: LiquidationAddressUpdate,
  responses: { 200: LiquidationAddressSchema },
  handler: async ({ deps, tenant, params, body, write }) => {
    await prepareRouteChange(deps, tenant, 'liquidation_address', params.customer_id, params.liquidation_address_id, body);
    return write(async (trx) => ({
      status: 200, body: serializeLiquidationAddress(await updateLiquidationAddress(deps, trx, tenant, params.customer_id, params.liquidation_address_id, body)),
    }));
  },
});

const statusRoute = (action: 'deactivate' | 'reactivate', status: 'active' | 'deactivated', summary: string) => defineRoute({
  method: 'post',
  path: `${BASE}/{liquidation_address_id}/${action}`,
  summary,
  tag: TAG,
  permission: 'transfers:write',
  params: LiquidationAddressParams,
  responses: { 200: LiquidationAddressSchema },
  handler: async ({ deps, tenant, params, write }) => write(async (trx) => ({
    status: 200, body: serializeLiquidationAddress(await updateLiquidationAddress(deps, trx, tenant, params.customer_id, params.liquidation_address_id, { status })),
  })),
});

export const listDrains = defineRoute({
  method: 'get',
  path: `${BASE}/{liquidation_address_id}/drains`,
  summary: 'Each deposit the address received, newest first, and what became of it',
  tag: TAG,
  permission: 'transfers:read',
  params: LiquidationAddressParams,
  query: z.strictObject({ ...listParams }),
  responses: { 200: listSchema(DrainSchema, 'LiquidationAddressDrain') },
  handler: async ({ deps, tenant, params, query }) => {
    const route = await findPaymentRoute(deps.db, tenant, 'liquidation_address', params.liquidation_address_id, { customerId: params.customer_id });
    return { status: 200, body: await paginate(routeDrains(deps.db, tenant, route.id), query, (row) => serializeDrain(row, row.transfer_state)) };
  },
});

export const liquidationAddressRoutes = [
  createLiquidationAddressRoute, listLiquidationAddresses, getLiquidationAddress, updateLiquidationAddressRoute,
  statusRoute('deactivate', 'deactivated', 'Stop forwarding: deposits that arrive from now on are held for operators, or go back to the return address'),
  statusRoute('reactivate', 'active', 'Forward deposits again'),
  listDrains,
];
