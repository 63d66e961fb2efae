import type { Transaction } from 'kysely';
import type { TreasuryNative } from '../chains/chain-adapter';
import type { Db } from '../db';
import type { Database, Environment } from '../db/schema';
import { exceptionsExcess } from './closing-balance';
import { holdingsAccount, IN_FLIGHT, recordedHoldingsDay, recordHoldingsRun, treasuryAccounts, type HoldingsDay } from './chain-holdings';

// A chain treasury's native asset (ETH on the EVM chains) against what the platform's own
// transactions spent of it (docs/RECONCILIATION.md, "The chain treasuries"). The books carry no
// native asset: the treasury spends it on gas, and on the gas it sends deposit addresses for their
// sweeps. Every such transaction is signed by the platform and stored before it is sent, so each
// run asks the node what those that landed since the last run cost, at the block it reads the
// balance at; the treasury's balance plus all it ever spent is then constant, and anything else that
// moved it (a balance set on the node, ether sent from outside) is a difference.

/** Reads the treasury's native balance from a chain's node at the depth that counts, and what those of `txHashes` that had landed by then cost it. */
export type NativeReader = (chain: string, txHashes: string[]) => Promise<TreasuryNative>;

export interface NativeCheck {
  /** What the books hold of it (only write-offs post the native asset) less all the treasury's own transactions ever cost it. */
  booksMinor: bigint;
  /** What operators accepted (the float, matched by hand). */
  explainedMinor: bigint;
  differenceMinor: bigint;
}

/**
 * Node against books less spent, less what operators accepted: 0 when nothing but the platform's own
 * transactions moved the treasury since the float. `ledgerMinor` is the books' position (the
 * negated chain_treasury accounts in the native asset), which only a write-off moves.
 */
export function nativeCheck(nodeMinor: bigint, q: { spentMinor: bigint; ledgerMinor: bigint; acceptedMinor: bigint }): NativeCheck {
  const booksMinor = q.ledgerMinor - q.spentMinor;
  return { booksMinor, explainedMinor: q.acceptedMinor, differenceMinor: nodeMinor - booksMinor - q.acceptedMinor };
}

const LOOK_BACK_MS = 10 * 60_000;

/**
 * The treasury's transactions that may have landed since `since` (the last run's snapshot): those
 * in flight, and those made final since (final means deep enough, so landed by the last run's block
 * if final before it). Every payout, refund and stray return, and every sweep's gas.
 */
async function candidates(trx: Transaction<Database>, chain: string, since: Date): Promise<string[]> {
  const payments = await trx.selectFrom('payments').select(['tx_hash', 'replaced_tx_hashes'])
    .where('rail', '=', chain).where('kind', 'in', ['payout', 'refund', 'deposit_return']).where('tx_hash', 'is not', null)
    .where((eb) => eb.or([eb('status', 'in', IN_FLIGHT), eb('updated_at', '>', since)])).execute();
  const sweeps = await trx.selectFrom('chain_sweeps').select('gas_tx_hash').where('chain', '=', chain).where('gas_tx_hash', 'is not', null)
    .where((eb) => eb.or([eb('status', '=', 'pending'), eb('updated_at', '>', since)])).execute();
  const hashes = [...payments.flatMap((p) => [p.tx_hash!, ...p.replaced_tx_hashes ?? []]), ...sweeps.map((s) => s.gas_tx_hash!)];
  if (hashes.length === 0) return [];
  const counted = new Set((await trx.selectFrom('reconciliation_chain_costs').select('tx_hash').where('chain', '=', chain).where('tx_hash', 'in', hashes).execute()).map((r) => r.tx_hash));
  return [...new Set(hashes)].filter((h) => !counted.has(h));
}

/** One chain's native holdings, once per daily run (`runKey`): its run, the costs it found, and an exception on a difference. */
export async function reconcileChainNative(
  db: Db, q: { chain: string; nativeAsset: string; read: NativeReader }, opts: { runKey: string; environment: Environment }, now = new Date(),
): Promise<HoldingsDay> {
  const account = holdingsAccount(q.chain, q.nativeAsset);
  const done = await recordedHoldingsDay(db, opts.runKey, q.chain, q.nativeAsset);
  if (done) return done;
  // The records first, in one snapshot; the node after. A transaction's time is taken before the
  // snapshot, and the next run looks 10 minutes further back: a payment made final by a transaction
  // that committed after this snapshot began, with an earlier clock, is still looked at.
  const at = new Date();
  const snapshot = await db.transaction().setIsolationLevel('repeatable read').execute(async (trx) => {
    const last = await trx.selectFrom('reconciliation_runs').select(['period_from', 'spent_minor'])
      .where('kind', '=', 'holdings').where('account', '=', account).orderBy('created_at', 'desc').limit(1).executeTakeFirst();
    return {
      ledgerMinor: -(await treasuryAccounts(trx, q.chain, q.nativeAsset)),
      spentBefore: last ? BigInt(String(last.spent_minor ?? 0)) : 0n,
      hashes: await candidates(trx, q.chain, new Date((last?.period_from.getTime() ?? LOOK_BACK_MS) - LOOK_BACK_MS)),
      acceptedMinor: await exceptionsExcess(trx, { account, environment: opts.environment }),
    };
  });
  const node = await q.read(q.chain, snapshot.hashes);
  const spent = snapshot.spentBefore + node.costs.reduce((s, c) => s + c.costMinor, 0n);
  const check = nativeCheck(node.minor, { spentMinor: spent, ledgerMinor: snapshot.ledgerMinor, acceptedMinor: snapshot.acceptedMinor });
  await recordHoldingsRun(db, { chain: q.chain, currency: q.nativeAsset, ...opts, periodFrom: at }, node, check, now, {
    matched: node.costs.length, spentMinor: spent,
    alongside: async (trx, runId) => {
      if (node.costs.length === 0) return;
      await trx.insertInto('reconciliation_chain_costs').values(node.costs.map((c) => ({ chain: q.chain, tx_hash: c.txHash, cost_minor: c.costMinor.toString(), run_id: runId, created_at: now })))
        .onConflict((oc) => oc.columns(['chain', 'tx_hash']).doNothing()).execute();
    },
  });
  return { chain: q.chain, currency: q.nativeAsset, position: node.position, differenceMinor: check.differenceMinor.toString() };
}
