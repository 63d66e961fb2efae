import { z } from 'zod';
import {
  AccountCreate, AccountSchema, AccountTransactionSchema, accountTransactions, ACCOUNT_CURRENCIES, createAccount, developerFeeBalances, findAccount,
  serializeAccount, serializeAccountTransaction,
} from '../../accounts/account';
import { listParams, listSchema, paginate } from '../../api/pagination';
import { defineRoute } from '../../api/route';
import { tenantRows } from '../../db/tenant-scope';

const TAG = 'Accounts';
const AccountIdParams = z.strictObject({ account_id: z.string() });

export const createAccountRoute = defineRoute({
  method: 'post',
  path: '/v0/accounts',
  summary: "Open a customer's platform account in a fiat currency (one per customer and currency)",
  tag: TAG,
  permission: 'accounts:write',
  body: AccountCreate,
  responses: { 201: AccountSchema },
  handler: async ({ tenant, body, write }) => write(async (trx) => ({ status: 201, body: await serializeAccount(trx, tenant, await createAccount(trx, tenant, body)) })),
});

export const listAccounts = defineRoute({
  method: 'get',
  path: '/v0/accounts',
  summary: 'List platform accounts, newest first, with their balances',
  tag: TAG,
  permission: 'accounts:read',
  query: z.strictObject({ ...listParams, customer_id: z.string().optional(), currency: z.enum(ACCOUNT_CURRENCIES as [string, ...string[]]).optional() }),
  responses: { 200: listSchema(AccountSchema, 'Account') },
  handler: async ({ deps, tenant, query }) => {
    let q = tenantRows(deps.db, 'platform_accounts', tenant);
    if (query.customer_id) q = q.where('customer_id', '=', query.customer_id);
    if (query.currency) q = q.where('currency', '=', query.currency);
    const page = await paginate(q, query, (row) => row);
    return { status: 200, body: { ...page, data: await Promise.all(page.data.map((row) => serializeAccount(deps.db, tenant, row))) } };
  },
});

export const getAccount = defineRoute({
  method: 'get',
  path: '/v0/accounts/{account_id}',
  summary: 'Retrieve a platform account with its available and pending balances',
  tag: TAG,
  permission: 'accounts:read',
  params: AccountIdParams,
  responses: { 200: AccountSchema },
  handler: async ({ deps, tenant, params }) => ({ status: 200, body: await serializeAccount(deps.db, tenant, await findAccount(deps.db, tenant, params.account_id)) }),
});

export const listAccountTransactions = defineRoute({
  method: 'get',
  path: '/v0/accounts/{account_id}/transactions',
  summary: "The account's ledger movements, newest first",
  tag: TAG,
  permission: 'accounts:read',
  params: AccountIdParams,
  query: z.strictObject({ ...listParams }),
  responses: { 200: listSchema(AccountTransactionSchema, 'AccountTransaction') },
  handler: async ({ deps, tenant, params, query }) => {
    const account = await findAccount(deps.db, tenant, params.account_id);
    return { status: 200, body: await paginate(accountTransactions(deps.db, tenant, account), query, serializeAccountTransaction(account)) };
  },
});

export const getBalance = defineRoute({
  method: 'get',
  path: '/v0/balance',
  summary: "The developer's own balance: the developer_fee collected on its transfers, per currency",
  tag: TAG,
  permission: 'accounts:read',
  responses: {
    200: z.object({
      object: z.literal('balance'),
      developer_fees: z.array(z.object({ currency: z.string(), amount: z.string() })).describe('Collected developer_fee, per source currency'),
    }).meta({ id: 'DeveloperBalance' }),
  },
  handler: async ({ deps, tenant }) => ({ status: 200, body: { object: 'balance' as const, developer_fees: await developerFeeBalances(deps.db, tenant) } }),
});

export const accountRoutes = [createAccountRoute, listAccounts, getAccount, listAccountTransactions, getBalance];
