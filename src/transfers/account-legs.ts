import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema';
import type { Tenant } from '../db/tenant-scope';
import { ASSET_SCALE, formatAmount } from '../domain/money';
import { accountAvailable, accountReservePostings } from '../domain/transfers';
import { invalidField, invalidStateField } from '../errors';
import { balanceOf, LedgerError, postTransaction } from '../ledger/ledger';

// Transfers from and to a customer's platform account (docs/ACCOUNTS.md). A source account's amount
// is reserved in the ledger when the transfer is created (released if it is canceled before it takes
// the funds); the workflow takes the funds at once. A destination account is credited in the ledger
// instead of a payout on a rail.

type Leg = { payment_rail: string; currency: string; account_id?: string };

/** The customer's platform account a transfer leg names, in the leg's currency; a 400 names the field otherwise. */
async function legAccount(trx: Kysely<Database>, tenant: Tenant, customerId: string, leg: Leg, side: 'source' | 'destination') {
  if (!leg.account_id) return null;
  const key = `${side}.account_id`;
  const account = await trx.selectFrom('platform_accounts').selectAll().where('id', '=', leg.account_id)
    .where('developer_id', '=', tenant.developerId).where('environment', '=', tenant.environment).executeTakeFirst();
  if (!account) throw invalidField('body', key, `No such account: '${leg.account_id}'`);
  if (account.customer_id !== customerId) throw invalidField('body', key, `Account ${account.id} belongs to another customer than on_behalf_of`);
  if (account.currency !== leg.currency) throw invalidField('body', key, `Account ${account.id} holds ${account.currency}, not ${leg.currency}`);
  return account;
}

export async function resolveTransferAccounts(trx: Kysely<Database>, tenant: Tenant, customerId: string, input: { source: Leg; destination: Leg }) {
  const source = await legAccount(trx, tenant, customerId, input.source, 'source');
  const destination = await legAccount(trx, tenant, customerId, input.destination, 'destination');
  return { sourceAccountId: source?.id ?? null, destinationAccountId: destination?.id ?? null };
}

/** Reserves the transfer's amount in its source account; a 409 says what the account can spend when it cannot. */
export async function reserveFromAccount(trx: Transaction<Database>, tenant: Tenant, transferId: string, accountId: string, currency: string, amountMinor: bigint) {
  try {
    await postTransaction(trx, tenant, {
      idempotencyKey: `${transferId}:account-reserve`, description: `Reserved for transfer ${transferId}`, referenceId: transferId,
      postings: accountReservePostings(accountId, currency, amountMinor),
    });
  } catch (err) {
    if (!(err instanceof LedgerError && err.code === 'insufficient_funds')) throw err;
    const available = await balanceOf(trx, tenant, accountAvailable(accountId, currency));
    const scale = ASSET_SCALE[currency]!;
    throw invalidStateField('source.account_id', `Account ${accountId} has ${formatAmount(available, scale)} ${currency} available; the transfer needs ${formatAmount(amountMinor, scale)}`);
  }
}
