import { sql, type Kysely, type Transaction } from 'kysely';
import { z } from 'zod';
import { findCustodyCustomer } from '../customers/customer';
import type { Database, PlatformAccountRow } from '../db/schema';
import { findTenantRow, type Tenant } from '../db/tenant-scope';
import { recordEvent } from '../domain/events';
import { ASSET_SCALE, formatAmount } from '../domain/money';
import { FIAT_RAILS, RAILS } from '../domain/rails';
import { accountAvailable, accountReserved } from '../domain/transfers';
import { invalidField, invalidStateField } from '../errors';
import { newId, objectId } from '../ids';
import { balanceOf } from '../ledger/ledger';

// Platform accounts (docs/ACCOUNTS.md): a customer's fiat balance held by the platform, one per
// customer and currency. The balance is the ledger's: `available` is the account's customer_funds
// ledger account; `pending` is what its open transfers reserved, and what open transfers will credit.

type Executor = Kysely<Database> | Transaction<Database>;

/** The currencies of the fiat rails: what a platform account can hold. */
export const ACCOUNT_CURRENCIES = [...new Set(FIAT_RAILS.flatMap((r) => RAILS[r].currencies))];

export const AccountCreate = z.strictObject({
  customer_id: z.string().min(1),
  currency: z.string().trim().toLowerCase(),
});

export const AccountSchema = z.object({
  id: objectId('acct'),
  object: z.literal('account'),
  customer_id: z.string(),
  currency: z.string(),
  available: z.string().describe('Decimal: what transfers from the account can spend now'),
  pending: z.string().describe('Decimal: what its open transfers have reserved, and what open transfers will credit to it'),
  status: z.literal('active'),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
}).meta({ id: 'Account' });

export const AccountTransactionSchema = z.object({
  id: objectId('ltx').describe('The ledger transaction'),
  object: z.literal('account_transaction'),
  account_id: z.string(),
  amount: z.string().describe('Decimal, signed: what the movement added to (or, negative, took from) the balance'),
  balance: z.enum(['available', 'reserved']).describe("Which of the account's balances moved"),
  description: z.string(),
  transfer_id: z.string().nullable(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime().describe('A ledger movement never changes: its created_at'),
}).meta({ id: 'AccountTransaction' });

export const findAccount = (db: Executor, tenant: Tenant, id: string) => findTenantRow(db, 'platform_accounts', tenant, id, { what: 'account' });

/** The account with its balances, read from the ledger. */
export async function serializeAccount(db: Executor, tenant: Tenant, row: PlatformAccountRow) {
  const scale = ASSET_SCALE[row.currency]!;
  const [available, reserved, incoming] = await Promise.all([
    balanceOf(db, tenant, accountAvailable(row.id, row.currency)),
    balanceOf(db, tenant, accountReserved(row.id, row.currency)),
    incomingMinor(db, row.id),
  ]);
  return {
    id: row.id, object: 'account' as const, customer_id: row.customer_id, currency: row.currency,
    available: formatAmount(available, scale), pending: formatAmount(reserved + incoming, scale), status: row.status,
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}

/** What transfers that hold their funds will credit to the account once they pay out (funds received, in review). */
async function incomingMinor(db: Executor, accountId: string): Promise<bigint> {
  const { total } = await db.selectFrom('transfers').select(sql<string>`coalesce(sum((receipt->>'final_minor')::numeric), 0)::text`.as('total'))
    .where('destination_account_id', '=', accountId).where('state', 'in', ['funds_received', 'in_review']).executeTakeFirstOrThrow();
  return BigInt(total);
}

/** One account per customer and currency; the customer active, KYC-approved and endorsed for custody. Announced as `account.created`. */
export async function createAccount(trx: Transaction<Database>, tenant: Tenant, body: z.output<typeof AccountCreate>): Promise<PlatformAccountRow> {
  if (!ACCOUNT_CURRENCIES.includes(body.currency)) throw invalidField('body', 'currency', `must be one of ${ACCOUNT_CURRENCIES.join(', ')}`);
  const customer = await findCustodyCustomer(trx, tenant, body.customer_id, 'platform accounts');
  const now = new Date();
  const row = await trx.insertInto('platform_accounts').values({
    id: newId('account', now.getTime()), developer_id: tenant.developerId, environment: tenant.environment, customer_id: customer.id,
    currency: body.currency, status: 'active', created_at: now, updated_at: now,
  }).onConflict((oc) => oc.columns(['developer_id', 'environment', 'customer_id', 'currency']).doNothing()).returningAll().executeTakeFirst();
  if (!row) throw invalidStateField('currency', `Customer ${customer.id} has a ${body.currency} account already (one per customer and currency)`);
  await recordEvent(trx, tenant, { type: 'account.created', objectId: row.id, data: await serializeAccount(trx, tenant, row) }, now);
  return row;
}

/** The account's ledger movements (either of its balances), one row per ledger transaction and balance, for keyset pagination. */
export function accountTransactions(db: Executor, tenant: Tenant, row: PlatformAccountRow) {
  const entries = db.selectFrom('ledger_entries as e')
    .innerJoin('ledger_accounts as a', 'a.id', 'e.account_id')
    .innerJoin('ledger_transactions as t', 't.id', 'e.transaction_id')
    .where('a.developer_id', '=', tenant.developerId).where('a.environment', '=', tenant.environment)
    .where('a.owner_type', '=', 'account').where('a.owner_id', '=', row.id)
    .select(['t.id as id', 't.created_at as created_at', 't.description as description', 't.reference_id as reference_id', 'a.purpose as purpose'])
    .select(sql<string>`sum(e.amount_minor)::text`.as('amount_minor'))
    .groupBy(['t.id', 't.created_at', 't.description', 't.reference_id', 'a.purpose']);
  return db.selectFrom(entries.as('x')).selectAll();
}

type AccountMovement = { id: string; created_at: Date; description: string; reference_id: string | null; purpose: string; amount_minor: string };

export const serializeAccountTransaction = (account: PlatformAccountRow) => (r: AccountMovement) => ({
  id: r.id, object: 'account_transaction' as const, account_id: account.id, amount: formatAmount(BigInt(r.amount_minor), ASSET_SCALE[account.currency]!),
  balance: r.purpose === 'account_reserved' ? 'reserved' as const : 'available' as const, description: r.description,
  transfer_id: r.reference_id?.startsWith('tr_') ? r.reference_id : null, created_at: r.created_at.toISOString(),
  updated_at: r.created_at.toISOString(), // a ledger movement never changes
});

/** The developer's collected `developer_fee`, per currency (the ledger's developer_fees accounts). */
export async function developerFeeBalances(db: Executor, tenant: Tenant) {
  const rows = await db.selectFrom('ledger_accounts').select(['currency', 'balance_minor'])
    .where('developer_id', '=', tenant.developerId).where('environment', '=', tenant.environment)
    .where('owner_type', '=', 'developer').where('purpose', '=', 'developer_fees').orderBy('currency').execute();
  return rows.map((r) => ({ currency: r.currency, amount: formatAmount(BigInt(r.balance_minor), ASSET_SCALE[r.currency] ?? 2) }));
}
