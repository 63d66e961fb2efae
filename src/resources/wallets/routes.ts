import { sql } from 'kysely';
import { z } from 'zod';
import { listParams, listSchema, paginate } from '../../api/pagination';
import { defineRoute } from '../../api/route';
import { findCustomer } from '../../customers/customer';
import { tenantRows } from '../../db/tenant-scope';
import { ASSET_SCALE, formatAmount, parseAmount } from '../../domain/money';
import { CHAIN_RAILS, RAILS, railBoundsMinor, type ChainRail } from '../../domain/rails';
import { invalidField, invalidState } from '../../errors';
import { BalanceSchema, createWallet, prepareWalletChains, findWallet, serializeWallet, walletBalances, WalletCreate, WalletSchema } from '../../wallets/wallet';
import { serializeWalletTransaction, WalletTransactionSchema } from '../../wallets/transactions';
import { startWalletWatcher } from '../../wallets/workflow-client';
import { CustomerIdParams } from '../customers/schemas';
import { checkMpcConfig, createMpcWallet } from '../../wallets/mpc-wallet';
import { startKeygenSession } from '../../mpc/workflow-client';
import { getMpcSession, listMpcSessions, postMpcMessages } from './mpc-sessions';

const TAG = 'Wallets';
const WalletIdParams = z.strictObject({ wallet_id: z.string() });
const WalletListSchema = listSchema(WalletSchema, 'Wallet');

export const createWalletRoute = defineRoute({
  method: 'post',
  path: '/v0/wallets',
  summary: 'Create a wallet for a customer (custodial: the platform holds its key, sealed; mpc: 2-of-3 shares, key generation with the customer\'s signer)',
  tag: TAG,
  permission: 'accounts:write',
  body: WalletCreate,
  responses: { 201: WalletSchema },
  handler: async ({ deps, tenant, body, write }) => {
    checkMpcConfig(body);
    const chains = await prepareWalletChains(deps, tenant, body);
    return write(async (trx) => {
      if (body.type === 'mpc') {
        const { wallet, sessionId } = await createMpcWallet(trx, tenant, body, chains, deps.config.MPC_KEYGEN_EXPIRY_MS);
        for (const { chain } of chains) await startWalletWatcher(deps, chain);
        await startKeygenSession(deps, sessionId, wallet.id);
        return { status: 201, body: serializeWallet(wallet) };
      }
      const wallet = await createWallet(trx, deps, tenant, body, chains);
      // In the transaction: the wallet exists only if its chains' watchers do.
      for (const { chain } of chains) await startWalletWatcher(deps, chain);
      return { status: 201, body: serializeWallet(wallet) };
    });
  },
});

export const listWallets = defineRoute({
  method: 'get',
  path: '/v0/wallets',
  summary: 'List wallets, newest first',
  tag: TAG,
  permission: 'accounts:read',
  query: z.strictObject({
    ...listParams,
    customer_id: z.string().optional(),
    type: z.enum(['custodial', 'mpc']).optional(),
    chain: z.enum(CHAIN_RAILS).optional(),
  }),
  responses: { 200: WalletListSchema },
  handler: async ({ deps, tenant, query }) => {
    let q = tenantRows(deps.db, 'wallets', tenant);
    if (query.customer_id) q = q.where('customer_id', '=', query.customer_id);
    if (query.type) q = q.where('type', '=', query.type);
    if (query.chain) q = q.where(sql<boolean>`chains @> ${JSON.stringify([query.chain])}::jsonb`);
    return { status: 200, body: await paginate(q, query, serializeWallet) };
  },
});

export const listCustomerWallets = defineRoute({
  method: 'get',
  path: '/v0/customers/{customer_id}/wallets',
  summary: "List the customer's wallets",
  tag: 'Customers',
  permission: 'accounts:read',
  params: CustomerIdParams,
  query: z.strictObject({ ...listParams }),
  responses: { 200: WalletListSchema },
  handler: async ({ deps, tenant, params, query }) => {
    const customer = await findCustomer(deps.db, tenant, params.customer_id);
    return { status: 200, body: await paginate(tenantRows(deps.db, 'wallets', tenant).where('customer_id', '=', customer.id), query, serializeWallet) };
  },
});

export const getWallet = defineRoute({
  method: 'get',
  path: '/v0/wallets/{wallet_id}',
  summary: 'Retrieve a wallet',
  tag: TAG,
  permission: 'accounts:read',
  params: WalletIdParams,
  responses: { 200: WalletSchema },
  handler: async ({ deps, tenant, params }) => ({ status: 200, body: serializeWallet(await findWallet(deps.db, tenant, params.wallet_id)) }),
});

export const getWalletBalances = defineRoute({
  method: 'get',
  path: '/v0/wallets/{wallet_id}/balances',
  summary: "The wallet's balance of every asset of every chain it holds, read from the chain",
  tag: TAG,
  permission: 'accounts:read',
  params: WalletIdParams,
  responses: { 200: z.object({ object: z.literal('list'), data: z.array(BalanceSchema) }) },
  handler: async ({ deps, tenant, params }) => {
    const wallet = await findWallet(deps.db, tenant, params.wallet_id);
    return { status: 200, body: { object: 'list' as const, data: await walletBalances(deps.db, deps.chains, wallet) } };
  },
});

export const listWalletTransactions = defineRoute({
  method: 'get',
  path: '/v0/wallets/{wallet_id}/transactions',
  summary: "The wallet's token transfers in and out, newest first, as its chains' watchers saw them",
  tag: TAG,
  permission: 'accounts:read',
  params: WalletIdParams,
  query: z.strictObject({
    ...listParams,
    chain: z.enum(CHAIN_RAILS).optional(),
    state: z.enum(['pending', 'confirmed', 'dropped']).optional(),
  }),
  responses: { 200: listSchema(WalletTransactionSchema, 'WalletTransaction') },
  handler: async ({ deps, tenant, params, query }) => {
    const wallet = await findWallet(deps.db, tenant, params.wallet_id);
    let q = tenantRows(deps.db, 'wallet_transactions', tenant).where('wallet_id', '=', wallet.id);
    if (query.chain) q = q.where('chain', '=', query.chain);
    if (query.state) q = q.where('state', '=', query.state);
    return { status: 200, body: await paginate(q, query, serializeWalletTransaction) };
  },
});

export const sandboxFundWallet = defineRoute({
  method: 'post',
  path: '/v0/sandbox/wallets/{wallet_id}/fund',
  summary: 'Sandbox: tokens arrive at the wallet on one of its chains (minted on the local node, with native asset for its gas; or a simulated transfer)',
  tag: 'Sandbox',
  permission: 'payments:write',
  sandboxOnly: true,
  params: WalletIdParams,
  body: z.strictObject({ chain: z.enum(CHAIN_RAILS), currency: z.string().toLowerCase(), amount: z.string() }),
  responses: { 200: z.object({ tx_hash: z.string() }) },
  handler: async ({ deps, tenant, params, body }) => {
    const wallet = await findWallet(deps.db, tenant, params.wallet_id);
    if (wallet.status !== 'active') throw invalidState(`Wallet ${wallet.id} is ${wallet.status}: it has no address to fund yet`);
    if (!wallet.chains.includes(body.chain)) throw invalidField('body', 'chain', `the wallet holds ${wallet.chains.join(', ')}, not ${body.chain}`);
    if (!RAILS[body.chain].currencies.includes(body.currency)) throw invalidField('body', 'currency', `${body.chain} carries ${RAILS[body.chain].currencies.join(', ')}`);
    const scale = ASSET_SCALE[body.currency]!;
    const amountMinor = parseAmount(body.amount, scale);
    // Bounded as one payment on the chain is (the rail table).
    const { max } = railBoundsMinor(body.chain, body.currency);
    if (amountMinor === null || amountMinor > max) {
      throw invalidField('body', 'amount', `must be a positive amount of ${body.currency}, at most ${formatAmount(max, scale)}`);
    }
    const { txHash } = await deps.sandbox.chains[body.chain as ChainRail].sandboxDeposit({ currency: body.currency, address: wallet.addresses[body.chain]!, amountMinor, gasMoney: true });
    return { status: 200, body: { tx_hash: txHash } };
  },
});

export const walletRoutes = [
  createWalletRoute, listWallets, listCustomerWallets, getWallet, getWalletBalances, listWalletTransactions, sandboxFundWallet, listMpcSessions, getMpcSession, postMpcMessages,
];
