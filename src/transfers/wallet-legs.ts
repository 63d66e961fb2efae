import type { Kysely, Transaction } from 'kysely';
import type { ChainAdapters } from '../chains';
import type { Db } from '../db';
import type { Database, TransferRow, WalletRow } from '../db/schema';
import type { WalletTransactionRequest } from '../chains/chain-adapter';
import type { Tenant } from '../db/tenant-scope';
import { ASSET_SCALE, formatAmount } from '../domain/money';
import { isChainRail, type ChainRail } from '../domain/rails';
import { invalidField, invalidStateField } from '../errors';
import type { KeyVault } from '../keys/key-vault';
import { walletKeyContext, walletReservations } from '../wallets/wallet';

// Transfers from and to a customer's wallet (docs/WALLETS.md). A source wallet signs the deposit to
// the transfer's deposit address (the activity sendFromSourceWallet); from then on the transfer runs
// as every chain-funded one, and refunds go back to the wallet's address. A destination wallet is
// paid at its address.

/** The customer's wallet named by a transfer leg, holding the leg's chain; a 400 names the field otherwise. */
async function legWallet(
  trx: Kysely<Database>, tenant: Tenant, customerId: string, leg: { payment_rail: string; wallet_id?: string }, side: 'source' | 'destination',
): Promise<WalletRow | null> {
  if (!leg.wallet_id) return null;
  const key = `${side}.wallet_id`;
  if (!isChainRail(leg.payment_rail)) throw invalidField('body', key, `is only for chain ${side}s; ${leg.payment_rail} is a fiat rail`);
  // Locked: two transfers from one wallet are created one after the other, each seeing the other's reservation.
  const wallet = await trx.selectFrom('wallets').selectAll().where('id', '=', leg.wallet_id)
    .where('developer_id', '=', tenant.developerId).where('environment', '=', tenant.environment).forUpdate().executeTakeFirst();
  if (!wallet) throw invalidField('body', key, `No such wallet: '${leg.wallet_id}'`);
  if (wallet.customer_id !== customerId) throw invalidField('body', key, `Wallet ${wallet.id} belongs to another customer than on_behalf_of`);
  if (!wallet.chains.includes(leg.payment_rail)) throw invalidField('body', key, `Wallet ${wallet.id} holds ${wallet.chains.join(', ')}, not ${leg.payment_rail}`);
  if (wallet.status !== 'active') throw invalidStateField(key, `Wallet ${wallet.id} is ${wallet.status}: it has no key to send or receive with`);
  return wallet;
}

/**
 * What a source wallet can spend must cover the amount: its confirmed holdings of the currency less
 * what its open transfers (awaiting their deposit) have reserved. Where the wallet pays its own
 * network fee (EVM gas, bitcoin's fee), each open send also holds back one fee estimate of the
 * native asset. Read under the wallet's row lock, so concurrent creations see each other. A 409 says
 * what is short; nothing is created.
 */
async function checkSpendable(trx: Kysely<Database>, chains: ChainAdapters, wallet: WalletRow, rail: ChainRail, currency: string, amountMinor: bigint) {
  const chain = chains[rail];
  const address = wallet.addresses[rail]!;
  // Under the wallet's row lock no send of its commits meanwhile (a bitcoin send takes the row
  // shared): both reads see the same sends. Reservations first, then the chain: where a send could
  // still commit between them, it can only make the wallet look poorer, never richer.
  const open = await walletReservations(trx, wallet.id, chain.balanceCountsOwnSends ? [rail] : []);
  const [token, native] = await chain.balancesOf(address, [currency, chain.nativeAsset], trx.isTransaction ? trx as Transaction<Database> : undefined);
  const fee = chain.walletsPayGas ? await chain.estimatePayoutFee(currency) : 0n;
  const feesHeld = fee * BigInt(open.sends.get(rail) ?? 0);
  const reservedOf = (asset: string) => (open.amounts.get(`${rail}|${asset}`) ?? 0n) + (asset === chain.nativeAsset ? feesHeld : 0n);
  const reserved = reservedOf(currency);
  const available = token!.confirmedMinor - reserved;
  const scale = ASSET_SCALE[currency]!;
  const shown = (v: bigint) => formatAmount(v < 0n ? 0n : v, scale);
  if (available < amountMinor) {
    throw invalidStateField('source.wallet_id', `Wallet ${wallet.id} can spend ${shown(available)} ${currency} on ${rail} `
      + `(${shown(token!.confirmedMinor)} held, ${shown(reserved)} reserved by its open transfers); the transfer needs ${formatAmount(amountMinor, scale)}`);
  }
  if (!chain.walletsPayGas) return;
  // Where the asset sent is the one fees are paid in (btc on bitcoin), the two add up.
  if (currency === chain.nativeAsset && available - amountMinor < fee) {
    throw invalidStateField('source.wallet_id', `Wallet ${wallet.id} can spend ${shown(available)} ${currency} on ${rail}; `
      + `the transfer needs ${formatAmount(amountMinor, scale)} and about ${formatAmount(fee, scale)} for the network fee of sending it`);
  }
  const nativeScale = ASSET_SCALE[chain.nativeAsset] ?? 18;
  const nativeFree = native!.confirmedMinor - reservedOf(chain.nativeAsset);
  if (currency !== chain.nativeAsset && nativeFree < fee) {
    throw invalidStateField('source.wallet_id', `Wallet ${wallet.id} has ${formatAmount(nativeFree < 0n ? 0n : nativeFree, nativeScale)} ${chain.nativeAsset} on ${rail} `
      + `free for gas (${formatAmount(native!.confirmedMinor, nativeScale)} held, the rest held for its open transfers' sends); `
      + `sending the deposit takes about ${formatAmount(fee, nativeScale)} ${chain.nativeAsset} of gas`);
  }
}

/** The wallets of a transfer's legs, checked (the source's spendable balance too), with the addresses they stand for. */
export async function resolveTransferWallets(
  trx: Kysely<Database>, chains: ChainAdapters, tenant: Tenant, customerId: string,
  input: { source: { payment_rail: string; currency: string; wallet_id?: string }; destination: { payment_rail: string; wallet_id?: string } },
  amountMinor: bigint,
) {
  const source = await legWallet(trx, tenant, customerId, input.source, 'source');
  const destination = await legWallet(trx, tenant, customerId, input.destination, 'destination');
  if (source) await checkSpendable(trx, chains, source, input.source.payment_rail as ChainRail, input.source.currency, amountMinor);
  return {
    sourceWalletId: source?.id ?? null,
    /** An MPC wallet signs with the customer (the transfer waits for the co-signature). */
    sourceWalletIsMpc: source?.type === 'mpc',
    sourceAddress: source ? source.addresses[input.source.payment_rail]! : null,
    destinationWalletId: destination?.id ?? null,
    destinationAddress: destination ? destination.addresses[input.destination.payment_rail]! : null,
  };
}

/** Where a transfer's wallet deposit is stored once signed (by the wallet's key, or by an MPC wallet's parties). */
export const walletDepositKey = (transferId: string) => `${transferId}:wallet_deposit`;

/** The token transfer from the transfer's source wallet to its deposit address, as the chain adapter takes it. */
export function walletDepositRequest(
  t: Pick<TransferRow, 'id' | 'source_rail' | 'source_currency' | 'deposit_address' | 'amount_minor'>, wallet: Pick<WalletRow, 'id' | 'addresses'>,
): WalletTransactionRequest {
  return {
    idempotencyKey: walletDepositKey(t.id), walletId: wallet.id, transferId: t.id, from: wallet.addresses[t.source_rail]!, currency: t.source_currency,
    to: t.deposit_address!, amountMinor: BigInt(t.amount_minor),
  };
}

/**
 * Sends the transfer's deposit from its source wallet to its deposit address, signed with the
 * wallet's key (opened only inside this call); stored before broadcast, so a retry re-sends the
 * same transaction. PayoutRejectedError when the chain would refuse it now.
 */
export async function sendFromSourceWallet(deps: { db: Db; chains: ChainAdapters; keys: KeyVault }, transferId: string): Promise<{ txHash: string }> {
  const t = await deps.db.selectFrom('transfers').select(['id', 'source_rail', 'source_currency', 'source_wallet_id', 'deposit_address', 'amount_minor'])
    .where('id', '=', transferId).executeTakeFirstOrThrow();
  const wallet = await deps.db.selectFrom('wallets').select(['id', 'type', 'addresses', 'key_sealed']).where('id', '=', t.source_wallet_id!).executeTakeFirstOrThrow();
  return deps.chains[t.source_rail as ChainRail].sendFromWallet({
    ...walletDepositRequest(t, wallet),
    openKey: async () => {
      // An MPC wallet's transaction is signed by two of its parties and stored before this send (src/mpc/signing.ts).
      if (wallet.type === 'mpc') throw new Error(`transfer ${t.id}: no transaction signed by the MPC wallet ${wallet.id} is stored`);
      return deps.keys.open(wallet.key_sealed!, walletKeyContext(wallet));
    },
  });
}
