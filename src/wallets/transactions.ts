import { z } from 'zod';
import type { WalletTransactionRow } from '../db/schema';
import { ASSET_SCALE, formatAmount } from '../domain/money';
import { objectId } from '../ids';

// A wallet's history (GET /v0/wallets/{id}/transactions): the token transfers into and out of it
// that the chain's watcher (src/wallets/watcher.ts) recorded.

export const WalletTransactionSchema = z.object({
  id: objectId('wtx'),
  object: z.literal('wallet_transaction'),
  wallet_id: z.string(),
  chain: z.string(),
  currency: z.string(),
  direction: z.enum(['incoming', 'outgoing']),
  amount: z.string().describe('Decimal'),
  tx_hash: z.string(),
  counterparty_address: z.string().describe('The sender of an incoming transaction, the receiver of an outgoing one'),
  block: z.string().describe('The block it is in (a time on the simulated chains)'),
  confirmations: z.number().int(),
  state: z.enum(['pending', 'confirmed', 'dropped']).describe('pending until deep enough to count; dropped when a reorganisation took it away'),
  transfer_id: z.string().nullable().describe('The transfer it is a leg of, where there is one'),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
}).meta({ id: 'WalletTransaction' });

export function serializeWalletTransaction(row: WalletTransactionRow) {
  return {
    id: row.id, object: 'wallet_transaction' as const, wallet_id: row.wallet_id, chain: row.chain, currency: row.currency, direction: row.direction,
    amount: formatAmount(BigInt(row.amount_minor), ASSET_SCALE[row.currency] ?? 18), tx_hash: row.tx_hash, counterparty_address: row.counterparty,
    block: row.position, confirmations: row.confirmations, state: row.state, transfer_id: row.transfer_id,
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}
