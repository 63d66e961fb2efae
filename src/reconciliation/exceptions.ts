import type { Transaction } from 'kysely';
import type { Db } from '../db';
import type { Database, Environment } from '../db/schema';
import type { ReconciliationResolutionsTable } from '../db/schema-reconciliation';
import { invalidState, invalidStateField, notFound } from '../errors';
import { newId } from '../ids';
import { isChainRail, RAILS, type PaymentRail } from '../domain/rails';
import { postTransaction, type Posting } from '../ledger/ledger';
import { signedMinor, storedLine } from './matching';

// What an operator does about a reconciliation exception (docs/RECONCILIATION.md, "Exceptions"):
// match it by hand, write it off to the suspense account through the ledger, or open an
// investigation. Each action is one row of reconciliation_resolutions (append-only): who, when,
// what, why, and the ledger movement a write-off posted. The API and the CLI both come here.

export type ResolutionAction = ReconciliationResolutionsTable['action'];

export interface ResolveInput {
  environment: Environment;
  exceptionId: string;
  action: ResolutionAction;
  reason: string;
  /** Who: the operator's key (`key_…`) or the name the CLI was given. */
  operator: string;
  /** For `match`: the exception on the other side that is the same money (a missing line and an unexpected one). */
  counterpartId?: string;
  requestId?: string;
}

const signed = (json: unknown) => {
  const line = storedLine(json);
  return line ? signedMinor(line) : 0n;
};

/** How much more the bank holds than the books say, for one exception: its statement side less its books' side. */
export function bankExcessMinor(e: { statement_line: unknown; expected_line: unknown }): bigint {
  return signed(e.statement_line) - signed(e.expected_line);
}

/** The currency of a bank account's rail (the rail table's: usd for ach, eur for sepa). */
export const railCurrency = (rail: string) => RAILS[rail as PaymentRail]?.currencies[0] ?? 'usd';

/** An exception's currency: a chain payout's own, or its bank account's rail's. */
export const exceptionCurrency = (e: { currency: string | null; rail: string }) => e.currency ?? railCurrency(e.rail);

/**
 * The write-off of a difference: the bank's rail clearing account (a chain's treasury account) takes
 * the side the bank's statement (the node) shows, the suspense account the other, so the ledger
 * agrees with the outside and the difference waits where an operator sees it (both on the
 * platform's own books).
 */
export function writeOffPostings(rail: string, excessMinor: bigint, currency = railCurrency(rail)): Posting[] {
  return [
    { account: { ownerType: 'platform', ownerId: rail, purpose: isChainRail(rail) ? 'chain_treasury' : 'rail_clearing', currency }, amountMinor: -excessMinor },
    { account: { ownerType: 'platform', ownerId: rail, purpose: 'reconciliation_suspense', currency }, amountMinor: excessMinor },
  ];
}

/**
 * Records an operator's action on an exception, in the caller's transaction; the exception as it is
 * afterwards, with every action taken on it.
 */
export async function resolveException(trx: Transaction<Database>, input: ResolveInput, now = new Date()) {
  const exception = await trx.selectFrom('reconciliation_exceptions').selectAll()
    .where('id', '=', input.exceptionId).where('environment', '=', input.environment).forUpdate().executeTakeFirst();
  if (!exception) throw notFound('reconciliation exception', input.exceptionId);
  if (exception.status === 'resolved') throw invalidState(`Exception ${exception.id} was resolved already (${exception.resolution})`);
  if (input.action === 'investigate' && exception.status === 'investigating') throw invalidState(`Exception ${exception.id} is under investigation already`);

  let ledgerTransactionId: string | null = null;
  let counterpart: string | null = null;
  if (input.action === 'write_off') {
    // A chain payout that its transaction does not prove is money that left, or may have: found and
    // recovered, or matched, never parked in suspense. A treasury's holdings may be written off.
    if (isChainRail(exception.rail) && exception.type !== 'balance_difference') {
      throw invalidState(`Exception ${exception.id} is about a chain payout: match it or investigate it`);
    }
    const excess = bankExcessMinor(exception);
    if (excess !== 0n) {
      ledgerTransactionId = (await postTransaction(trx, { developerId: 'platform', environment: input.environment }, {
        idempotencyKey: `reconciliation-write-off:${exception.id}`,
        description: `reconciliation exception ${exception.id} (${exception.type}) written off: ${input.reason}`,
        referenceId: exception.id,
        postings: writeOffPostings(exception.rail, excess, exceptionCurrency(exception)),
      })).transactionId;
    }
  }
  if (input.action === 'match' && input.counterpartId) {
    counterpart = await closeCounterpart(trx, exception, input, now);
  }
  // One row per exception the action closes or changes: the counterpart of a match has its own.
  const row = (exceptionId: string, other: string | null) => ({
    id: newId('reconciliationResolution', now.getTime()), exception_id: exceptionId, action: input.action, operator: input.operator,
    reason: input.reason, counterpart_exception_id: other, ledger_transaction_id: ledgerTransactionId, request_id: input.requestId ?? null, created_at: now,
  });
  await trx.insertInto('reconciliation_resolutions').values([row(exception.id, counterpart), ...counterpart ? [row(counterpart, exception.id)] : []]).execute();
  await trx.updateTable('reconciliation_exceptions').where('id', '=', exception.id).set(input.action === 'investigate'
    ? { status: 'investigating', updated_at: now }
    : { status: 'resolved', resolution: input.action === 'match' ? 'matched' : 'written_off', reason: input.reason, resolved_by: input.operator, resolved_at: now, updated_at: now })
    .execute();
  return (await exceptionWithResolutions(trx, input.environment, input.exceptionId))!;
}

/**
 * A match by hand of two exceptions that are the same money seen twice: the books' line the bank
 * did not show where expected, and the bank's line nobody expected. Both close; their differences
 * must cancel exactly, or the rest is an amount to write off instead.
 */
async function closeCounterpart(
  trx: Transaction<Database>, exception: { id: string; account: string; statement_line: unknown; expected_line: unknown }, input: ResolveInput, now: Date,
): Promise<string> {
  const other = await trx.selectFrom('reconciliation_exceptions').selectAll()
    .where('id', '=', input.counterpartId!).where('environment', '=', input.environment).forUpdate().executeTakeFirst();
  if (!other || other.id === exception.id) throw notFound('reconciliation exception', input.counterpartId);
  if (other.status === 'resolved') throw invalidStateField('counterpart_exception_id', `Exception ${other.id} was resolved already`);
  if (other.account !== exception.account) throw invalidStateField('counterpart_exception_id', `Exception ${other.id} is about another account (${other.account})`);
  const left = bankExcessMinor(exception) + bankExcessMinor(other);
  if (left !== 0n) {
    throw invalidStateField('counterpart_exception_id', `The two exceptions do not cancel: ${left} minor units would remain; write them off or investigate instead`);
  }
  await trx.updateTable('reconciliation_exceptions').where('id', '=', other.id)
    .set({ status: 'resolved', resolution: 'matched', reason: input.reason, resolved_by: input.operator, resolved_at: now, updated_at: now }).execute();
  return other.id;
}

/** One exception of the environment with the actions taken on it, oldest first; undefined if there is none. */
export async function exceptionWithResolutions(db: Db | Transaction<Database>, environment: Environment, id: string) {
  const exception = await db.selectFrom('reconciliation_exceptions').selectAll()
    .where('id', '=', id).where('environment', '=', environment).executeTakeFirst();
  if (!exception) return undefined;
  const resolutions = await db.selectFrom('reconciliation_resolutions').selectAll()
    .where('exception_id', '=', id).orderBy('created_at').orderBy('id').execute();
  return { ...exception, resolutions };
}

/** The exceptions of an environment, for a list: narrowed by status, type and account. */
export function exceptionsQuery(db: Db, environment: Environment, filter: { status?: string; type?: string; account?: string }) {
  let q = db.selectFrom('reconciliation_exceptions').selectAll().where('environment', '=', environment);
  if (filter.status) q = q.where('status', '=', filter.status as 'open');
  if (filter.type) q = q.where('type', '=', filter.type);
  if (filter.account) q = q.where('account', '=', filter.account);
  return q;
}
