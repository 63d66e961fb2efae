import { randomUUID } from 'node:crypto';
import { Address } from '@scure/btc-signer';
import type { Transaction } from 'kysely';
import type { Db } from '../../db';
import type { Database } from '../../db/schema';
import {
  ChainUnavailableError, PayoutRejectedError, type AssetBalance, type ChainAdapter, type ChainMovement, type PayoutRequest, type PayoutStatus, type PreparedWalletTransaction,
  type SandboxChainFunding, type SweepStatus, type TokenTransferPage, type TransferScan, type WalletSendRequest,
} from '../chain-adapter';
import { addressHoldings, feeRateOf, freeCoins, NoFreeCoinsError, outputsOf, payeeOutputs, reservedCoins, signSpend, type Coin, type CoinOwner, type SpendContext } from './coins';
import { feeRateWithin, replacementFeeRate, type FeeRateLimits } from './fees';
import { hasSpendsInFlight } from './unconfirmed-change';
import { BITCOIN_NETWORKS, walletBitcoinAddress, walletBitcoinKey, type BitcoinKeys } from './keys';
import { BitcoinOutputIndex } from './output-index';
import { BitcoinRpc } from './rpc';
import { BitcoinPaymentSends, broadcastNew, walletSendOnce } from './sends';

/** A payout's size in virtual bytes, for its fee estimate: one P2WPKH input, the payee and change. */
const PAYOUT_VSIZE = 141n;
/** Blocks the node's fee estimate aims to be mined within. */
const FEE_TARGET_BLOCKS = 6;
/** Heights read per page by the wallet watcher. */
const WATCH_PAGE_BLOCKS = 200;

export interface BitcoinAdapterOptions {
  db: Db;
  keys: BitcoinKeys;
  confirmations: number;
  /** The lowest and highest fee rates paid (BITCOIN_MIN_FEE_RATE, BITCOIN_MAX_FEE_RATE). */
  feeRates: FeeRateLimits;
  rbfAfterMs: number;
  /** How long a look at the node's tip is answered again in this process (BITCOIN_INDEX_REUSE_MS). */
  indexReuseMs: number;
  /** How long a wallet's send waits for the change of its own sends still out, within one try (BITCOIN_COIN_WAIT_MS). */
  coinWaitMs?: number;
}

/**
 * Bitcoin over a node's JSON-RPC: BTC in P2WPKH outputs, tracked by the platform's output index.
 * Deposit addresses are the platform's keys and their coins are the treasury's on arrival (payouts
 * spend them with the treasury's): nothing is swept. Each payment pays its own fee; payouts and
 * refunds from the platform's coins, a wallet's transaction from the wallet's.
 */
export class BitcoinChainAdapter implements ChainAdapter, SandboxChainFunding {
  readonly chain = 'bitcoin' as const;
  readonly nativeAsset = 'btc';
  readonly sweepsDeposits = false;
  readonly walletsPayGas = true;
  readonly balanceCountsOwnSends = true;
  readonly rpc: BitcoinRpc;
  private readonly index: BitcoinOutputIndex;
  private readonly sends: BitcoinPaymentSends;
  private readonly network;

  constructor(url: string, private readonly deps: BitcoinAdapterOptions) {
    this.rpc = new BitcoinRpc(url);
    this.network = BITCOIN_NETWORKS[deps.keys.network];
    // A regtest chain is read from its first block (the sandbox's faucet lives there); a real one from where the platform first looked.
    this.index = new BitcoinOutputIndex(deps.db, this.rpc, deps.keys, {
      blocksPerRead: 50, startHeight: (tip) => (deps.keys.network === 'regtest' ? 0 : tip), reuseMs: deps.indexReuseMs,
    });
    this.sends = new BitcoinPaymentSends({
      db: deps.db, rpc: this.rpc, confirmations: deps.confirmations, rbfAfterMs: deps.rbfAfterMs, sync: () => this.tip(),
      context: () => this.spendContext(), replace: (trx, key, stored, at) => this.replacement(trx, key, stored, at),
    });
  }

  /** The index brought up to the node's tip (page by page); answers that height. */
  async tip(): Promise<number> {
    for (;;) {
      const { tip, caughtUp } = await this.index.sync();
      if (caughtUp) return tip;
    }
  }

  depositAddress(index: number): string {
    return this.deps.keys.deposit(index).address;
  }

  /** Also brings the index up: a chain that needs an operator takes no new transfer (ChainNeedsOperatorError, a 503). */
  async checkCurrency(currency: string): Promise<void> {
    if (currency !== 'btc') throw new ChainUnavailableError(`bitcoin carries btc, not ${currency}`);
    await this.tip();
  }

  degraded(): string | undefined {
    return this.index.needsOperator?.message;
  }

  isTokenContract(): boolean {
    return false;
  }

  /** The height after the node's tip; the index is brought up to it (a transfer's creation reads it before its database transaction). */
  async currentPosition(): Promise<string> {
    return String((await this.tip()) + 1);
  }

  async receiverRefusal(_currency: string, to: string): Promise<string | undefined> {
    try {
      Address(this.network).decode(to);
      return undefined;
    } catch {
      return `${to} is not an address on the bitcoin ${this.deps.keys.network} network this platform pays on`;
    }
  }

  private async outputsFrom(q: { fromHeight: number; toHeight: number; addresses?: string[] }) {
    let query = this.deps.db.selectFrom('bitcoin_outputs').select(['txid', 'vout', 'address', 'amount_sats', 'height', 'from_address'])
      .where('height', '>=', q.fromHeight).where('height', '<=', q.toHeight).where('coinbase', '=', false);
    if (q.addresses) query = query.where('address', 'in', q.addresses);
    return (await query.orderBy('height').orderBy('txid').orderBy('vout').execute()).map((o) => ({
      id: `${o.txid}:${o.vout}`, txHash: o.txid, from: o.from_address ?? '', to: o.address, amountMinor: BigInt(o.amount_sats), height: o.height,
    }));
  }

  async findTransfersTo(q: { currency: string; addresses: string[]; fromPosition: string }): Promise<TransferScan> {
    const { tip, caughtUp } = await this.index.sync();
    const counted = tip - this.deps.confirmations + 1;
    const from = Number(q.fromPosition);
    if (counted < from || q.addresses.length === 0) return { transfers: [], nextPosition: q.fromPosition, caughtUp };
    const outputs = await this.outputsFrom({ fromHeight: from, toHeight: counted, addresses: q.addresses });
    return { transfers: outputs.map((o) => ({ ...o, confirmations: tip - o.height + 1 })), nextPosition: String(counted + 1), caughtUp };
  }

  /** Every payment into or out of the platform's addresses from `fromPosition` (change back to its sender left out). */
  async readTokenTransfers(fromPosition: string): Promise<TokenTransferPage> {
    const { tip, caughtUp } = await this.index.sync();
    const from = Number(fromPosition);
    if (tip < from) return { transfers: [], nextPosition: fromPosition, caughtUp };
    const last = Math.min(tip, from + WATCH_PAGE_BLOCKS - 1);
    const outputs = (await this.outputsFrom({ fromHeight: from, toHeight: last })).filter((o) => o.to !== o.from);
    return {
      transfers: outputs.map((o) => ({
        ...o, currency: 'btc', position: String(o.height), confirmations: tip - o.height + 1, final: tip - o.height + 1 >= this.deps.confirmations,
      })),
      nextPosition: String(last + 1),
      caughtUp: caughtUp && last === tip,
    };
  }

  async transferDepth(t: { txHash: string; position: string }): Promise<{ confirmations: number; final: boolean } | null> {
    const tip = await this.tip();
    const found = await this.deps.db.selectFrom('bitcoin_outputs').select('height').where('txid', '=', t.txHash).where('height', '=', Number(t.position)).executeTakeFirst();
    if (!found) return null;
    const confirmations = tip - found.height + 1;
    return { confirmations, final: confirmations >= this.deps.confirmations };
  }

  async movementsOf(txHash: string): Promise<ChainMovement[] | null> {
    const raw = await this.rpc.rawTransaction(txHash);
    if (raw === null) return null;
    return outputsOf(raw, this.network).flatMap((o) => (o.address ? [{ to: o.address, currency: 'btc', amountMinor: o.amount, index: o.vout }] : []));
  }

  /** Unspent BTC at the address: in blocks `confirmations` deep (confirmed), and in any block (latest); our own change in both. */
  async balancesOf(address: string, assets: string[], within?: Transaction<Database>): Promise<AssetBalance[]> {
    // Inside a caller's transaction, the index as this process last brought it up (never a second connection).
    const tip = within ? (this.index.lastTip() ?? await this.index.indexedTip(within) ?? 0) : await this.tip();
    const { confirmedMinor, latestMinor } = await addressHoldings(within ?? this.deps.db, address, { tip, confirmations: this.deps.confirmations });
    return assets.map((asset) => (asset === 'btc' ? { asset, confirmedMinor, latestMinor } : { asset, confirmedMinor: 0n, latestMinor: 0n }));
  }

  /** The node's fee rate for a block within an hour, held between BITCOIN_MIN_FEE_RATE and BITCOIN_MAX_FEE_RATE (sat/vB). */
  async feeRate(): Promise<bigint> {
    return feeRateWithin(await this.rpc.feeRate(FEE_TARGET_BLOCKS), this.deps.feeRates);
  }

  async estimatePayoutFee(): Promise<bigint> {
    return (await this.feeRate()) * PAYOUT_VSIZE;
  }

  /**
   * The chain's tip (the index brought up to it) and the fee rate: read before a database transaction
   * opens, never inside one, since the index needs a connection of its own and a pool full of
   * transactions waiting on it would wait forever.
   */
  private async spendContext(): Promise<SpendContext> {
    const [tip, feeRate] = await Promise.all([this.tip(), this.feeRate()]);
    return { tip, feeRate };
  }

  /**
   * A spend of `owner`'s free coins paying `outputs`, change to `changeAddress`, its coins held under
   * `key`. A wallet short of free coins while its own spends are still out waits for their change
   * (NoFreeCoinsError, tried again) rather than refusing: what it holds was checked when its transfers were created.
   */
  private async spend(trx: Transaction<Database>, key: string, owner: CoinOwner, at: SpendContext, q: {
    outputs: { address: string; amount: bigint }[]; changeAddress: string; privateKeyOf: (coin: Coin) => Uint8Array; onShort: 'reject' | 'wait';
  }) {
    const all = await freeCoins(trx, owner, { tip: at.tip, confirmations: this.deps.confirmations });
    const mined = all.filter((c) => c.depth === 0);
    const changeKeyIndex = owner.owner === 'platform' ? this.deps.keys.treasury.index : owner.owner === 'faucet' ? this.deps.keys.faucet.index : null;
    const sign = (available: Coin[]) => signSpend(trx, key, { ...owner, changeKeyIndex }, { ...q, network: this.network, feeRate: at.feeRate, available });
    try {
      // Coins a block holds first: such a spend stays replaceable at a higher fee; unconfirmed change only when they fall short.
      try {
        return await sign(mined);
      } catch (err) {
        if (!(err instanceof PayoutRejectedError || err instanceof NoFreeCoinsError) || mined.length === all.length) throw err;
        return await sign(all);
      }
    } catch (err) {
      if (err instanceof PayoutRejectedError && owner.owner === 'wallet' && await hasSpendsInFlight(trx, owner)) throw new NoFreeCoinsError(err.message);
      throw err;
    }
  }

  private platformKey = (coin: Coin) => this.deps.keys.key(coin.keyIndex!).privateKey();

  async sendPayout(r: PayoutRequest): Promise<{ txHash: string }> {
    const at = await this.spendContext();
    return this.sends.send(r.idempotencyKey, async (trx) => {
      const refusal = await this.receiverRefusal(r.currency, r.to);
      if (refusal) throw new PayoutRejectedError(refusal);
      return this.spend(trx, r.idempotencyKey, { owner: 'platform' }, at, {
        outputs: [{ address: r.to, amount: r.amountMinor }], changeAddress: this.deps.keys.treasury.address, privateKeyOf: this.platformKey, onShort: 'wait',
      });
    });
  }

  payoutStatus(idempotencyKey: string): Promise<PayoutStatus> {
    return this.sends.status(idempotencyKey);
  }

  /**
   * The stored payout again, from the same coins (and more if the higher fee needs them), at a higher
   * fee rate (`replacementFeeRate`); undefined when the ceiling allows none higher.
   */
  private async replacement(trx: Transaction<Database>, key: string, stored: string, { tip, feeRate: estimate }: SpendContext) {
    const required = await reservedCoins(trx, key);
    const feeRate = replacementFeeRate(feeRateOf(stored, required), estimate, this.deps.feeRates);
    if (feeRate === undefined) return undefined;
    const available = await freeCoins(trx, { owner: 'platform' }, { tip, confirmations: this.deps.confirmations });
    const treasury = this.deps.keys.treasury.address;
    return signSpend(trx, key, { owner: 'platform', changeKeyIndex: this.deps.keys.treasury.index }, {
      network: this.network, outputs: payeeOutputs(stored, this.network, treasury), changeAddress: treasury, feeRate,
      required, available, privateKeyOf: this.platformKey, onShort: 'wait',
    });
  }

  walletAddress(walletKey: Uint8Array): string {
    return walletBitcoinAddress(walletKey, this.deps.keys.network);
  }

  /**
   * A wallet's send; while its free coins are short and its own earlier sends are still out (their
   * change comes with the next block), looked at again every 250 ms for up to `coinWaitMs`.
   */
  async sendFromWallet(r: WalletSendRequest): Promise<{ txHash: string }> {
    const until = Date.now() + (this.deps.coinWaitMs ?? 0);
    for (;;) {
      try {
        return await this.sendFromWalletOnce(r);
      } catch (err) {
        if (!(err instanceof NoFreeCoinsError) || Date.now() >= until) throw err;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }

  private async sendFromWalletOnce(r: WalletSendRequest): Promise<{ txHash: string }> {
    const at = await this.spendContext();
    return walletSendOnce({ db: this.deps.db, rpc: this.rpc }, { key: r.idempotencyKey, walletId: r.walletId, transferId: r.transferId }, async (trx) => {
      const refusal = await this.receiverRefusal(r.currency, r.to);
      if (refusal) throw new PayoutRejectedError(refusal);
      const key = await r.openKey();
      try {
        const privateKey = walletBitcoinKey(key);
        if (walletBitcoinAddress(key, this.deps.keys.network) !== r.from) throw new Error(`wallet ${r.walletId}: its key does not open to its bitcoin address`);
        return await this.spend(trx, r.idempotencyKey, { owner: 'wallet', walletId: r.walletId }, at, {
          outputs: [{ address: r.to, amount: r.amountMinor }], changeAddress: r.from, privateKeyOf: () => privateKey, onShort: 'reject',
        });
      } finally {
        key.fill(0);
      }
    });
  }

  prepareWalletTransaction(): Promise<PreparedWalletTransaction> {
    return Promise.reject(new ChainUnavailableError('MPC wallets hold ECDSA key shares for EVM chains only'));
  }

  /** Deposits are the platform's coins where they land: nothing to move. */
  async sweepDeposit(): Promise<SweepStatus> {
    return { status: 'swept', txHash: null };
  }

  /** The sandbox's deposit: the faucet (the sandbox node's miner) pays the address. */
  async sandboxDeposit(q: { currency: string; address: string; amountMinor: bigint }): Promise<{ txHash: string }> {
    await this.checkCurrency(q.currency);
    const key = `sandbox_deposit:${randomUUID()}`;
    const at = await this.spendContext();
    const signed = await this.deps.db.transaction().execute((trx) => this.spend(trx, key, { owner: 'faucet' }, at, {
      outputs: [{ address: q.address, amount: q.amountMinor }], changeAddress: this.deps.keys.faucet.address,
      privateKeyOf: () => this.deps.keys.faucet.privateKey(), onShort: 'reject',
    }));
    await broadcastNew(this.deps.db, this.rpc, key, signed.raw, async () => undefined);
    return { txHash: signed.txid };
  }
}
