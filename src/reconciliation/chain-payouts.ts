import type { ChainMovement, PayoutRequest } from '../chains/chain-adapter';

export type { ChainMovement };

// The chain side of the daily reconciliation (docs/RECONCILIATION.md): every payout the books call
// settled is checked against what its transaction did on the chain. Pure: the caller reads the
// payouts from the database and each transaction's movements from the chain's node.

/** Value paid to an address: what a payout asked of the chain, and what a transaction moved. */
type Payment = Pick<PayoutRequest, 'to' | 'currency' | 'amountMinor'>;

/** A payout the books call settled on a chain, with the transaction it recorded. */
export type SettledPayout = Payment & { id: string; txHash: string };

export type ChainPayoutException =
  /** The node knows no such transaction (or not as deep as confirmations require). */
  | { type: 'transaction_not_found'; payout: SettledPayout }
  /** The transaction pays the payee less than the payout, or pays someone else. */
  | { type: 'payee_not_paid'; payout: SettledPayout; paidMinor: bigint }
  /** Two payouts claim one movement: the fault that marked three Solana payouts settled on one transaction. */
  | { type: 'movement_claimed_twice'; payout: SettledPayout; claimedBy: string };

const sameAddress = (a: string, b: string) => (a.startsWith('0x') ? a.toLowerCase() === b.toLowerCase() : a === b);

/**
 * Checks each settled payout against its transaction's movements (`movements`: by transaction hash;
 * a hash the node does not know is absent). A payout is proved by one movement of its currency to its
 * payee of at least its amount that no earlier payout (by id) has claimed. Each movement proves one
 * payout at most. Deterministic: payouts are taken in id order.
 */
export function checkSettledPayouts(payouts: SettledPayout[], movements: Map<string, ChainMovement[]>): ChainPayoutException[] {
  const exceptions: ChainPayoutException[] = [];
  const claimed = new Map<string, string>();
  for (const payout of [...payouts].sort((a, b) => a.id.localeCompare(b.id))) {
    const moved = movements.get(payout.txHash);
    if (!moved) {
      exceptions.push({ type: 'transaction_not_found', payout });
      continue;
    }
    const toPayee = moved.filter((m) => m.currency === payout.currency && sameAddress(m.to, payout.to) && m.amountMinor >= payout.amountMinor);
    const free = toPayee.find((m) => !claimed.has(`${payout.txHash}:${m.index}`));
    if (free) {
      claimed.set(`${payout.txHash}:${free.index}`, payout.id);
      continue;
    }
    if (toPayee.length > 0) {
      exceptions.push({ type: 'movement_claimed_twice', payout, claimedBy: claimed.get(`${payout.txHash}:${toPayee[0]!.index}`)! });
      continue;
    }
    const paidMinor = moved.filter((m) => m.currency === payout.currency && sameAddress(m.to, payout.to)).reduce((sum, m) => sum + m.amountMinor, 0n);
    exceptions.push({ type: 'payee_not_paid', payout, paidMinor });
  }
  return exceptions;
}
