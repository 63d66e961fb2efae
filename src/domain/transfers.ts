import type { TransferState } from '../db/schema';
import type { Posting } from '../ledger/ledger';
import { isChainRail } from './rails';

export const TRANSFER_STATES: readonly TransferState[] = [
  'awaiting_funds', 'funds_received', 'in_review', 'payment_submitted', 'payment_processed',
  'canceled', 'undeliverable', 'returned', 'refunded',
];

/** The moves of spec 3.3 and the branches docs/TRANSFERS.md describes. Anything else is refused. */
export const TRANSITIONS: Record<TransferState, readonly TransferState[]> = {
  awaiting_funds: ['funds_received', 'canceled'],
  funds_received: ['in_review', 'canceled'],
  in_review: ['payment_submitted', 'undeliverable', 'canceled'],
  payment_submitted: ['payment_processed', 'undeliverable'],
  payment_processed: ['returned'],
  // Refused before anything was sent (from in_review): refunded directly, no return leg to wait for.
  undeliverable: ['returned', 'refunded'],
  returned: ['refunded'],
  canceled: [],
  refunded: [],
};

/**
 * How far along its life a transfer is. A step whose state the transfer has already passed is a
 * replay (a worker crashed before the workflow recorded the step's completion) and changes nothing.
 */
export const PROGRESS: Record<TransferState, number> = {
  awaiting_funds: 0, funds_received: 1, in_review: 2, payment_submitted: 3, payment_processed: 4, undeliverable: 4,
  returned: 5, refunded: 6, canceled: 6,
};

/** States a DELETE may cancel from: nothing has been paid out yet. */
export const CANCELABLE: readonly TransferState[] = ['awaiting_funds', 'funds_received', 'in_review'];

/** The money of one transfer, in minor units. */
export interface TransferMoney {
  transferId: string;
  customerId: string;
  developerId: string;
  sourceRail: string;
  sourceCurrency: string;
  destinationRail: string;
  destinationCurrency: string;
  amountMinor: bigint;
  developerFeeMinor: bigint;
  exchangeFeeMinor: bigint;
  subtotalMinor: bigint;
  gasFeeMinor: bigint;
  /** SWIFT fees the sender pays (swift_charges), in the destination currency; 0 elsewhere. */
  swiftFeeMinor: bigint;
  finalMinor: bigint;
  /** The platform account the money comes from, or goes to, where a leg is one. */
  sourceAccountId: string | null;
  destinationAccountId: string | null;
}

/** Money in flight with a bank rail, or held on a chain by the platform. */
function clearing(rail: string, currency: string): Posting['account'] {
  return { ownerType: 'platform', ownerId: rail, purpose: isChainRail(rail) ? 'chain_treasury' : 'rail_clearing', currency };
}

/** Where a deposit comes from: the rail or chain, or what the source platform account reserved. */
const sourceSide = (m: TransferMoney): Posting['account'] =>
  (m.sourceAccountId ? accountReserved(m.sourceAccountId, m.sourceCurrency) : clearing(m.sourceRail, m.sourceCurrency));

const customerFunds = (m: TransferMoney, currency = m.sourceCurrency): Posting['account'] =>
  ({ ownerType: 'customer', ownerId: m.customerId, purpose: 'customer_funds', currency });

/** A platform account's spendable balance (docs/ACCOUNTS.md). */
export const accountAvailable = (accountId: string, currency: string): Posting['account'] =>
  ({ ownerType: 'account', ownerId: accountId, purpose: 'customer_funds', currency });

/** What a platform account's open transfers have reserved: no longer spendable, not yet gone. */
export const accountReserved = (accountId: string, currency: string): Posting['account'] =>
  ({ ownerType: 'account', ownerId: accountId, purpose: 'account_reserved', currency });

/** A transfer from a platform account reserves its amount at creation (and a cancel releases it: the same, negated). */
export function accountReservePostings(accountId: string, currency: string, amountMinor: bigint): Posting[] {
  return [
    { account: accountAvailable(accountId, currency), amountMinor: -amountMinor },
    { account: accountReserved(accountId, currency), amountMinor },
  ];
}

/** A canceled transfer's reservation, back to the account's available balance. */
export function accountReleasePostings(accountId: string, currency: string, amountMinor: bigint): Posting[] {
  return accountReservePostings(accountId, currency, -amountMinor);
}

/**
 * What the platform holds for operators on a rail: a stray deposit owed to its sender until it goes
 * back, money that named no transfer, a payment that came back after its return window.
 */
const unappliedDeposits = (rail: string, currency: string): Posting['account'] =>
  ({ ownerType: 'platform', ownerId: rail, purpose: 'unapplied_deposits', currency });

/** A stray deposit (not the transfer's own), or other money no workflow took, taken in: held, never the customer's. */
export function strayDepositPostings(rail: string, currency: string, amountMinor: bigint): Posting[] {
  return [
    { account: clearing(rail, currency), amountMinor: -amountMinor },
    { account: unappliedDeposits(rail, currency), amountMinor },
  ];
}

/** A stray deposit sent back to its sender. */
export function strayReturnPostings(rail: string, currency: string, amountMinor: bigint): Posting[] {
  return strayDepositPostings(rail, currency, -amountMinor);
}

/** The deposit arrived on the source rail: the platform now holds it for the customer. */
export function depositPostings(m: TransferMoney): Posting[] {
  return [
    { account: sourceSide(m), amountMinor: -m.amountMinor },
    { account: customerFunds(m), amountMinor: m.amountMinor },
  ];
}

/**
 * The payout left on the destination rail: the customer's funds pay the developer's fee, the
 * platform's exchange fee, the conversion (one leg per currency through fx_conversion) and the
 * network fee; the final amount goes out.
 */
export function payoutPostings(m: TransferMoney): Posting[] {
  const postings: Posting[] = [{ account: customerFunds(m), amountMinor: -m.amountMinor }];
  if (m.developerFeeMinor > 0n) {
    postings.push({ account: { ownerType: 'developer', ownerId: m.developerId, purpose: 'developer_fees', currency: m.sourceCurrency }, amountMinor: m.developerFeeMinor });
  }
  if (m.exchangeFeeMinor > 0n) {
    postings.push({ account: { ownerType: 'platform', ownerId: 'exchange', purpose: 'platform_fees', currency: m.sourceCurrency }, amountMinor: m.exchangeFeeMinor });
  }
  if (m.sourceCurrency !== m.destinationCurrency) {
    postings.push(
      { account: { ownerType: 'platform', ownerId: 'fx', purpose: 'fx_conversion', currency: m.sourceCurrency }, amountMinor: m.subtotalMinor },
      { account: { ownerType: 'platform', ownerId: 'fx', purpose: 'fx_conversion', currency: m.destinationCurrency }, amountMinor: -(m.finalMinor + m.gasFeeMinor + m.swiftFeeMinor) },
    );
  }
  if (m.gasFeeMinor > 0n) {
    postings.push({ account: { ownerType: 'platform', ownerId: 'network', purpose: 'platform_fees', currency: m.destinationCurrency }, amountMinor: m.gasFeeMinor });
  }
  // What the platform's bank charges for sending (and, swift_charges our, prepays to the correspondents).
  if (m.swiftFeeMinor > 0n) {
    postings.push({ account: { ownerType: 'platform', ownerId: 'swift', purpose: 'platform_fees', currency: m.destinationCurrency }, amountMinor: m.swiftFeeMinor });
  }
  // Out on the rail or chain, or into the destination platform account.
  const destination = m.destinationAccountId ? accountAvailable(m.destinationAccountId, m.destinationCurrency) : clearing(m.destinationRail, m.destinationCurrency);
  postings.push({ account: destination, amountMinor: m.finalMinor });
  return postings;
}

/** The payout came back (rejected or returned): every leg of it is reversed, fees included. */
export function payoutReversalPostings(m: TransferMoney): Posting[] {
  return payoutPostings(m).map((p) => ({ account: p.account, amountMinor: -p.amountMinor }));
}

/** The refund left on the source rail: the customer's funds go back where they came from. */
export function refundPostings(m: TransferMoney): Posting[] {
  // A refund to a platform account makes the money spendable there again.
  const back = m.sourceAccountId ? accountAvailable(m.sourceAccountId, m.sourceCurrency) : clearing(m.sourceRail, m.sourceCurrency);
  return [
    { account: customerFunds(m), amountMinor: -m.amountMinor },
    { account: back, amountMinor: m.amountMinor },
  ];
}

/** The source bank or chain rejected the refund: the money is back in the customer's funds. */
export function refundReversalPostings(m: TransferMoney): Posting[] {
  return refundPostings(m).map((p) => ({ account: p.account, amountMinor: -p.amountMinor }));
}

/** Where an operator sends a rejected refund instead of the source (checked by the API). */
export interface RefundDestination {
  toAddress: string | null;
  externalAccountId: string | null;
}
