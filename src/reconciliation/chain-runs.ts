import { sql } from 'kysely';
import type { ChainMovement } from '../chains/chain-adapter';
import type { Db } from '../db';
import type { Environment } from '../db/schema';
import { newId } from '../ids';
import { checkSettledPayouts, type ChainPayoutException, type SettledPayout } from './chain-payouts';
import { lineJson, type ReconciliationLine } from './matching';

// The chain side of the daily run (docs/RECONCILIATION.md, "Chain payouts"): every payout the books
// settled on a chain since the last run is checked against what its transaction did, as the chain's
// node reports it. What does not hold is an exception, recorded once per payout.

/** Reads what a transaction paid from a chain's node; null when the node does not know it. */
export type MovementReader = (chain: string, txHash: string) => Promise<ChainMovement[] | null>;

export interface ChainDay {
  chain: string;
  /** Payouts settled in the period, checked on the node. */
  checked: number;
  exceptionsOpened: number;
}

/** Payments that send value out on a chain and name their transaction. */
const PAID_OUT = ['payout', 'refund'] as const;

/**
 * Checks each chain's payouts settled in (`since`, `now`] against its node, once per daily run
 * (`runKey`): a run per chain, an exception per payout that its transaction does not prove.
 */
export async function reconcileChainPayouts(
  db: Db, read: { chains: string[]; movementsOf: MovementReader },
  opts: { runKey: string; environment: Environment; since: Date }, now = new Date(),
): Promise<ChainDay[]> {
  const days: ChainDay[] = [];
  for (const chain of read.chains) {
    const payouts = await settledPayouts(db, { chain, environment: opts.environment, since: opts.since, now });
    if (payouts.length === 0) continue;
    // Every settled payout on the same transactions, from any day (these among them): a movement
    // claimed on another day is still claimed.
    const all = await settledPayouts(db, { chain, environment: opts.environment, txHashes: [...new Set(payouts.map((p) => p.txHash))] });
    const movements = new Map<string, ChainMovement[]>();
    for (const hash of new Set(all.map((p) => p.txHash))) {
      const moved = await read.movementsOf(chain, hash);
      if (moved) movements.set(hash, moved);
    }
    const checked = new Set(payouts.map((p) => p.id));
    const exceptions = checkSettledPayouts(all, movements).filter((e) => checked.has(e.payout.id));
    days.push({ chain, checked: payouts.length, exceptionsOpened: await recordChainRun(db, { chain, ...opts }, exceptions, now) });
  }
  return days;
}

async function settledPayouts(
  db: Db, q: { chain: string; environment: Environment; since?: Date; now?: Date; txHashes?: string[] },
): Promise<SettledPayout[]> {
  let query = db.selectFrom('payments').select(['id', 'to_address', 'currency', 'amount_minor', 'tx_hash'])
    .where('environment', '=', q.environment).where('rail', '=', q.chain).where('kind', 'in', PAID_OUT).where('status', '=', 'settled')
    .where('tx_hash', 'is not', null).where('to_address', 'is not', null);
  if (q.since && q.now) query = query.where('updated_at', '>', q.since).where('updated_at', '<=', q.now);
  if (q.txHashes) query = query.where('tx_hash', 'in', q.txHashes);
  const rows = await query.orderBy('id').execute();
  return rows.map((r) => ({ id: r.id, to: r.to_address!, currency: r.currency, amountMinor: BigInt(r.amount_minor), txHash: r.tx_hash! }));
}

/** The chain's run of this daily run, and its exceptions, in one transaction; recorded once. Answers the exceptions opened. */
async function recordChainRun(
  db: Db, run: { chain: string; runKey: string; environment: Environment }, exceptions: ChainPayoutException[], now: Date,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`reconciliation:${run.chain}`}))`.execute(trx);
    const done = await trx.selectFrom('reconciliation_runs').select('exceptions_opened')
      .where('kind', '=', 'chain').where('day_run_key', '=', run.runKey).where('account', '=', run.chain).executeTakeFirst();
    if (done) return done.exceptions_opened;
    const runId = newId('reconciliationRun', now.getTime());
    await trx.insertInto('reconciliation_runs').values({
      id: runId, kind: 'chain', day_run_key: run.runKey, statement_file_id: null, account: run.chain, rail: run.chain, environment: run.environment,
      period_from: now, period_to: now, statement_closing_minor: null, matched: 0, exceptions_opened: exceptions.length, created_at: now,
    }).execute();
    if (exceptions.length > 0) {
      await trx.insertInto('reconciliation_exceptions').values(exceptions.map((e) => ({
        id: newId('reconciliationException', now.getTime()), run_id: runId, type: e.type, key: `payout:${e.payout.id}`, account: run.chain, rail: run.chain,
        environment: run.environment, currency: e.payout.currency, created_at: now, updated_at: now,
        amount_minor: (e.type === 'payee_not_paid' ? e.payout.amountMinor - e.paidMinor : e.payout.amountMinor).toString(),
        statement_line: chainSide(e, now), expected_line: lineJson(booksSide(e.payout, now)),
      }))).onConflict((oc) => oc.column('key').doNothing()).execute();
    }
    return exceptions.length;
  });
}

/**
 * What the node shows for an exception, as a line (direction debit: value leaving the platform): what
 * the transaction paid the payee, and who claimed it first; null when the node knows no such transaction.
 */
function chainSide(e: ChainPayoutException, now: Date): string | null {
  if (e.type === 'transaction_not_found') return null;
  // A movement another payout claimed paid this one nothing.
  const paid = e.type === 'payee_not_paid' ? e.paidMinor : 0n;
  const references = [e.payout.txHash, ...e.type === 'movement_claimed_twice' ? [`claimed by ${e.claimedBy}`] : []];
  return lineJson({ id: `chain:${e.payout.txHash}`, direction: 'debit', amountMinor: paid, date: day(now), references, counterparty: e.payout.to });
}

/** The payout as the books settled it. */
const booksSide = (p: SettledPayout, now: Date): ReconciliationLine =>
  ({ id: p.id, direction: 'debit', amountMinor: p.amountMinor, date: day(now), references: [p.id, p.txHash], counterparty: p.to });

const day = (at: Date) => at.toISOString().slice(0, 10);
