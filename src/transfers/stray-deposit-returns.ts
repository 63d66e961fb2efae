import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import type { PaymentRow } from '../db/schema';
import { tenantOf } from '../db/tenant-scope';
import { isZeroEvmAddress } from '../domain/bank-validation';
import { isChainRail } from '../domain/rails';
import { strayDepositPostings, strayReturnPostings } from '../domain/transfers';
import { postTransaction } from '../ledger/ledger';
import { releaseSuffix, strayReturnKey } from '../payments/keys';
import { insertPayment, markPaymentHeld, markPaymentSettled, findPayment, requirePayment, straysToReturn } from '../payments/store';
import type { SanctionsScreener } from '../sanctions/screener';

/**
 * Returning stray deposits to their senders, the database and screening side: chain deposits
 * (workflows/stray-deposit-return.ts; the chain side is in activities/chains.ts) and fiat ones
 * (workflows/rail-deposit-return.ts; the rail side is in activities/fiat-rails.ts).
 */
export class StrayDepositReturns {
  constructor(private readonly deps: { db: Db; cipher: DataCipher; sanctions: SanctionsScreener }) {}

  /** The transfer's stray deposits whose return has not been decided or not finished, oldest first. */
  async toReturn(transferId: string): Promise<{ depositKey: string }[]> {
    const strays = await straysToReturn(this.deps.db).select('d.idempotency_key').where('d.transfer_id', '=', transferId)
      .orderBy('d.created_at').orderBy('d.id').execute();
    return strays.map((s) => ({ depositKey: s.idempotency_key }));
  }

  /**
   * Decides whether a stray deposit goes back: not to a sender on a sanctions list, nor to the zero
   * address (tokens minted straight to the deposit address). Records the return (pending, or held
   * with the reason) and takes the money into the ledger, held for the sender, in one transaction.
   * A return an operator released to another address is screened again, at that address. A fiat
   * deposit is screened by its sender's name, where the provider gave one (screenRailSender).
   */
  async prepare(depositKey: string): Promise<{ returnKey: string; held: boolean }> {
    const { db } = this.deps;
    const returnKey = strayReturnKey(depositKey);
    const existing = await findPayment(db, { key: returnKey });
    if (existing) return { returnKey, held: await this.screenRelease(existing) };

    const stray = await requirePayment(db, { key: depositKey });
    const holdReason = await this.holdReason(stray);
    await db.transaction().execute(async (trx) => {
      await insertPayment(trx, {
        developer_id: stray.developer_id, environment: stray.environment, transfer_id: stray.transfer_id, kind: 'deposit_return',
        rail: stray.rail, currency: stray.currency, amount_minor: stray.amount_minor, status: holdReason ? 'held' : 'pending',
        to_address: stray.from_address, failure_reason: holdReason, idempotency_key: returnKey,
      });
      await postTransaction(trx, tenantOf(stray), {
        idempotencyKey: `${depositKey}:ledger:received`, description: 'stray deposit held for its sender', referenceId: stray.transfer_id,
        postings: strayDepositPostings(stray.rail, stray.currency, BigInt(stray.amount_minor)),
      });
    });
    const stored = await requirePayment(db, { key: returnKey });
    return { returnKey, held: stored.status === 'held' };
  }

  /**
   * The return is final (settled: the ledger lets the money go; on chain with its network fee), or
   * the chain or the sender's bank refused it (held for operators, the money still in the ledger).
   * Answers why the return is held, if it is.
   */
  async record(input: { returnKey: string } & ({ outcome: 'settled'; networkFee?: string } | { outcome: 'refused'; reason: string })): Promise<{ held: string | null }> {
    return this.deps.db.transaction().execute(async (trx) => {
      const payment = await requirePayment(trx, { key: input.returnKey }, { forUpdate: true });
      // Recorded by an earlier attempt, or held meanwhile: the sender's bank sent it back (holdReturnedDepositReturn).
      if (payment.status === 'settled' || payment.status === 'held') return { held: payment.status === 'held' ? payment.failure_reason : null };
      if (input.outcome === 'refused') {
        const refusal = isChainRail(payment.rail) ? `the chain refused the return: ${input.reason}` : input.reason;
        const reason = `${refusal}; held for operators`;
        await markPaymentHeld(trx, { id: payment.id }, { reason });
        return { held: reason };
      }
      await markPaymentSettled(trx, { id: payment.id }, { networkFee: input.networkFee ?? null });
      await postTransaction(trx, tenantOf(payment), {
        idempotencyKey: `${input.returnKey}:ledger:returned${releaseSuffix(payment)}`, description: 'stray deposit returned to its sender', referenceId: payment.transfer_id,
        postings: strayReturnPostings(payment.rail, payment.currency, BigInt(payment.amount_minor)),
      });
      return { held: null };
    });
  }

  /** A return an operator released to another address is screened again there: held if that address is listed. Answers whether it is held. */
  private async screenRelease(existing: PaymentRow): Promise<boolean> {
    const release = existing.operator_releases?.at(-1);
    if (existing.status === 'pending' && release && existing.to_address !== release.held_to_address) {
      const listed = this.screenAddress(existing.to_address!, existing.environment);
      if (listed) {
        await markPaymentHeld(this.deps.db, { id: existing.id }, { reason: `the address ${existing.to_address} it was released to ${listed}`, onlyIf: 'pending' });
        return true;
      }
    }
    return existing.status === 'held';
  }

  /** Why a stray deposit may not go back to where it came from, or null. */
  private async holdReason(stray: PaymentRow): Promise<string | null> {
    if (!isChainRail(stray.rail)) return this.screenRailSender(stray);
    if (!stray.from_address || isZeroEvmAddress(stray.from_address)) {
      return 'minted straight to the deposit address: there is no sender to return it to; held for operators';
    }
    const listed = this.screenAddress(stray.from_address, stray.environment);
    return listed ? `the sender ${stray.from_address} ${listed}` : null;
  }

  /** Production never pays unscreened: without lists the activity retries until they are loaded; the sandbox may run without lists. */
  private canScreen(environment: PaymentRow['environment']): boolean {
    if (this.deps.sanctions.readyFor(environment)) return true;
    if (environment === 'production') throw new Error(`a stray deposit cannot be returned unscreened: ${this.deps.sanctions.unavailableReason(environment)}`);
    return false;
  }

  /** Why an address may not be paid (`is listed for …`), or null. */
  private screenAddress(address: string, environment: PaymentRow['environment']): string | null {
    if (!this.canScreen(environment)) return null;
    const listed = this.deps.sanctions.listedAddress(address);
    return listed ? `is listed for ${listed.name} (${listed.source}): held for compliance, not returned` : null;
  }

  /**
   * A fiat deposit goes back through the provider to the account it came from. The sender's name,
   * where the provider reported it, is screened as the screening API screens a name; a potential
   * match is held. The reason names the listing and the score, never the sender (a stranger's name
   * stays encrypted on the rail event, out of the developer's screenings and events).
   */
  private async screenRailSender(stray: PaymentRow): Promise<string | null> {
    const event = await this.deps.db.selectFrom('rail_events').select('sender_encrypted')
      .where('provider_payment_id', '=', stray.provider_payment_id!).where('type', '=', 'payment.received').where('sender_encrypted', 'is not', null)
      .executeTakeFirst();
    if (!event?.sender_encrypted || !this.canScreen(stray.environment)) return null;
    const outcome = this.deps.sanctions.screen({ name: this.deps.cipher.decryptText(event.sender_encrypted) });
    if (outcome.status !== 'potential_match') return null;
    const top = outcome.matches[0]!;
    return `the sender resembles ${top.matched_name} (${top.source_name}, score ${top.score}): held for compliance, not returned`;
  }
}
