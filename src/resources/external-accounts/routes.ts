import { z } from 'zod';
import { defineRoute, type HandlerContext } from '../../api/route';
import { ApiError, invalidField, invalidState } from '../../errors';
import { isChainRail } from '../../domain/rails';
import { paginate } from '../../api/pagination';
import { tenantRows } from '../../db/tenant-scope';
import { recordEvent } from '../../domain/events';
import { newId } from '../../ids';
import { assertCustomerNotDeleted, assertCustomerNotSuspended, findBodyCustomer, findCustomer } from '../../customers/customer';
import { CustomerIdParams } from '../customers/schemas';
import { accountIdentity, ExternalAccountSchema, findExternalAccount, serializeExternalAccount } from '../../external-accounts/external-account';
import { startMicroDepositVerification, submitVerificationAmounts } from '../../external-accounts/verification-client';
import { formatAmount, parseAmount } from '../../domain/money';
import { ExternalAccountCreate, ExternalAccountListQuery, ExternalAccountListSchema, type ExternalAccountCreateInput } from './schemas';

const TAG = 'External accounts';

/** What is secret (encrypted) and what is shown; `accountIdentity` says what identifies it. */
function accountDetails(body: ExternalAccountCreateInput) {
  switch (body.type) {
    case 'us_bank_account':
      return { secret: body.account_number, columns: { account_type: body.account_type, routing_number: body.routing_number, bank_name: body.bank_name ?? null } };
    case 'international_bank_account': {
      const iban = body.iban.replace(/\s+/g, '').toUpperCase();
      return { secret: iban, columns: { bic: body.bic.replace(/\s+/g, '').toUpperCase(), bank_name: body.bank_name, bank_country: body.bank_country } };
    }
    case 'mx_bank_account':
      return { secret: body.clabe, columns: { routing_number: body.clabe.slice(0, 3), bank_name: body.bank_name ?? null } };
    case 'crypto_address':
      return { secret: null, columns: { chain: body.chain, address: body.address, label: body.label ?? null } };
  }
}

export const createExternalAccount = defineRoute({
  method: 'post',
  path: '/v0/external-accounts',
  summary: 'Link a bank account or crypto address to a customer',
  tag: TAG,
  permission: 'accounts:write',
  body: ExternalAccountCreate,
  responses: { 201: ExternalAccountSchema },
  handler: async ({ deps, tenant, body, write }) => {
    // A US account is proven with ACH micro-deposits: live keys need a live ACH provider for that.
    const achUnavailable = body.type === 'us_bank_account' ? deps.availability.railUnavailable(tenant.environment, 'ach') : undefined;
    if (achUnavailable) {
      throw new ApiError('service_unavailable', `US bank accounts are verified with ACH micro-deposits, and ${achUnavailable}: nothing was created`, { location: 'body', key: 'type' });
    }
    if (body.type === 'crypto_address' && isChainRail(body.chain) && deps.chains[body.chain].isTokenContract(body.address)) {
      throw invalidField('body', 'address', `is a token contract on ${body.chain}: tokens sent to it are lost`);
    }
    return write(async (trx) => {
      const customer = await findBodyCustomer(trx, tenant, body.customer_id, 'customer_id');
      assertCustomerNotDeleted(customer);
      assertCustomerNotSuspended(customer);
      const details = accountDetails(body);
      const identity = accountIdentity({ type: body.type, secret: details.secret, ...details.columns });
      const fingerprint = deps.cipher.fingerprint(identity);
      const existing = await trx
        .selectFrom('external_accounts')
        .select('id')
        .where('customer_id', '=', customer.id)
        // Under any key still held: an account linked before a key rotation is still found.
        .where('fingerprint', 'in', deps.cipher.fingerprints(identity))
        .where('status', '<>', 'deleted')
        .executeTakeFirst();
      if (existing) throw invalidState(`This account is already linked to the customer as ${existing.id}`);
      const now = new Date();
      const row = await trx
        .insertInto('external_accounts')
        .values({
          id: newId('externalAccount', now.getTime()),
          developer_id: tenant.developerId,
          environment: tenant.environment,
          customer_id: customer.id,
          type: body.type,
          // US accounts are usable once micro-deposits prove ownership; the others at once.
          status: body.type === 'us_bank_account' ? 'pending_verification' : 'active',
          account_name: 'account_name' in body ? body.account_name : null,
          account_type: null,
          routing_number: null,
          bank_name: null,
          bank_country: null,
          bic: null,
          chain: null,
          address: null,
          label: null,
          ...details.columns,
          number_encrypted: details.secret ? deps.cipher.encrypt(details.secret) : null,
          last4: details.secret ? details.secret.slice(-4) : null,
          fingerprint,
          failure_reason: null,
          created_at: now,
          updated_at: now,
          deleted_at: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      const account = serializeExternalAccount(row);
      await recordEvent(trx, tenant, { type: 'external_account.created', objectId: row.id, data: account }, now);
      // Started inside the transaction: without Temporal the account is not created (503, nothing done).
      if (body.type === 'us_bank_account') await startMicroDepositVerification(deps, tenant, { id: row.id, customerId: customer.id, accountNumber: body.account_number });
      return { status: 201, body: account };
    });
  },
});

async function listAccounts(ctx: HandlerContext<unknown, z.output<typeof ExternalAccountListQuery>, unknown>, customerId?: string) {
  const { deps, tenant, query } = ctx;
  let q = tenantRows(deps.db, 'external_accounts', tenant);
  const customer = customerId ?? query.customer_id;
  if (customer) q = q.where('customer_id', '=', customer);
  // Deleted links stay readable by id but leave lists unless asked for.
  q = query.status ? q.where('status', '=', query.status) : q.where('status', '<>', 'deleted');
  if (query.type) q = q.where('type', '=', query.type);
  if (query.chain) q = q.where('chain', '=', query.chain);
  return { status: 200, body: await paginate(q, query, serializeExternalAccount) };
}

export const listExternalAccounts = defineRoute({
  method: 'get',
  path: '/v0/external-accounts',
  summary: 'List external accounts, newest first',
  tag: TAG,
  permission: 'accounts:read',
  query: ExternalAccountListQuery,
  responses: { 200: ExternalAccountListSchema },
  handler: (ctx) => listAccounts(ctx),
});

export const listCustomerExternalAccounts = defineRoute({
  method: 'get',
  path: '/v0/customers/{customer_id}/external-accounts',
  summary: "List the customer's external accounts",
  tag: TAG,
  permission: 'accounts:read',
  params: CustomerIdParams,
  query: ExternalAccountListQuery.omit({ customer_id: true }),
  responses: { 200: ExternalAccountListSchema },
  handler: async (ctx) => {
    await findCustomer(ctx.deps.db, ctx.tenant, ctx.params.customer_id);
    return listAccounts(ctx as never, ctx.params.customer_id);
  },
});

export const getExternalAccount = defineRoute({
  method: 'get',
  path: '/v0/external-accounts/{external_account_id}',
  summary: 'Retrieve an external account',
  tag: TAG,
  permission: 'accounts:read',
  params: z.strictObject({ external_account_id: z.string() }),
  responses: { 200: ExternalAccountSchema },
  handler: async ({ deps, tenant, params }) => ({
    status: 200,
    body: serializeExternalAccount(await findExternalAccount(deps.db, tenant, params.external_account_id)),
  }),
});

export const deleteExternalAccount = defineRoute({
  method: 'delete',
  path: '/v0/external-accounts/{external_account_id}',
  summary: 'Remove an external account: no new transfers to it; transfers under way continue',
  tag: TAG,
  permission: 'accounts:write',
  params: z.strictObject({ external_account_id: z.string() }),
  responses: { 200: ExternalAccountSchema },
  handler: async ({ tenant, params, write }) =>
    write(async (trx) => {
      const row = await findExternalAccount(trx, tenant, params.external_account_id, { forUpdate: true });
      if (row.status === 'deleted') throw invalidState(`External account ${row.id} is already deleted`);
      const now = new Date();
      const updated = await trx
        .updateTable('external_accounts')
        .set({ status: 'deleted', deleted_at: now, updated_at: now })
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      const account = serializeExternalAccount(updated);
      await recordEvent(trx, tenant, { type: 'external_account.deleted', objectId: row.id, data: account, previousAttributes: { status: row.status } }, now);
      return { status: 200, body: account };
    }),
});

const amountString = z.string().regex(/^(0|[1-9]\d*)\.\d{2}$/, 'must be a decimal amount with two decimals and no leading zeros, e.g. "0.32"');

export const verifyExternalAccount = defineRoute({
  method: 'post',
  path: '/v0/external-accounts/{external_account_id}/verify',
  summary: 'Confirm the two micro-deposit amounts of a US bank account (any order)',
  tag: TAG,
  permission: 'accounts:write',
  params: z.strictObject({ external_account_id: z.string() }),
  body: z.strictObject({ amounts: z.array(amountString).length(2, 'must hold the two amounts') }),
  responses: {
    200: ExternalAccountSchema.extend({
      verification: z.object({
        result: z.enum(['verified', 'incorrect', 'verification_failed']),
        attempts_remaining: z.number().int().min(0),
      }),
    }).meta({ id: 'ExternalAccountVerification' }),
  },
  handler: async ({ deps, tenant, params, body }) => {
    const account = await findExternalAccount(deps.db, tenant, params.external_account_id);
    if (account.type !== 'us_bank_account') throw invalidState('Only US bank accounts are verified with micro-deposits');
    if (account.status !== 'pending_verification') throw invalidState(`Verification is already final: ${account.status}`);
    const cents = body.amounts.map((a) => parseAmount(a, 2));
    cents.forEach((c, i) => {
      if (c === null || c > 49n) throw invalidField('body', `amounts.${i}`, 'Micro-deposits are between 0.01 and 0.49');
    });
    const verification = await submitVerificationAmounts(deps, account.id, cents.map(Number));
    const after = await findExternalAccount(deps.db, tenant, account.id);
    return { status: 200, body: { ...serializeExternalAccount(after), verification } };
  },
});

export const sandboxMicroDeposits = defineRoute({
  method: 'get',
  path: '/v0/sandbox/external-accounts/{external_account_id}/micro-deposits',
  summary: 'Sandbox: the micro-deposits sent to a US bank account, to test verification',
  tag: 'Sandbox',
  permission: 'payments:read',
  sandboxOnly: true,
  params: z.strictObject({ external_account_id: z.string() }),
  responses: {
    200: z.object({
      object: z.literal('list'),
      data: z.array(z.object({
        id: z.string(), object: z.literal('payment'), direction: z.enum(['credit', 'debit']), amount: z.string(), currency: z.string(),
        status: z.enum(['pending', 'settled']), settles_at: z.iso.datetime(),
      })),
      has_more: z.boolean(),
    }),
  },
  handler: async ({ deps, tenant, params }) => {
    const account = await findExternalAccount(deps.db, tenant, params.external_account_id);
    // From the simulator, or from the bank's files when the sandbox runs on them (SANDBOX_BANK_FILES).
    const purposes = ['micro_deposit', 'micro_deposit_recovery'] as const;
    const simulated = await deps.db.selectFrom('rail_payments').select(['id', 'direction', 'amount_minor', 'currency', 'settles_at', 'created_at'])
      .where('external_account_id', '=', account.id).where('purpose', 'in', purposes).execute();
    const filed = await deps.db.selectFrom('bank_payments').select(['id', 'direction', 'amount_minor', 'currency', 'settles_at', 'created_at'])
      .where('external_account_id', '=', account.id).where('purpose', 'in', purposes).where('status', '=', 'filed').execute();
    const rows = [...simulated, ...filed.map((r) => ({ ...r, amount_minor: BigInt(r.amount_minor), settles_at: r.settles_at! }))]
      .sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : 1));
    return {
      status: 200,
      body: {
        object: 'list',
        has_more: false,
        data: rows.map((r) => ({
          id: r.id, object: 'payment' as const, direction: r.direction, amount: formatAmount(r.amount_minor, 2), currency: r.currency,
          status: r.settles_at.getTime() <= Date.now() ? ('settled' as const) : ('pending' as const), settles_at: r.settles_at.toISOString(),
        })),
      },
    };
  },
});

export const externalAccountRoutes = [
  createExternalAccount, listExternalAccounts, getExternalAccount, deleteExternalAccount, listCustomerExternalAccounts,
  verifyExternalAccount, sandboxMicroDeposits,
];
