import { z } from 'zod';
import { sql, type Kysely, type Transaction } from 'kysely';
import { jsonObjectFrom } from 'kysely/helpers/postgres';
import type { PlatformDeps } from '../deps';
import { tenantRows, type Tenant } from '../db/tenant-scope';
import { ApiError, invalidField, invalidStateField } from '../errors';
import type { CustomerRow, Database, ExternalAccountRow, TransferRow } from '../db/schema';
import { burnAddressError, cryptoAddressError } from '../domain/bank-validation';
import { ASSET_SCALE, CANONICAL_DECIMAL, formatAmount, parseAmount } from '../domain/money';
import { QuoteError, RateUnavailableError, convertMinor, quoteReceipt, samePeg, swiftChargesSplit } from '../domain/quote';
import { PAYMENT_RAILS, RAILS, isChainRail, railBoundsMinor, type CryptoChain, type FiatRailProfile, type PaymentRail } from '../domain/rails';
import { recordChangeWithEvent } from '../domain/events';
import { oneOfShapes, transferLegVariants } from '../domain/documented-variants';
import { bankCollectionAccount } from '../providers/bank-files/settings';
import { newId, randomBase62 } from '../ids';
import { findBodyCustomer, unknownBodyCustomer } from '../customers/customer';
import { serializeTransfer, type StoredReceipt } from './transfer';
import type { RefundDestination } from '../domain/transfers';
import { reserveFromAccount, resolveTransferAccounts } from './account-legs';
import { resolveTransferWallets } from './wallet-legs';

// What a transfer is created from (POST /v0/transfers validates its body against this).
const decimal = z.string().regex(CANONICAL_DECIMAL, 'must be a decimal string such as "100.00" (no sign, no leading zeros)');
/** Currency codes are lower case; the spec shows one upper-case example, which is accepted. */
export const currencyCode = z.string().trim().regex(/^[A-Za-z]{3,5}$/, 'must be a currency or asset code such as usd or usdc').transform((v) => v.toLowerCase());

export const TransferCreate = z.strictObject({
  amount: decimal,
  on_behalf_of: z.string().min(1),
  developer_fee: decimal.optional(),
  client_reference_id: z.string().trim().min(1).max(128).optional(),
  source: z.strictObject({
    payment_rail: z.enum(PAYMENT_RAILS),
    currency: currencyCode,
    from_address: z.string().trim().min(1).optional(),
    account_id: z.string().min(1).optional(),
    wallet_id: z.string().min(1).optional().describe("The customer's wallet that sends the deposit (chain sources); refunds go back to it"),
  }).meta(oneOfShapes(transferLegVariants('source'))),
  destination: z.strictObject({
    payment_rail: z.enum(PAYMENT_RAILS),
    currency: currencyCode,
    external_account_id: z.string().min(1).optional(),
    to_address: z.string().trim().min(1).optional(),
    account_id: z.string().min(1).optional(),
    wallet_id: z.string().min(1).optional().describe("The customer's wallet the payout goes to (chain destinations)"),
    swift_charges: z.enum(['sha', 'our', 'ben']).optional(),
  }).meta(oneOfShapes(transferLegVariants('destination'))),
});
export type TransferCreateInput = z.output<typeof TransferCreate>;

const body = (key: string, message: string) => invalidField('body', key, message);

/**
 * What can be checked without the database: rails, currencies, amounts and the shape of each side.
 * A standing route is checked before any sender is known (`senderLater`): each deposit names its own.
 */
export function checkTransferShape(input: TransferCreateInput, opts: { senderLater?: boolean } = {}) {
  const { source, destination } = input;
  for (const [side, leg] of [['source', source], ['destination', destination]] as const) {
    const profile = RAILS[leg.payment_rail];
    if (!profile.currencies.includes(leg.currency)) {
      throw body(`${side}.currency`, `${leg.payment_rail} carries ${profile.currencies.join(', ')}, not ${leg.currency}`);
    }
  }
  const amountMinor = parseAmount(input.amount, ASSET_SCALE[source.currency]);
  if (amountMinor === null) throw body('amount', `must be a positive amount with at most ${ASSET_SCALE[source.currency]} decimals for ${source.currency}`);
  const developerFeeMinor = input.developer_fee === undefined || /^0+(\.0+)?$/.test(input.developer_fee) ? 0n : parseAmount(input.developer_fee, ASSET_SCALE[source.currency]);
  if (developerFeeMinor === null) throw body('developer_fee', `must be an amount with at most ${ASSET_SCALE[source.currency]} decimals`);
  if (developerFeeMinor >= amountMinor) throw body('developer_fee', 'must be below the amount');

  const bounds = railBoundsMinor(source.payment_rail, source.currency);
  if (amountMinor < bounds.min || amountMinor > bounds.max) {
    const scale = ASSET_SCALE[source.currency];
    throw body('amount', `${source.payment_rail} takes amounts from ${formatAmount(bounds.min, scale)} to ${formatAmount(bounds.max, scale)} ${source.currency}`);
  }

  checkAccountLegs(input);
  if (isChainRail(source.payment_rail) && source.wallet_id) {
    if (source.from_address) throw body('source.from_address', 'is the wallet\'s own address when source.wallet_id is given: leave it out');
  } else if (isChainRail(source.payment_rail) && !(opts.senderLater && !source.from_address)) {
    if (!source.from_address) throw body('source.from_address', `is required when the source is the ${source.payment_rail} chain (refunds go back to it), or a source.wallet_id`);
    const error = cryptoAddressError(source.payment_rail as CryptoChain, source.from_address);
    if (error) throw body('source.from_address', `${error}`);
  } else if (source.from_address) {
    throw body('source.from_address', 'is only for chain sources');
  }
  if (isChainRail(destination.payment_rail) && destination.wallet_id) {
    if (destination.to_address || destination.external_account_id) throw body('destination.wallet_id', 'names the payee alone: leave out to_address and external_account_id');
  } else if (isChainRail(destination.payment_rail)) {
    if (!destination.to_address && !destination.external_account_id) {
      throw body('destination.to_address', `is required (or an external_account_id of a ${destination.payment_rail} address, or a wallet_id)`);
    }
    if (destination.to_address) {
      const error = cryptoAddressError(destination.payment_rail as CryptoChain, destination.to_address)
        ?? burnAddressError(destination.payment_rail as CryptoChain, destination.to_address);
      if (error) throw body('destination.to_address', error);
    }
  } else if (!destination.account_id) {
    if (!destination.external_account_id) throw body('destination.external_account_id', `is required for a payout on ${destination.payment_rail} (or an account_id)`);
    if (destination.to_address) throw body('destination.to_address', 'is only for chain destinations');
  }
  if (destination.swift_charges && destination.payment_rail !== 'swift') throw body('destination.swift_charges', 'is only for the swift rail');
  return { amountMinor, developerFeeMinor };
}

/** A platform account holds fiat and names its leg alone. */
function checkAccountLegs({ source, destination }: TransferCreateInput) {
  if (source.account_id) {
    if (isChainRail(source.payment_rail)) throw body('source.account_id', `is only for fiat sources: a platform account holds fiat, not ${source.payment_rail}`);
    if (source.from_address || source.wallet_id) throw body('source.account_id', 'names the source alone: leave out from_address and wallet_id');
  }
  if (destination.account_id) {
    if (isChainRail(destination.payment_rail)) throw body('destination.account_id', `is only for fiat destinations: a platform account holds fiat, not ${destination.payment_rail}`);
    if (destination.external_account_id || destination.to_address || destination.wallet_id) {
      throw body('destination.account_id', 'names the payee alone: leave out external_account_id, to_address and wallet_id');
    }
  }
}

type Executor = Kysely<Database> | Transaction<Database>;

/** What checkPayeeAccount reads of an external account. */
const PAYEE_ACCOUNT_COLUMNS = ['id', 'type', 'chain', 'address', 'bank_country', 'status'] as const;
type PayeeAccount = Pick<ExternalAccountRow, (typeof PAYEE_ACCOUNT_COLUMNS)[number]>;

/**
 * The customer a transfer is for, with the destination's external account where it names one
 * (null: none of the customer's has that id), in one query; checked in the order the errors are
 * reported (the customer first).
 */
async function customerWithPayeeAccount(trx: Executor, tenant: Tenant, input: TransferCreateInput) {
  const accountId = input.destination.external_account_id;
  if (!accountId) return { customer: await findBodyCustomer(trx, tenant, input.on_behalf_of, 'on_behalf_of'), payeeAccount: undefined };
  const row = await tenantRows(trx, 'customers', tenant).where('id', '=', input.on_behalf_of)
    .select((eb) => jsonObjectFrom(eb.selectFrom('external_accounts as a').select(PAYEE_ACCOUNT_COLUMNS.map((c) => `a.${c}` as const))
      .where('a.id', '=', accountId).whereRef('a.customer_id', '=', 'customers.id')
      .where('a.developer_id', '=', tenant.developerId).where('a.environment', '=', tenant.environment)).as('payee_account'))
    .executeTakeFirst();
  if (!row) throw unknownBodyCustomer(input.on_behalf_of, 'on_behalf_of');
  const { payee_account: payeeAccount, ...customer } = row;
  return { customer: customer as CustomerRow, payeeAccount: payeeAccount as PayeeAccount | null };
}

/**
 * The account a payment goes to must be the customer's, of the rail's kind, and usable: a transfer's
 * destination, or where an operator sends a rejected refund (`prefix` names the fields in errors).
 */
async function checkPayeeAccount(
  trx: Executor, tenant: Tenant, customerId: string,
  destination: { payment_rail: PaymentRail; external_account_id?: string; to_address?: string }, prefix: string,
  read?: PayeeAccount | null,
) {
  if (!destination.external_account_id) return { toAddress: destination.to_address ?? null, account: null };
  const key = `${prefix}external_account_id`;
  const account = read !== undefined ? read : await trx.selectFrom('external_accounts').select(PAYEE_ACCOUNT_COLUMNS)
    .where('id', '=', destination.external_account_id).where('developer_id', '=', tenant.developerId).where('environment', '=', tenant.environment)
    .where('customer_id', '=', customerId).executeTakeFirst();
  if (!account) throw body(key, `No such external account of customer ${customerId}: '${destination.external_account_id}'`);
  const profile = RAILS[destination.payment_rail];
  if (profile.kind === 'chain') {
    if (account.type !== 'crypto_address' || account.chain !== destination.payment_rail) throw body(key, `is not a ${destination.payment_rail} address`);
    if (destination.to_address && destination.to_address.toLowerCase() !== account.address!.toLowerCase()) {
      throw body(`${prefix}to_address`, `differs from the address of ${key}`);
    }
  } else {
    const fiat = profile as FiatRailProfile;
    if (account.type !== fiat.accountType) throw body(key, `is a ${account.type}; ${destination.payment_rail} pays a ${fiat.accountType}`);
    if (fiat.reaches && !fiat.reaches.countries.has(account.bank_country ?? '')) throw body(key, `${destination.payment_rail} reaches ${fiat.reaches.description} only`);
  }
  if (account.status === 'deleted') throw invalidStateField(key, `External account ${account.id} is deleted`);
  if (account.status !== 'verified' && account.status !== 'active') {
    throw invalidStateField(key, `External account ${account.id} is ${account.status}; it must be verified first`);
  }
  return { toAddress: account.type === 'crypto_address' ? account.address : null, account };
}

/**
 * Where an operator's retry of a rejected refund goes: the source again (undefined), a new address
 * on the source chain, or another usable account of the customer that the source rail pays.
 */
export async function resolveRefundDestination(
  db: Executor, tenant: Tenant, row: TransferRow, request: { to_address?: string; external_account_id?: string },
): Promise<RefundDestination | undefined> {
  if (!request.to_address && !request.external_account_id) return undefined;
  const rail = row.source_rail as PaymentRail;
  if (request.to_address) {
    if (!isChainRail(rail)) throw body('to_address', `is only for refunds on chains; a ${rail} refund goes to an external_account_id`);
    const error = cryptoAddressError(rail as CryptoChain, request.to_address) ?? burnAddressError(rail as CryptoChain, request.to_address);
    if (error) throw body('to_address', error);
  }
  const { toAddress, account } = await checkPayeeAccount(db, tenant, row.customer_id, { payment_rail: rail, ...request }, '');
  return { toAddress, externalAccountId: account?.id ?? null };
}

const unavailable = (key: string, message: string) => new ApiError('service_unavailable', message, { location: 'body', key });

/**
 * Live keys move money only where a real implementation is configured (src/providers/availability.ts):
 * a rail or chain without one, or a conversion without a rate source, is a 503 naming the field,
 * before anything is read or created.
 */
export function checkProvidersServe(deps: Pick<PlatformDeps, 'availability'>, tenant: Tenant, input: TransferCreateInput) {
  for (const side of ['source', 'destination'] as const) {
    const why = deps.availability.railUnavailable(tenant.environment, input[side].payment_rail);
    if (why) throw unavailable(`${side}.payment_rail`, `${why}: nothing was created`);
  }
  if (!deps.availability.marketRates(tenant.environment) && !samePeg(input.source.currency, input.destination.currency)) {
    throw unavailable('destination.currency', `No rate source is configured for ${input.source.currency}/${input.destination.currency} (LIVE_FX_RATES): nothing was created`);
  }
}

/** What the chains tell us before the database transaction opens: network fee and start block. */
export async function prepareChainLegs(deps: PlatformDeps, tenant: Tenant, input: TransferCreateInput) {
  const { source, destination } = input;
  let sourcePosition: string | null = null;
  if (isChainRail(source.payment_rail)) {
    const chain = deps.chains[source.payment_rail];
    await chain.checkCurrency(source.currency);
    sourcePosition = await chain.currentPosition();
  }
  let gasFeeMinor = 0n;
  if (isChainRail(destination.payment_rail)) {
    const chain = deps.chains[destination.payment_rail];
    await chain.checkCurrency(destination.currency);
    if (destination.to_address && chain.isTokenContract(destination.to_address)) {
      throw body('destination.to_address', `is a token contract on ${destination.payment_rail}: tokens sent to it are lost`);
    }
    const feeNative = await chain.estimatePayoutFee(destination.currency);
    const nativeScale = ASSET_SCALE[chain.nativeAsset] ?? 18;
    // Rounded up to the asset's smallest unit: the platform never pays gas out of its own pocket.
    const rate = await deps.rates[tenant.environment].rate(chain.nativeAsset, destination.currency).catch((err: unknown) => {
      if (err instanceof RateUnavailableError) throw unavailable('destination.payment_rail', `Pricing the ${destination.payment_rail} network fee needs a ${chain.nativeAsset} rate: ${err.message}`);
      throw err;
    });
    gasFeeMinor = convertMinor(feeNative, nativeScale, ASSET_SCALE[destination.currency], rate) + 1n;
  }
  return { sourcePosition, gasFeeMinor };
}

/**
 * Who a transfer is for and who it pays, checked in the transaction: the customer (active, KYC
 * approved, endorsed for both rails), its wallets and platform accounts named by the legs, and the
 * payee's external account. A standing route is checked the same way when it is created.
 */
export async function resolveTransferParties(trx: Kysely<Database>, deps: Pick<PlatformDeps, 'chains'>, tenant: Tenant, input: TransferCreateInput, amountMinor: bigint) {
  const { customer, payeeAccount } = await customerWithPayeeAccount(trx, tenant, input);
  if (customer.status !== 'active' || customer.kyc_status !== 'approved') {
    throw invalidStateField('on_behalf_of', `Customer ${customer.id} is ${customer.status} with KYC ${customer.kyc_status}; transfers need an active, KYC-approved customer`);
  }
  for (const rail of new Set([input.source.payment_rail, input.destination.payment_rail])) {
    const needed = RAILS[rail].endorsement;
    if (!customer.endorsements.includes(needed)) throw invalidStateField('on_behalf_of', `Customer ${customer.id} lacks the ${needed} endorsement that ${rail} needs`);
  }
  const wallets = await resolveTransferWallets(trx, deps.chains, tenant, customer.id, input, amountMinor);
  const accounts = await resolveTransferAccounts(trx, tenant, customer.id, input);
  const toAddress = wallets.destinationAddress
    ?? (accounts.destinationAccountId ? null : (await checkPayeeAccount(trx, tenant, customer.id, input.destination, 'destination.', payeeAccount)).toAddress);
  return { customer, wallets, accounts, toAddress };
}

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

/** Creates a transfer in the caller's transaction: its row, its event and any reservation. */
export async function createTransfer(
  trx: Transaction<Database>, deps: PlatformDeps, tenant: Tenant, input: TransferCreateInput,
  prepared: { amountMinor: bigint; developerFeeMinor: bigint; sourcePosition: string | null; gasFeeMinor: bigint },
  standing?: StandingDeposit,
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
  db: Kysely<Database>, deps: PlatformDeps, tenant: Tenant, input: TransferCreateInput,
  prepared: { amountMinor: bigint; developerFeeMinor: bigint; sourcePosition: string | null; gasFeeMinor: bigint },
  standing?: StandingDeposit,
): Promise<PreparedTransfer> {
  const { customer, wallets, accounts, toAddress } = await resolveTransferParties(db, deps, tenant, input, prepared.amountMinor);
  const fromAddress = wallets.sourceAddress ?? input.source.from_address ?? null;

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

  const now = new Date();
  const id = newId('transfer', now.getTime());
  const depositReference = `FP${randomBase62(12).toUpperCase()}`;
  let depositAddress: string | null = null;
  let depositIndex: string | null = null;
  let instructions: Record<string, string>;
  const amount = formatAmount(prepared.amountMinor, ASSET_SCALE[input.source.currency]);
  if (standing) {
    // Arrived already, at the route's permanent address: nothing is awaited there.
    depositAddress = standing.depositAddress;
    depositIndex = standing.depositIndex;
    instructions = { payment_rail: input.source.payment_rail, currency: input.source.currency, amount, ...standing.instructions };
    if (depositAddress) Object.assign(instructions, { to_address: depositAddress, from_address: fromAddress! });
  } else if (isChainRail(input.source.payment_rail)) {
    const { index } = (await sql<{ index: string }>`select nextval('deposit_address_index')::text as index`.execute(db)).rows[0];
    depositAddress = deps.chains[input.source.payment_rail].depositAddress(Number(index));
    depositIndex = index;
    instructions = {
      payment_rail: input.source.payment_rail, currency: input.source.currency, amount, to_address: depositAddress, from_address: fromAddress!,
      // The platform sends it from the wallet: nothing for the customer to do.
      ...(wallets.sourceWalletId ? { wallet_id: wallets.sourceWalletId } : {}),
    };
  } else if (accounts.sourceAccountId) {
    // Taken from the account: nothing for the customer to send.
    instructions = { payment_rail: input.source.payment_rail, currency: input.source.currency, amount, account_id: accounts.sourceAccountId };
  } else {
    // The bank's own account where the rail runs on its files; else the sandbox's collection account.
    const collection = bankCollectionAccount(deps.config, tenant.environment, input.source.payment_rail) ?? (RAILS[input.source.payment_rail] as FiatRailProfile).collectionAccount;
    instructions = { payment_rail: input.source.payment_rail, currency: input.source.currency, amount, deposit_reference: depositReference, ...collection };
  }
  const stored: StoredReceipt = {
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
  const row: TransferRow = {
    id,
    developer_id: tenant.developerId,
    environment: tenant.environment,
    customer_id: customer.id,
    state: 'awaiting_funds',
    state_reason: null,
    client_reference_id: input.client_reference_id ?? null,
    amount_minor: prepared.amountMinor.toString(),
    developer_fee_minor: prepared.developerFeeMinor.toString(),
    source_rail: input.source.payment_rail,
    source_currency: input.source.currency,
    source_from_address: fromAddress,
    source_wallet_id: wallets.sourceWalletId,
    destination_wallet_id: wallets.destinationWalletId,
    source_account_id: accounts.sourceAccountId,
    destination_account_id: accounts.destinationAccountId,
    destination_rail: input.destination.payment_rail,
    destination_currency: input.destination.currency,
    destination_external_account_id: input.destination.external_account_id ?? null,
    destination_to_address: toAddress,
    swift_charges: input.destination.payment_rail === 'swift' ? (input.destination.swift_charges ?? 'sha') : null,
    receipt: { ...stored },
    deposit_instructions: instructions,
    deposit_reference: depositReference,
    deposit_address: depositAddress,
    deposit_index: depositIndex,
    // A route's transfer is not watched for its deposit, nor its address for strays (src/transfers/stray-chain-scan.ts).
    source_position: standing ? null : prepared.sourcePosition,
    stray_scan_position: null,
    return_code: null,
    review_reasons: null,
    review_decision: null,
    route_id: standing?.routeId ?? null,
    created_at: now,
    updated_at: now,
  };
  const write = async (trx: Kysely<Database>) => {
    // The row and its event in one statement.
    const insert = trx.insertInto('transfers').values({
      ...row, receipt: JSON.stringify(stored), deposit_instructions: JSON.stringify(instructions), review_reasons: null, review_decision: null,
    });
    await recordChangeWithEvent(trx, tenant, insert, { type: 'transfer.created', objectId: id, data: serializeTransfer(row) }, now);
    if (!accounts.sourceAccountId) return;
    if (!trx.isTransaction) throw new Error('a reservation from an account is written in the transaction of its transfer');
    await reserveFromAccount(trx as Transaction<Database>, tenant, id, accounts.sourceAccountId, input.source.currency, prepared.amountMinor);
  };
  return { row, sourceWalletIsMpc: wallets.sourceWalletIsMpc, write };
}
