import { z } from 'zod';
import type { Kysely, Transaction } from 'kysely';
import { jsonObjectFrom } from 'kysely/helpers/postgres';
import type { PlatformDeps } from '../deps';
import { tenantRows, type Tenant } from '../db/tenant-scope';
import { ApiError, invalidField, invalidStateField } from '../errors';
import type { CustomerRow, Database, ExternalAccountRow, TransferRow } from '../db/schema';
import { burnAddressError, cryptoAddressError } from '../domain/bank-validation';
import { ASSET_SCALE, CANONICAL_DECIMAL, formatAmount, parseAmount } from '../domain/money';
import { RateUnavailableError, convertMinor, samePeg } from '../domain/quote';
import { PAYMENT_RAILS, RAILS, isChainRail, railBoundsMinor, type CryptoChain, type FiatRailProfile, type PaymentRail } from '../domain/rails';
import { oneOfShapes, transferLegVariants } from '../domain/documented-variants';
import { findBodyCustomer, unknownBodyCustomer } from '../customers/customer';
import type { RefundDestination } from '../domain/transfers';
import { resolveTransferAccounts } from './account-legs';
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
