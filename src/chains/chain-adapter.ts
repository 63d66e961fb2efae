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

/** Where moving a deposit into the treasury stands; `txHash` is the token transfer, null where the chain needs none. */
export type SweepStatus = { status: 'pending' } | { status: 'swept'; txHash: string | null };

/** The destination cannot receive this payment (blocked address, contract revert): do not retry. */
export class PayoutRejectedError extends Error {}

/** The chain, or a currency on it, is not set up here (no RPC address, no token contract): the API answers 503. */
export class ChainUnavailableError extends Error {
  override name = 'ChainUnavailableError';
}

/**
 * What the transfer engine needs from a chain. EVM chains implement it over JSON-RPC (viem) against
 * anvil locally and real nodes in production; solana, stellar and tron have sandbox simulators.
 */
export interface ChainAdapter {
  readonly chain: ChainRail;
  readonly nativeAsset: string;
  /** The address customers send to for deposit number `index` (one per transfer). */
  depositAddress(index: number): string;
  /** Fails with ChainUnavailableError when this chain cannot carry `currency` here (checked before a transfer is created). */
  checkCurrency(currency: string): Promise<void>;
  /** A position to look for deposits from (block number), taken when the transfer is created. */
  currentPosition(): Promise<string>;
  /**
   * Looks for the deposit of `amountMinor` `currency` to `address` from `fromPosition` on, counting
   * only what has enough confirmations; a look reads a bounded range (RPC providers cap log queries).
   */
  findDeposit(q: { currency: string; address: string; fromPosition: string; amountMinor: bigint }): Promise<DepositScan>;
  /** Estimated network fee of one token payout, in the native asset's smallest unit. */
  estimatePayoutFee(currency: string): Promise<bigint>;
  /** Signs, records and broadcasts a payout; a retry with the same key re-sends the same transaction. */
  sendPayout(request: PayoutRequest): Promise<{ txHash: string }>;
  payoutStatus(idempotencyKey: string): Promise<PayoutStatus>;
  /**
   * Moves a transfer's received deposit from its deposit address (HD index `depositIndex`) into the
   * treasury that pays payouts and refunds. One step per call, idempotent by transfer: call again
   * until it answers `swept`.
   */
  sweepDeposit(q: { transferId: string; depositIndex: number; currency: string; amountMinor: bigint }): Promise<SweepStatus>;
  /** Sandbox only: make a deposit of `amountMinor` to `address` appear on the chain. */
  sandboxDeposit(q: { currency: string; address: string; amountMinor: bigint; from?: string }): Promise<{ txHash: string }>;
}
