import { sql, type Transaction } from 'kysely';
import type { Db } from '../../db';
import type { BitcoinOutputsTable, Database } from '../../db/schema';
import { decodeBlock, type BlockTransaction } from './blocks';
import { BITCOIN_NETWORKS, type BitcoinKeys } from './keys';
import type { BitcoinRpc } from './rpc';
import { confirmUnconfirmedChange } from './unconfirmed-change';
import { ChainNeedsOperatorError } from '../chain-adapter';

type Owner = Pick<BitcoinOutputsTable, 'owner' | 'wallet_id' | 'key_index'>;
type NewOutput = Omit<BitcoinOutputsTable, 'reserved_by' | 'spent_txid' | 'spent_height'>;

/** Deepest reorganisation followed back; a deeper one needs an operator. */
const MAX_REORG_DEPTH = 100;

/**
 * The platform's view of Bitcoin: the outputs paying its addresses (treasury, deposit addresses,
 * wallets, the sandbox's faucet) and every output of a transaction spending one of them, read block
 * by block from a height cursor (the indexed blocks). Whatever asks (a watcher, a payout, a
 * balance) first brings it up to the node's tip; one at a time, under a database lock. A block the
 * node no longer has at its height (a reorganisation) is unread, with what it created and spent.
 */
export class BitcoinOutputIndex {
  private inFlight: Promise<{ tip: number; caughtUp: boolean }> | undefined;
  private last: { at: number; result: { tip: number; caughtUp: boolean } } | undefined;

  constructor(
    private readonly db: Db, private readonly rpc: BitcoinRpc, private readonly keys: BitcoinKeys,
    private readonly opts: {
      blocksPerRead: number; startHeight: (tip: number) => number;
      /** A look this recent is answered again instead of asking the node (every payout's status poll asks). */
      reuseMs: number;
    },
  ) {}

  /**
   * Reads the blocks the index has not read yet (at most `blocksPerRead` per call); answers the tip it
   * reached and whether that is the node's. Callers of one process share a look in flight, and one
   * that ended less than `reuseMs` ago.
   */
  async sync(): Promise<{ tip: number; caughtUp: boolean }> {
    if (this.last && this.last.result.caughtUp && Date.now() - this.last.at < this.opts.reuseMs) return this.last.result;
    this.inFlight ??= this.read().then((result) => {
      this.needsOperator = undefined;
      return result;
    }, (err: unknown) => {
      if (err instanceof ChainNeedsOperatorError) this.needsOperator = err;
      throw err;
    }).finally(() => {
      this.inFlight = undefined;
    });
    const result = await this.inFlight;
    this.last = { at: Date.now(), result };
    return result;
  }

  private async read(): Promise<{ tip: number; caughtUp: boolean }> {
    const nodeTip = await this.rpc.blockCount();
    return this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext('bitcoin_output_index'))`.execute(trx);
      let top = await this.indexedTip(trx);
      if (top === null) top = this.opts.startHeight(nodeTip) - 1;
      else top = await this.unreadReorganised(trx, top);
      const last = Math.min(nodeTip, top + this.opts.blocksPerRead);
      for (let height = top + 1; height <= last; height++) await this.readBlock(trx, height);
      return { tip: Math.max(last, top), caughtUp: last >= nodeTip };
    });
  }

  /** What the last look met that needs an operator, until a look succeeds again. */
  needsOperator: ChainNeedsOperatorError | undefined;

  /** The tip of this process's last look, if it made one. */
  lastTip(): number | undefined {
    return this.last?.result.tip;
  }

  /** The highest block the index has read, through `trx`. */
  async indexedTip(trx: Transaction<Database>): Promise<number | null> {
    const row = await trx.selectFrom('bitcoin_blocks').select((eb) => eb.fn.max('height').as('top')).executeTakeFirst();
    return row?.top ?? null;
  }

  /** Walks back from `top` to the newest block the node still has; unreads those above it. Answers that height. */
  private async unreadReorganised(trx: Transaction<Database>, top: number): Promise<number> {
    let height = top;
    for (; height >= 0 && top - height <= MAX_REORG_DEPTH; height--) {
      const stored = await trx.selectFrom('bitcoin_blocks').select('hash').where('height', '=', height).executeTakeFirst();
      if (!stored) break;
      const current = await this.rpc.blockHashIfAny(height);
      if (current === stored.hash) break;
    }
    if (height < top - MAX_REORG_DEPTH) {
      throw new ChainNeedsOperatorError('bitcoin', `bitcoin: a reorganisation deeper than ${MAX_REORG_DEPTH} blocks below ${top}: the output index needs an operator`);
    }
    if (height < top) {
      await trx.deleteFrom('bitcoin_outputs').where('height', '>', height).execute();
      await trx.updateTable('bitcoin_outputs').set({ spent_txid: null, spent_height: null }).where('spent_height', '>', height).execute();
      await trx.deleteFrom('bitcoin_blocks').where('height', '>', height).execute();
    }
    return height;
  }

  private async readBlock(trx: Transaction<Database>, height: number) {
    const hash = await this.rpc.blockHash(height);
    const { transactions } = decodeBlock(await this.rpc.rawBlock(hash), BITCOIN_NETWORKS[this.keys.network]);
    const owners = await this.ownersOf(trx, transactions);
    const known = await this.knownOutputs(trx, transactions);
    const created: NewOutput[] = [];
    for (const tx of transactions) {
      const spent = tx.inputs.map((i) => known.get(`${i.txid}:${i.vout}`)).filter((o) => o !== undefined);
      for (const o of spent) {
        await trx.updateTable('bitcoin_outputs').set({ spent_txid: tx.txid, spent_height: height }).where('txid', '=', o.txid).where('vout', '=', o.vout).execute();
      }
      const from = spent[0]?.address ?? tx.inputs[0]?.from ?? null;
      for (const out of tx.outputs) {
        if (out.address === null) continue;
        const owner: Owner | undefined = owners.get(out.address) ?? (spent.length > 0 ? { owner: 'external', wallet_id: null, key_index: null } : undefined);
        if (!owner) continue;
        const row: NewOutput = {
          txid: tx.txid, vout: out.vout, address: out.address, amount_sats: out.amountSats.toString(), height, ...owner, from_address: from, coinbase: tx.coinbase,
          own_change: spent.some((s) => s.owner === owner.owner && s.wallet_id === owner.wallet_id),
        };
        created.push(row);
        known.set(`${tx.txid}:${out.vout}`, row);
      }
    }
    if (created.length > 0) await trx.insertInto('bitcoin_outputs').values(created).onConflict((oc) => oc.doNothing()).execute();
    await confirmUnconfirmedChange(trx, [...new Set(created.map((o) => o.txid))]);
    await trx.insertInto('bitcoin_blocks').values({ height, hash }).execute();
  }

  /** Whose each address of the block's outputs is, for those that are the platform's or a wallet's. */
  private async ownersOf(trx: Transaction<Database>, transactions: BlockTransaction[]): Promise<Map<string, Owner>> {
    const addresses = [...new Set(transactions.flatMap((t) => t.outputs.map((o) => o.address).filter((a) => a !== null)))];
    const owners = new Map<string, Owner>([
      [this.keys.treasury.address, { owner: 'platform', wallet_id: null, key_index: this.keys.treasury.index }],
      [this.keys.faucet.address, { owner: 'faucet', wallet_id: null, key_index: this.keys.faucet.index }],
    ]);
    if (addresses.length === 0) return owners;
    const deposits = await trx.selectFrom('transfers').select(['deposit_address', 'deposit_index'])
      .where('source_rail', '=', 'bitcoin').where('deposit_address', 'in', addresses).execute();
    // Liquidation addresses are deposit addresses of the same sequence that stay (docs/ROUTES.md).
    const routes = await trx.selectFrom('payment_routes').select(['display_address as deposit_address', 'deposit_index'])
      .where('source_rail', '=', 'bitcoin').where('address', 'in', addresses).execute();
    for (const d of [...deposits, ...routes]) {
      if (d.deposit_index !== null) owners.set(d.deposit_address!, { owner: 'platform', wallet_id: null, key_index: this.keys.depositKeyIndex(Number(d.deposit_index)) });
    }
    const wallets = await trx.selectFrom('wallet_addresses').select(['address', 'wallet_id']).where('chain', '=', 'bitcoin').where('address', 'in', addresses).execute();
    for (const w of wallets) owners.set(w.address, { owner: 'wallet', wallet_id: w.wallet_id, key_index: null });
    return owners;
  }

  /** The outputs the block's inputs spend that the index holds, by `txid:vout`. */
  private async knownOutputs(trx: Transaction<Database>, transactions: BlockTransaction[]) {
    const txids = [...new Set(transactions.flatMap((t) => t.inputs.map((i) => i.txid)))];
    const rows = txids.length === 0 ? [] : await trx.selectFrom('bitcoin_outputs').select(['txid', 'vout', 'address', 'owner', 'wallet_id'])
      .where('txid', 'in', txids).execute();
    return new Map<string, Pick<NewOutput, 'txid' | 'vout' | 'address' | 'owner' | 'wallet_id'>>(rows.map((r) => [`${r.txid}:${r.vout}`, r]));
  }
}
