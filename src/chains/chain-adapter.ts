import type { Transaction } from 'kysely';
import type { Hex } from 'viem';
import type { Database } from '../db/schema';
import type { ChainRail } from '../domain/rails';

/** A token transfer into one of our deposit addresses, as the chain shows it. */
export interface ChainDeposit {
  /** One token transfer (a transaction may carry several): `{txHash}:{logIndex}` on EVM chains. */
  id: string;
  txHash: string;
  from: string;
  amountMinor: bigint;
  confirmations: number;
}

/** Token transfers to some of our deposit addresses, as one look found them, and where the next look starts. */
export interface TransferScan {
  transfers: (ChainDeposit & { to: string })[];
  nextPosition: string;
  /** False when the look stopped at its range limit and more confirmed blocks wait to be read. */
  caughtUp: boolean;
}

/** One look for a deposit: what was found, and where the next look starts. */
export interface DepositScan {
  deposit: ChainDeposit | null;
  /** Other transfers to the address in the range read: another amount, or the quoted one again. */
  unmatched: ChainDeposit[];
  nextPosition: string;
  /** False when the look stopped at its range limit and more confirmed blocks wait to be read. */
  caughtUp: boolean;
}

export interface PayoutRequest {
  /** Derived from the transfer and the step; the same key never sends twice. */
  idempotencyKey: string;
  currency: string;
  to: string;
  amountMinor: bigint;
}

export type PayoutStatus =
  | { status: 'pending'; txHash: string }
  | { status: 'confirmed'; txHash: string; networkFee: string; nativeAsset: string }
  | { status: 'failed'; txHash: string; reason: string };

/** A token transfer from a customer's wallet (a transfer's source): the wallet pays its own gas. */
export interface WalletTransactionRequest {
  /** Derived from the transfer; the same key never sends twice. */
  idempotencyKey: string;
  walletId: string;
  transferId: string | null;
  /** The wallet's address on this chain. */
  from: string;
  currency: string;
  to: string;
  amountMinor: bigint;
}

/** A token transfer signed by the wallet's own key (custodial wallets). */
export interface WalletSendRequest extends WalletTransactionRequest {
  /** Opens the wallet's sealed private key; called only when there is something to sign, and only inside the send. */
  openKey: () => Promise<Buffer>;
}

/** A wallet's transaction waiting for its signature (MPC wallets): EIP-1559, serialized unsigned, and the hash to sign. */
export interface PreparedWalletTransaction {
  serialized: Hex;
  hash: Hex;
  chainId: number;
  nonce: number;
  /** The token contract the transaction calls. */
  token: Hex;
}

/** Moving a deposit (the transfer's own, or a stray one going back to its sender) into the treasury. */
export interface SweepRequest {
  /** Idempotency: the transfer id for its deposit, the stray's payment key for a stray. */
  sweepKey: string;
  transferId: string;
  /** The HD index of the deposit address. */
  depositIndex: number;
  currency: string;
  amountMinor: bigint;
}

/** Where moving a deposit into the treasury stands; `txHash` is the token transfer, null where the chain needs none. */
export type SweepStatus = { status: 'pending' } | { status: 'swept'; txHash: string | null };

/** The destination cannot receive this payment (blocked address, contract revert): do not retry. */
export class PayoutRejectedError extends Error {}

/** The chain, or a currency on it, is not set up here (no RPC address, no token contract): the API answers 503. */
export class ChainUnavailableError extends Error {
  override name = 'ChainUnavailableError';
}

/**
 * A chain the platform cannot trust right now until an operator acts (the bitcoin output index met a
 * reorganisation deeper than it follows): every request that needs it answers 503 naming the chain,
 * `/readyz` shows it degraded, the other chains go on (docs/OPERATIONS.md).
 */
export class ChainNeedsOperatorError extends ChainUnavailableError {
  constructor(readonly chain: string, message: string) {
    super(message);
  }
}

/**
 * What the transfer engine needs from a chain. EVM chains implement it over JSON-RPC (viem) against
 * anvil locally and real nodes in production; solana, stellar and tron have sandbox simulators.
 */
export interface ChainAdapter {
  /** Why the chain needs an operator, when it does (ChainNeedsOperatorError was met); shown by `/readyz`. */
  degraded?(): string | undefined;
  readonly chain: ChainRail;
  readonly nativeAsset: string;
  /** The address customers send to for deposit number `index` (one per transfer). */
  depositAddress(index: number): string;
  /** Fails with ChainUnavailableError when this chain cannot carry `currency` here (checked before a transfer is created). */
  checkCurrency(currency: string): Promise<void>;
  /** Whether `address` is one of this chain's token contracts here: tokens sent to a token contract are lost. */
  isTokenContract(address: string): boolean;
  /** A position to look for deposits from (block number), taken when the transfer is created. */
  currentPosition(): Promise<string>;
  /**
   * Why a payout of `currency` to `address` cannot be made (a stablecoin's blocklist, a frozen token
   * account, an address that is no wallet), asked before a payout is sent; undefined when it can.
   */
  receiverRefusal(currency: string, address: string): Promise<string | undefined>;
  /**
   * Token transfers of `currency` to any of `addresses` from `fromPosition` on, counting only those
   * with enough confirmations; a look reads a bounded range (RPC providers cap log queries).
   */
  findTransfersTo(q: { currency: string; addresses: string[]; fromPosition: string }): Promise<TransferScan>;
  /** Estimated network fee of one token payout, in the native asset's smallest unit. */
  estimatePayoutFee(currency: string): Promise<bigint>;
  /** Signs, records and broadcasts a payout; a retry with the same key re-sends the same transaction. */
  sendPayout(request: PayoutRequest): Promise<{ txHash: string }>;
  /**
   * Signs with the wallet's key, records and broadcasts a token transfer from the wallet; a retry
   * with the same key re-sends the same transaction. PayoutRejectedError when the chain would refuse
   * it (too little of the token, or of the native asset for gas): nothing is signed then.
   */
  sendFromWallet(request: WalletSendRequest): Promise<{ txHash: string }>;
  /**
   * The same token transfer, unsigned, for a wallet whose key is shared (MPC): checked as
   * `sendFromWallet` checks it, its nonce taken in the database transaction that `keep` stores it in.
   * A transaction signed later is stored under the request's key and broadcast by `sendFromWallet`.
   */
  prepareWalletTransaction(
    request: WalletTransactionRequest, keep: (trx: Transaction<Database>, tx: PreparedWalletTransaction) => Promise<void>,
  ): Promise<PreparedWalletTransaction>;
  /**
   * Whether nonce `nonce` of a wallet's `address` was used, as deep as confirmations require, by a
   * transaction the platform did not sign (a recovery made without it): a transaction prepared with
   * that nonce can then never be mined. Absent on chains without account nonces.
   */
  walletNonceUsedElsewhere?(address: string, nonce: number): Promise<boolean>;
  /** Whether a wallet pays its own transactions' fees in the native asset (false on the simulators). */
  readonly walletsPayGas: boolean;
  /**
   * Whether a wallet's confirmed balance counts its own sends as soon as they are signed and stored
   * (bitcoin: its spent coins out, its change in), rather than once their block is deep enough.
   */
  readonly balanceCountsOwnSends?: boolean;
  /** `pending` until the payout's transaction is mined and deep enough (confirmed or reverted alike); then final. */
  payoutStatus(idempotencyKey: string): Promise<PayoutStatus>;
  /**
   * Moves a deposit from its deposit address (HD index `depositIndex`) into the treasury that pays
   * payouts and refunds. One step per call, idempotent by `sweepKey`: call again until it answers
   * `swept`. Two sweeps of one address must not run at once (each spends the address's nonces and gas).
   */
  sweepDeposit(q: SweepRequest): Promise<SweepStatus>;
  /** False where deposits are the treasury's on arrival (the simulators): nothing to wait for before a stray goes back. */
  readonly sweepsDeposits: boolean;
  /**
   * An address's holdings of each asset (a token currency, or the chain's native asset): as of the
   * newest block deep enough to count (`confirmedMinor`), and as of the newest block (`latestMinor`).
   * `within`: the caller's open database transaction, through which an adapter that keeps chain data
   * in the database reads it (a second connection could wait forever on a pool of such callers).
   */
  balancesOf(address: string, assets: string[], within?: Transaction<Database>): Promise<AssetBalance[]>;
  /**
   * Every token transfer of the chain's currencies from `fromPosition` to the newest block, a bounded
   * range per call: what one watcher matches against all wallet addresses at once.
   */
  readTokenTransfers(fromPosition: string): Promise<TokenTransferPage>;
  /** A custodial wallet's address here, derived from the wallet's key, where the chain has its own rule (bitcoin: by network). */
  walletAddress?(walletKey: Uint8Array): string;
  /** How deep a transfer read before now is, or null when its transaction is no longer on the chain (a reorganisation). */
  transferDepth(t: { txHash: string; position: string }): Promise<{ confirmations: number; final: boolean } | null>;
  /**
   * What a transaction paid, as the node reports it (the reconciliation's check of settled payouts):
   * each movement of value to an address; null when the node does not know the transaction. Only
   * where the chain runs on a node (not the simulators).
   */
  movementsOf?(txHash: string): Promise<ChainMovement[] | null>;
  /**
   * The treasury's holdings of a token `currency` as of one position (the newest block deep enough
   * to count), and which of `txHashes` succeeded at or before it (the reconciliation's holdings
   * check). Only where the chain runs on a node and fees are paid in another asset than the token.
   */
  treasuryHoldings?(q: { currency: string; txHashes: string[] }): Promise<TreasuryHoldings>;
  /**
   * The treasury's native asset as of the newest block deep enough to count, and what each of
   * `txHashes` (the treasury's own) cost it, of those at or before that block: gas, and value sent.
   */
  treasuryNative?(txHashes: string[]): Promise<TreasuryNative>;
}

/** The treasury's native balance at `position`, and the cost of each of the transactions asked about that had landed by then. */
export interface TreasuryNative {
  position: string;
  minor: bigint;
  costs: { txHash: string; costMinor: bigint }[];
}

/** What the node says the treasury holds of one currency, at `position`, and which of the transactions asked about had landed by then. */
export interface TreasuryHoldings {
  position: string;
  minor: bigint;
  landed: string[];
}

/**
 * One movement of value a transaction made (a token transfer, a bitcoin output, a native transfer),
 * with where it sits in its transaction (log index, output index, token account index).
 */
export interface ChainMovement {
  to: string;
  currency: string;
  amountMinor: bigint;
  index: number;
}

/** A token transfer of any of the chain's currencies, whoever sent or received it (the wallet watcher's view). */
export interface ChainTokenTransfer {
  /** `{txHash}:{logIndex}` on EVM chains; the transaction hash on the simulators. */
  id: string;
  txHash: string;
  currency: string;
  from: string;
  to: string;
  amountMinor: bigint;
  /** The block (EVM) or time (simulators) it is in. */
  position: string;
  confirmations: number;
  /** Deep enough to count (finalized, or as many confirmations as the chain requires). */
  final: boolean;
}

export interface TokenTransferPage {
  transfers: ChainTokenTransfer[];
  nextPosition: string;
  /** False when the read stopped at its range limit and newer blocks wait to be read. */
  caughtUp: boolean;
}

export interface AssetBalance {
  asset: string;
  confirmedMinor: bigint;
  latestMinor: bigint;
}

/** What only the sandbox does on a chain: make a deposit of `amountMinor` to `address` appear (a mint, or a simulated transfer). */
export interface SandboxChainFunding {
  /** `gasMoney`: the address also gets native asset for its own gas, where the chain charges it (a wallet). */
  sandboxDeposit(q: { currency: string; address: string; amountMinor: bigint; from?: string; gasMoney?: boolean }): Promise<{ txHash: string }>;
}

/**
 * Looks for a transfer's deposit at its address: only a transfer of exactly the quoted amount funds
 * it; the others (another amount, the quoted one again) are reported as unmatched.
 */
export async function findDeposit(chain: ChainAdapter, q: { currency: string; address: string; fromPosition: string; amountMinor: bigint }): Promise<DepositScan> {
  const scan = await chain.findTransfersTo({ currency: q.currency, addresses: [q.address], fromPosition: q.fromPosition });
  const deposit = scan.transfers.find((d) => d.amountMinor === q.amountMinor) ?? null;
  return { deposit, unmatched: scan.transfers.filter((d) => d !== deposit), nextPosition: scan.nextPosition, caughtUp: scan.caughtUp };
}
