import { sql, type Kysely, type Transaction } from 'kysely';
import type { PlatformDeps } from '../deps';
import type { Tenant } from '../db/tenant-scope';
import type { Database, TransferRow } from '../db/schema';
import { invalidField } from '../errors';
import { ASSET_SCALE, formatAmount } from '../domain/money';
import { QuoteError, quoteReceipt, swiftChargesSplit } from '../domain/quote';
import { RAILS, isChainRail, railBoundsMinor, type FiatRailProfile } from '../domain/rails';
import { recordChangeWithEvent } from '../domain/events';
import { bankCollectionAccount } from '../providers/bank-files/settings';
import { newId, randomBase62 } from '../ids';
import { serializeTransfer, type StoredReceipt } from './transfer';
import { reserveFromAccount } from './account-legs';
import { resolveTransferParties, type TransferCreateInput } from './service';

// A transfer checked, quoted and built, reading only; then written with its event (and the
// reservation of a source account) in the caller's transaction. POST /v0/transfers and a standing
// route's deposits both come here.

/**
 * A deposit that arrived on a standing route: its transfer carries the route's id and shows where
 * the money was sent (a liquidation address's chain address, a virtual account's bank details).
 */
export interface StandingDeposit {
  routeId: string;
  depositAddress: string | null;
  depositIndex: string | null;
  instructions?: Record<string, string>;
}

/** A transfer checked and quoted, not yet written: its row, and how to write it. */
export interface PreparedTransfer {
  row: TransferRow;
  /** Its source wallet signs with the customer (the workflow waits for the co-signature). */
  sourceWalletIsMpc: boolean;
  /** Writes the row with its `transfer.created` event (one statement), and reserves the amount in a source account (then in a transaction). */
  write(db: Kysely<Database>): Promise<void>;
}

/** What the caller worked out before: the amount, the developer's fee, where a chain deposit is looked for from, the network fee. */
export interface TransferAmounts {
  amountMinor: bigint;
  developerFeeMinor: bigint;
  sourcePosition: string | null;
  gasFeeMinor: bigint;
}

const body = (key: string, message: string) => invalidField('body', key, message);

/** Creates a transfer in the caller's transaction: its row, its event and any reservation. */
export async function createTransfer(
  trx: Transaction<Database>, deps: PlatformDeps, tenant: Tenant, input: TransferCreateInput, prepared: TransferAmounts, standing?: StandingDeposit,
): Promise<TransferRow> {
  const transfer = await prepareTransfer(trx, deps, tenant, input, prepared, standing);
  await transfer.write(trx);
  return transfer.row;
}

/**
 * Checks who the transfer is for and who it pays, quotes it and builds its row and deposit
 * instructions, reading only: what `write` then writes.
 */
export async function prepareTransfer(
  db: Kysely<Database>, deps: PlatformDeps, tenant: Tenant, input: TransferCreateInput, prepared: TransferAmounts, standing?: StandingDeposit,
): Promise<PreparedTransfer> {
  const parties = await resolveTransferParties(db, deps, tenant, input, prepared.amountMinor);
  const fromAddress = parties.wallets.sourceAddress ?? input.source.from_address ?? null;
  const receipt = await quoteTransfer(deps, tenant, input, prepared);
  const now = new Date();
  const id = newId('transfer', now.getTime());
  const deposit = await depositInstructions(db, deps, tenant, input, { amountMinor: prepared.amountMinor, fromAddress, parties, standing });
  const row = transferRow({ id, now, tenant, input, prepared, parties, fromAddress, receipt, deposit, standing });
  const write = async (trx: Kysely<Database>) => {
    // The row and its event in one statement.
    const insert = trx.insertInto('transfers').values({
      ...row, receipt: JSON.stringify(receipt), deposit_instructions: JSON.stringify(deposit.instructions), review_reasons: null, review_decision: null,
    });
    await recordChangeWithEvent(trx, tenant, insert, { type: 'transfer.created', objectId: id, data: serializeTransfer(row) }, now);
    if (!parties.accounts.sourceAccountId) return;
    if (!trx.isTransaction) throw new Error('a reservation from an account is written in the transaction of its transfer');
    await reserveFromAccount(trx as Transaction<Database>, tenant, id, parties.accounts.sourceAccountId, input.source.currency, prepared.amountMinor);
  };
  return { row, sourceWalletIsMpc: parties.wallets.sourceWalletIsMpc, write };
}

/** The quote at today's rate, with SWIFT's fees where they apply, as the transfer stores it; refused when nothing would arrive or the rail cannot carry it. */
async function quoteTransfer(deps: PlatformDeps, tenant: Tenant, input: TransferCreateInput, prepared: TransferAmounts): Promise<StoredReceipt> {
  const rate = await deps.rates[tenant.environment].rate(input.source.currency, input.destination.currency);
  const swift = input.destination.payment_rail === 'swift' ? swiftChargesSplit(input.destination.swift_charges ?? 'sha') : undefined;
  let receipt;
  try {
    receipt = quoteReceipt({
      amountMinor: prepared.amountMinor, developerFeeMinor: prepared.developerFeeMinor, from: input.source.currency, to: input.destination.currency,
      rate, gasFeeMinor: prepared.gasFeeMinor, swiftFeeMinor: swift?.senderFeeMinor,
    });
    if (swift && receipt.finalMinor <= swift.beneficiaryDeductionsMinor) throw new QuoteError('After the SWIFT fees nothing would arrive: the amount is too small');
  } catch (err) {
    if (err instanceof QuoteError) throw body('amount', err.message);
    throw err;
  }
  if (receipt.finalMinor > railBoundsMinor(input.destination.payment_rail, input.destination.currency).max) {
    throw body('amount', `the final amount exceeds what ${input.destination.payment_rail} carries in one payment`);
  }
  return {
    initial_minor: receipt.initialMinor.toString(),
    developer_fee_minor: receipt.developerFeeMinor.toString(),
    exchange_fee_minor: receipt.exchangeFeeMinor.toString(),
    subtotal_minor: receipt.subtotalMinor.toString(),
    gas_fee_minor: receipt.gasFeeMinor.toString(),
    ...(swift ? { swift_fee_minor: swift.senderFeeMinor.toString(), beneficiary_deductions_minor: swift.beneficiaryDeductionsMinor.toString() } : {}),
    final_minor: receipt.finalMinor.toString(),
    exchange_rate: receipt.exchangeRate,
    source_tx_hash: null,
    destination_tx_hash: null,
  };
}

type Parties = Awaited<ReturnType<typeof resolveTransferParties>>;

interface Deposit {
  depositReference: string;
  depositAddress: string | null;
  depositIndex: string | null;
  instructions: Record<string, string>;
}

/** Where and how the customer sends the money: a route's address, a fresh chain deposit address, the source account, or the bank's collection account with a reference. */
async function depositInstructions(
  db: Kysely<Database>, deps: PlatformDeps, tenant: Tenant, input: TransferCreateInput,
  q: { amountMinor: bigint; fromAddress: string | null; parties: Parties; standing?: StandingDeposit },
): Promise<Deposit> {
  const depositReference = `FP${randomBase62(12).toUpperCase()}`;
  const leg = { payment_rail: input.source.payment_rail, currency: input.source.currency, amount: formatAmount(q.amountMinor, ASSET_SCALE[input.source.currency]) };
  if (q.standing) {
    // Arrived already, at the route's permanent address: nothing is awaited there.
    const { depositAddress, depositIndex } = q.standing;
    const instructions = { ...leg, ...q.standing.instructions, ...depositAddress ? { to_address: depositAddress, from_address: q.fromAddress! } : {} };
    return { depositReference, depositAddress, depositIndex, instructions };
  }
  if (isChainRail(input.source.payment_rail)) {
    const { index } = (await sql<{ index: string }>`select nextval('deposit_address_index')::text as index`.execute(db)).rows[0];
    const depositAddress = deps.chains[input.source.payment_rail].depositAddress(Number(index));
    const instructions = {
      ...leg, to_address: depositAddress, from_address: q.fromAddress!,
      // The platform sends it from the wallet: nothing for the customer to do.
      ...(q.parties.wallets.sourceWalletId ? { wallet_id: q.parties.wallets.sourceWalletId } : {}),
    };
    return { depositReference, depositAddress, depositIndex: index, instructions };
  }
  if (q.parties.accounts.sourceAccountId) {
    // Taken from the account: nothing for the customer to send.
    return { depositReference, depositAddress: null, depositIndex: null, instructions: { ...leg, account_id: q.parties.accounts.sourceAccountId } };
  }
  // The bank's own account where the rail runs on its files; else the sandbox's collection account.
  const collection = bankCollectionAccount(deps.config, tenant.environment, input.source.payment_rail) ?? (RAILS[input.source.payment_rail] as FiatRailProfile).collectionAccount;
  return { depositReference, depositAddress: null, depositIndex: null, instructions: { ...leg, deposit_reference: depositReference, ...collection } };
}

/** The transfer's row as it is written, awaiting its funds. */
function transferRow(t: {
  id: string; now: Date; tenant: Tenant; input: TransferCreateInput; prepared: TransferAmounts; parties: Parties;
  fromAddress: string | null; receipt: StoredReceipt; deposit: Deposit; standing?: StandingDeposit;
}): TransferRow {
  const { input, parties } = t;
  return {
    id: t.id,
    developer_id: t.tenant.developerId,
    environment: t.tenant.environment,
    customer_id: parties.customer.id,
    state: 'awaiting_funds',
    state_reason: null,
    client_reference_id: input.client_reference_id ?? null,
    amount_minor: t.prepared.amountMinor.toString(),
    developer_fee_minor: t.prepared.developerFeeMinor.toString(),
    source_rail: input.source.payment_rail,
    source_currency: input.source.currency,
    source_from_address: t.fromAddress,
    source_wallet_id: parties.wallets.sourceWalletId,
    destination_wallet_id: parties.wallets.destinationWalletId,
    source_account_id: parties.accounts.sourceAccountId,
    destination_account_id: parties.accounts.destinationAccountId,
    destination_rail: input.destination.payment_rail,
    destination_currency: input.destination.currency,
    destination_external_account_id: input.destination.external_account_id ?? null,
    destination_to_address: parties.toAddress,
    swift_charges: input.destination.payment_rail === 'swift' ? (input.destination.swift_charges ?? 'sha') : null,
    receipt: { ...t.receipt },
    deposit_instructions: t.deposit.instructions,
    deposit_reference: t.deposit.depositReference,
    deposit_address: t.deposit.depositAddress,
    deposit_index: t.deposit.depositIndex,
    // A route's transfer is not watched for its deposit, nor its address for strays (src/transfers/stray-chain-scan.ts).
    source_position: t.standing ? null : t.prepared.sourcePosition,
    stray_scan_position: null,
    return_code: null,
    review_reasons: null,
    review_decision: null,
    route_id: t.standing?.routeId ?? null,
    created_at: t.now,
    updated_at: t.now,
  };
}
