import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db';
import type { SimulatedChain } from '../domain/rails';
import { encodeChainAddress } from '../domain/bank-validation';
import {
  PayoutRejectedError, type AssetBalance, type ChainAdapter, type SandboxChainFunding, type PayoutRequest, type PayoutStatus, type SweepStatus,
  type TokenTransferPage, type TransferScan, type WalletSendRequest,
} from './chain-adapter';
import { recordMinedTransaction } from '../payments/store';

const NATIVE: Record<SimulatedChain, string> = { stellar: 'xlm', tron: 'trx' };
/** Network fee per token transfer, in the native asset's smallest unit (stroops, sun). */
const FEES: Record<SimulatedChain, bigint> = { stellar: 100n, tron: 1_000_000n };

/**
 * A sandbox simulator of stellar or tron behind the chain interface: transactions live in
 * PostgreSQL (simulated_chain_transactions) and are final at once (these chains finalise in seconds).
 * Addresses are well-formed for the chain; a payout is recorded once per idempotency key.
 */
export class SimulatedChainAdapter implements ChainAdapter, SandboxChainFunding {
  readonly nativeAsset: string;
  readonly treasuryAddress: string;
  /** No balance per address here: a deposit is the treasury's as soon as it arrives. */
  readonly sweepsDeposits = false;
  /** The simulators charge wallets no fee. */
  readonly walletsPayGas = false;

  constructor(readonly chain: SimulatedChain, private readonly db: Db, private readonly seed: string) {
    this.nativeAsset = NATIVE[chain];
    this.treasuryAddress = this.depositAddress(-1);
  }

  depositAddress(index: number): string {
    return encodeChainAddress(this.chain, createHash('sha256').update(`${this.seed}:${this.chain}:${index}`).digest());
  }

  isTokenContract(): boolean {
    // The simulated ledgers have no contracts.
    return false;
  }

  async checkCurrency(): Promise<void> {
    // The simulator carries every currency its chain lists.
  }

  async receiverRefusal(): Promise<string | undefined> {
    // The simulated ledgers keep no blocklist.
    return undefined;
  }

  async currentPosition(): Promise<string> {
    return new Date().toISOString();
  }

  /** One indexed query over the simulated ledger: every look starts from the position given (a time). */
  async findTransfersTo(q: { currency: string; addresses: string[]; fromPosition: string }): Promise<TransferScan> {
    if (q.addresses.length === 0) return { transfers: [], nextPosition: q.fromPosition, caughtUp: true };
    const rows = await this.db.selectFrom('simulated_chain_transactions').selectAll()
      .where('chain', '=', this.chain).where('to_address', 'in', q.addresses).where('currency', '=', q.currency)
      .where('created_at', '>=', new Date(q.fromPosition))
      .orderBy('created_at').execute();
    const transfers = rows.map((r) => ({
      id: r.hash, txHash: r.hash, from: r.from_address, to: r.to_address, amountMinor: BigInt(r.amount_minor), confirmations: 1,
    }));
    return { transfers, nextPosition: q.fromPosition, caughtUp: true };
  }

  /** Token balances from the simulated ledger (final at once); the native asset is not simulated: none. */
  async balancesOf(address: string, assets: string[]): Promise<AssetBalance[]> {
    const rows = await this.db.selectFrom('simulated_chain_transactions')
      .select(['currency', sql<string>`sum(case when to_address = ${address} then amount_minor else -amount_minor end)`.as('net')])
      .where('chain', '=', this.chain).where((eb) => eb.or([eb('to_address', '=', address), eb('from_address', '=', address)]))
      .groupBy('currency').execute();
    return assets.map((asset) => {
      const net = BigInt(rows.find((r) => r.currency === asset)?.net ?? '0');
      return { asset, confirmedMinor: net, latestMinor: net };
    });
  }

  /**
   * Every simulated transfer since the position (a time). The next read starts a few seconds back,
   * so a row whose insert committed late is still read; the watcher records each transfer once.
   */
  async readTokenTransfers(fromPosition: string): Promise<TokenTransferPage> {
    const now = Date.now();
    const rows = await this.db.selectFrom('simulated_chain_transactions').selectAll()
      .where('chain', '=', this.chain).where('created_at', '>=', new Date(fromPosition)).orderBy('created_at').limit(5_000).execute();
    const transfers = rows.map((r) => ({
      id: r.hash, txHash: r.hash, currency: r.currency, from: r.from_address, to: r.to_address, amountMinor: BigInt(r.amount_minor),
      position: r.created_at.toISOString(), confirmations: 1, final: true,
    }));
    if (rows.length === 5_000) return { transfers, nextPosition: rows.at(-1)!.created_at.toISOString(), caughtUp: false };
    const next = new Date(Math.max(new Date(fromPosition).getTime(), now - 5_000)).toISOString();
    return { transfers, nextPosition: next, caughtUp: true };
  }

  /** Final at once, and never reorganised. */
  async transferDepth(): Promise<{ confirmations: number; final: boolean }> {
    return { confirmations: 1, final: true };
  }

  async estimatePayoutFee(): Promise<bigint> {
    return FEES[this.chain];
  }

  private async record(q: { currency: string; from: string; to: string; amountMinor: bigint; idempotencyKey: string | null }) {
    // Stellar and tron name a transaction by a hex hash.
    const hash = randomBytes(32).toString('hex');
    await sql`insert into simulated_chain_transactions (hash, chain, currency, from_address, to_address, amount_minor, idempotency_key, created_at)
              values (${hash}, ${this.chain}, ${q.currency}, ${q.from}, ${q.to}, ${q.amountMinor.toString()}, ${q.idempotencyKey}, ${new Date()})
              on conflict (idempotency_key) do nothing`.execute(this.db);
    return q.idempotencyKey
      ? (await this.db.selectFrom('simulated_chain_transactions').select('hash').where('idempotency_key', '=', q.idempotencyKey).executeTakeFirstOrThrow()).hash
      : hash;
  }

  async sendPayout(r: PayoutRequest): Promise<{ txHash: string }> {
    const txHash = await this.record({ currency: r.currency, from: this.treasuryAddress, to: r.to, amountMinor: r.amountMinor, idempotencyKey: r.idempotencyKey });
    await recordMinedTransaction(this.db, r.idempotencyKey, txHash);
    return { txHash };
  }

  /** A transfer from the wallet's address, recorded once per key; refused when the wallet holds too little. */
  async sendFromWallet(r: WalletSendRequest): Promise<{ txHash: string }> {
    const sent = await this.db.selectFrom('simulated_chain_transactions').select('hash').where('idempotency_key', '=', r.idempotencyKey).executeTakeFirst();
    if (sent) return { txHash: sent.hash };
    const [held] = await this.balancesOf(r.from, [r.currency]);
    if (held!.confirmedMinor < r.amountMinor) throw new PayoutRejectedError(`the wallet holds ${held!.confirmedMinor} of ${r.amountMinor} ${r.currency} (smallest units)`);
    return { txHash: await this.record({ currency: r.currency, from: r.from, to: r.to, amountMinor: r.amountMinor, idempotencyKey: r.idempotencyKey }) };
  }

  /** Simulated chains hold no MPC wallets: their keys are not secp256k1 ECDSA keys (docs/MPC.md). */
  async prepareWalletTransaction(): Promise<never> {
    throw new PayoutRejectedError(`MPC wallets are not served on ${this.chain}`);
  }

  /** The simulators keep no balance per address: a deposit is the treasury's as soon as it arrives. */
  async sweepDeposit(): Promise<SweepStatus> {
    return { status: 'swept', txHash: null };
  }

  async payoutStatus(idempotencyKey: string): Promise<PayoutStatus> {
    const row = await this.db.selectFrom('simulated_chain_transactions').select('hash').where('idempotency_key', '=', idempotencyKey).executeTakeFirstOrThrow();
    return { status: 'confirmed', txHash: row.hash, networkFee: FEES[this.chain].toString(), nativeAsset: this.nativeAsset };
  }

  async sandboxDeposit(q: { currency: string; address: string; amountMinor: bigint; from?: string }): Promise<{ txHash: string }> {
    const from = q.from ?? this.depositAddress(-2);
    return { txHash: await this.record({ currency: q.currency, from, to: q.address, amountMinor: q.amountMinor, idempotencyKey: null }) };
  }
}
