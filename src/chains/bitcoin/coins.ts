import { hex } from '@scure/base';
import { Address, OutScript, selectUTXO, Transaction } from '@scure/btc-signer';
import { sql, type Kysely, type Transaction as DbTransaction } from 'kysely';
import type { Database } from '../../db/schema';
import { PayoutRejectedError } from '../chain-adapter';
import type { BitcoinNetwork } from './keys';
import { freeUnconfirmedChange, recordUnconfirmedChange, reservedUnconfirmedChange } from './unconfirmed-change';
import type { Coin, CoinOwner } from './coin';

export type { Coin, CoinOwner };

/** What a spend is built against: the chain's tip (how deep each coin is) and the fee rate in sat/vB. */
export interface SpendContext {
  tip: number;
  feeRate: bigint;
}


/** Opt-in replace-by-fee (BIP-125): every input signals it, so a stuck payout can be bumped. */
const RBF_SEQUENCE = 0xfffffffd;
/** Blocks before a block reward may be spent. */
const COINBASE_MATURITY = 100;

/** No confirmed coins are free to pay this now (others' payments hold them): try again once blocks come. */
export class NoFreeCoinsError extends Error {
  override name = 'NoFreeCoinsError';
}

/**
 * The owner's unspent coins that no signed transaction holds and that are deep enough to spend: a
 * block reward after 100 blocks, change of the owner's own transactions at once (unconfirmed, while
 * its chain is short enough) or at one confirmation, any other at `confirmations`. Locked until the
 * caller's transaction ends: two payments never pick one coin.
 */
export async function freeCoins(trx: DbTransaction<Database>, owner: CoinOwner, q: { tip: number; confirmations: number; exclude?: string }): Promise<Coin[]> {
  let query = trx.selectFrom('bitcoin_outputs').select(['txid', 'vout', 'address', 'amount_sats', 'key_index', 'coinbase', 'own_change', 'height'])
    .where('owner', '=', owner.owner).where('spent_txid', 'is', null).where('reserved_by', 'is', null).where('amount_sats', '>', '0');
  if (owner.owner === 'wallet') query = query.where('wallet_id', '=', owner.walletId);
  const rows = await query.orderBy('amount_sats', 'desc').limit(500).forUpdate().execute();
  const mined = rows.filter((r) => {
    const depth = q.tip - r.height + 1;
    return r.coinbase ? depth > COINBASE_MATURITY : depth >= (r.own_change ? 1 : q.confirmations);
  }).map(coinOf);
  return [...mined, ...await freeUnconfirmedChange(trx, owner)];
}

/**
 * The BTC an address holds, as freeCoins sees its coins: a coin our signed send holds is spent
 * before its block, and that send's change is ours at once (else a sent transfer, its reservation
 * gone, would count twice until its block). `confirmedMinor`: others' coins `confirmations` deep and
 * our change; `latestMinor`: everything. One statement, one snapshot: read apart, a send committing
 * between the two reads showed its coin and its change both.
 */
export async function addressHoldings(db: Kysely<Database> | DbTransaction<Database>, address: string, q: { tip: number; confirmations: number }) {
  const rows = await db.selectFrom('bitcoin_outputs').select(['amount_sats', sql<number | null>`height`.as('height')]).where('address', '=', address).where('spent_txid', 'is', null).where('reserved_by', 'is', null)
    .unionAll(db.selectFrom('bitcoin_unconfirmed_change').select(['amount_sats', sql<number | null>`null::int`.as('height')]).where('address', '=', address).where('reserved_by', 'is', null))
    .execute();
  const sum = (of: typeof rows) => of.reduce((s, r) => s + BigInt(r.amount_sats), 0n);
  return { confirmedMinor: sum(rows.filter((r) => r.height === null || r.height <= q.tip - q.confirmations + 1)), latestMinor: sum(rows) };
}

/** The coins a signed transaction holds (its key). */
export async function reservedCoins(trx: DbTransaction<Database>, key: string): Promise<Coin[]> {
  const rows = await trx.selectFrom('bitcoin_outputs').select(['txid', 'vout', 'address', 'amount_sats', 'key_index']).where('reserved_by', '=', key).forUpdate().execute();
  return [...rows.map(coinOf), ...await reservedUnconfirmedChange(trx, key)];
}

function coinOf(r: { txid: string; vout: number; address: string; amount_sats: string; key_index: number | null }): Coin {
  return { txid: r.txid, vout: r.vout, address: r.address, amountSats: BigInt(r.amount_sats), keyIndex: r.key_index, depth: 0 };
}

export interface SignedBitcoinTransaction {
  raw: string;
  txid: string;
  feeSats: bigint;
}

/**
 * A transaction paying `outputs` from `required` coins and as many of `available` as it takes (btc-signer's
 * coin selection), change to `changeAddress` unless it would be dust, at `feeRate` sat/vB; each input
 * signed with its coin's key. PayoutRejectedError when the coins cannot cover it and `onShort` says
 * so; NoFreeCoinsError else.
 */
export function buildSpend(q: {
  network: BitcoinNetwork; outputs: { address: string; amount: bigint }[]; changeAddress: string; feeRate: bigint;
  required?: Coin[]; available: Coin[]; privateKeyOf: (coin: Coin) => Uint8Array; onShort: 'reject' | 'wait';
}): SignedBitcoinTransaction & { spent: Coin[] } {
  const addressOf = Address(q.network);
  const input = (c: Coin) => ({
    txid: c.txid, index: c.vout, sequence: RBF_SEQUENCE, witnessUtxo: { script: OutScript.encode(addressOf.decode(c.address)), amount: c.amountSats },
  });
  const selected = selectUTXO(q.available.map(input), q.outputs, 'default', {
    feePerByte: q.feeRate, changeAddress: q.changeAddress, network: q.network, createTx: true, bip69: false, requiredInputs: (q.required ?? []).map(input),
  });
  if (!selected?.tx) {
    const held = [...(q.required ?? []), ...q.available].reduce((sum, c) => sum + c.amountSats, 0n);
    const message = `${held} satoshis free to spend do not cover ${q.outputs.map((o) => `${o.amount} to ${o.address}`).join(', ')} and the fee at ${q.feeRate} sat/vB`;
    throw q.onShort === 'reject' ? new PayoutRejectedError(message) : new NoFreeCoinsError(message);
  }
  const tx = selected.tx;
  const coins = new Map([...(q.required ?? []), ...q.available].map((c) => [`${c.txid}:${c.vout}`, c]));
  const spent: Coin[] = [];
  for (let i = 0; i < tx.inputsLength; i++) {
    const inp = tx.getInput(i);
    const coin = coins.get(`${hex.encode(inp.txid!)}:${inp.index}`);
    if (!coin) throw new Error(`bitcoin: coin selection picked an input it was not given (${hex.encode(inp.txid!)}:${inp.index})`);
    tx.signIdx(q.privateKeyOf(coin), i);
    spent.push(coin);
  }
  tx.finalize();
  return { raw: hex.encode(tx.extract()), txid: tx.id, feeSats: tx.fee, spent };
}

/**
 * buildSpend, its coins then held under `key` in the caller's database transaction (the one that
 * stores the bytes), and its change recorded as the owner's unconfirmed change.
 */
export async function signSpend(
  trx: DbTransaction<Database>, key: string, owner: CoinOwner & { changeKeyIndex: number | null }, q: Parameters<typeof buildSpend>[0],
): Promise<SignedBitcoinTransaction> {
  const { spent, ...signed } = buildSpend(q);
  for (const c of spent) {
    const table = c.depth === 0 ? 'bitcoin_outputs' : 'bitcoin_unconfirmed_change';
    await trx.updateTable(table).set({ reserved_by: key }).where('txid', '=', c.txid).where('vout', '=', c.vout).execute();
  }
  await recordUnconfirmedChange(trx, key, { ...signed, network: q.network, changeAddress: q.changeAddress, owner, changeKeyIndex: owner.changeKeyIndex, spent });
  return signed;
}

/** Lets go of the coins a transaction the node refused held, and forgets the change it would have made. */
export async function releaseCoins(trx: DbTransaction<Database> | Kysely<Database>, key: string): Promise<void> {
  await trx.updateTable('bitcoin_outputs').set({ reserved_by: null }).where('reserved_by', '=', key).where('spent_txid', 'is', null).execute();
  await trx.updateTable('bitcoin_unconfirmed_change').set({ reserved_by: null }).where('reserved_by', '=', key).execute();
  await trx.deleteFrom('bitcoin_unconfirmed_change').where('made_by', '=', key).execute();
}

/** The payee outputs of a signed transaction (all but those to `changeAddress`), for its replacement. */
export function payeeOutputs(raw: string, network: BitcoinNetwork, changeAddress: string): { address: string; amount: bigint }[] {
  return outputsOf(raw, network).flatMap((o) => (o.address && o.address !== changeAddress ? [{ address: o.address, amount: o.amount }] : []));
}

/** Every output of a raw transaction with its index: its address (null for a script that is none, such as OP_RETURN) and amount. */
export function outputsOf(raw: string, network: BitcoinNetwork): { vout: number; address: string | null; amount: bigint }[] {
  const tx = Transaction.fromRaw(hex.decode(raw), { allowUnknownOutputs: true });
  const addressOf = Address(network);
  const outputs: { vout: number; address: string | null; amount: bigint }[] = [];
  for (let vout = 0; vout < tx.outputsLength; vout++) {
    const o = tx.getOutput(vout);
    let address: string | null = null;
    try {
      address = addressOf.encode(OutScript.decode(o.script!));
    } catch {
      // Not an address script.
    }
    outputs.push({ vout, address, amount: o.amount! });
  }
  return outputs;
}

/** A signed transaction's virtual size, and its fee given the coins it spends. */
export function feeRateOf(raw: string, spent: Coin[]): bigint {
  const tx = Transaction.fromRaw(hex.decode(raw), { allowUnknownOutputs: true });
  let out = 0n;
  for (let i = 0; i < tx.outputsLength; i++) out += tx.getOutput(i).amount!;
  const fee = spent.reduce((s, c) => s + c.amountSats, 0n) - out;
  return (fee + BigInt(tx.vsize) - 1n) / BigInt(tx.vsize);
}
