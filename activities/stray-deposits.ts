import type { DataCipher } from '../src/crypto';
import type { Db } from '../src/db';
import { isZeroEvmAddress } from '../src/domain/bank-validation';
import { isChainRail } from '../src/domain/rails';
import type { PaymentRow } from '../src/db/schema';
import { tenantOf } from '../src/db/tenant-scope';
import { strayDepositPostings, strayReturnPostings } from '../src/domain/transfers';
import { newId } from '../src/ids';
import { postTransaction } from '../src/ledger/ledger';
import type { SanctionsScreener } from '../src/sanctions/screener';
import { releaseSuffix } from '../src/transfers/stray-deposits';
import { STRAY_DEPOSIT_KEY_PART, STRAY_RETURN_KEY_PART, strayReturnKey } from './transfers-database';

/**
 * Stray deposits (`d`) whose return (`r`) is not decided yet or not finished. A token transfer of
 * nothing (address-poisoning spam) has nothing to give back.
 */
export function straysToReturn(db: Db) {
  return db.selectFrom('payments as d')
    .leftJoin('payments as r', (join) => join.on('r.idempotency_key', '=', (eb) =>
      eb.fn('replace', [eb.ref('d.idempotency_key'), eb.val(STRAY_DEPOSIT_KEY_PART), eb.val(STRAY_RETURN_KEY_PART)])))
    .where('d.kind', '=', 'deposit').where('d.status', '=', 'failed').where('d.idempotency_key', 'like', `%${STRAY_DEPOSIT_KEY_PART}%`)
    .where('d.amount_minor', '>', '0')
    .where((eb) => eb.or([eb('r.id', 'is', null), eb('r.status', 'in', ['pending', 'submitted'])]));
}

/**
 * The database and screening side of returning stray deposits to their senders: chain deposits
 * (workflows/stray-deposit-return.ts; the chain side is in activities/chains.ts) and fiat ones
 * (workflows/rail-deposit-return.ts; the rail side is in activities/fiat-rails.ts).
 */
export function createStrayDepositActivities(deps: { db: Db; cipher: DataCipher; sanctions: SanctionsScreener }) {
  /** Production never pays unscreened: without lists the activity retries until they are loaded; the sandbox may run without lists. */
  function canScreen(environment: PaymentRow['environment']): boolean {
    if (deps.sanctions.ready) return true;
    if (environment === 'production') throw new Error('sanctions lists are not loaded yet: a stray deposit cannot be returned unscreened');
    return false;
  }

  /** Why an address may not be paid (`is listed for …`), or null. */
  function screen(address: string, environment: PaymentRow['environment']): string | null {
    if (!canScreen(environment)) return null;
    const listed = deps.sanctions.listedAddress(address);
    return listed ? `is listed for ${listed.name} (${listed.source}): held for compliance, not returned` : null;
  }

  /**
   * A fiat deposit goes back through the provider to the account it came from. The sender's name,
   * where the provider reported it, is screened as the screening API screens a name; a potential
   * match is held. The reason names the listing and the score, never the sender (a stranger's name
   * stays encrypted on the rail event, out of the developer's screenings and events).
   */
  async function screenRailSender(stray: PaymentRow): Promise<string | null> {
    const event = await deps.db.selectFrom('rail_events').select('sender_encrypted')
      .where('provider_payment_id', '=', stray.provider_payment_id!).where('type', '=', 'payment.received').where('sender_encrypted', 'is not', null)
      .executeTakeFirst();
    if (!event?.sender_encrypted || !canScreen(stray.environment)) return null;
    const outcome = deps.sanctions.screen({ name: deps.cipher.decryptText(event.sender_encrypted) });
    if (outcome.status !== 'potential_match') return null;
    const top = outcome.matches[0]!;
    return `the sender resembles ${top.matched_name} (${top.source_name}, score ${top.score}): held for compliance, not returned`;
  }

  return {
    /** The transfer's stray deposits whose return has not been decided or not finished, oldest first. */
    async listStrayDepositsToReturn(input: { transferId: string }): Promise<{ depositKey: string }[]> {
      const strays = await straysToReturn(deps.db).select('d.idempotency_key').where('d.transfer_id', '=', input.transferId)
        .orderBy('d.created_at').orderBy('d.id').execute();
      return strays.map((s) => ({ depositKey: s.idempotency_key }));
    },

    /**
     * Decides whether a stray deposit goes back: not to a sender on a sanctions list, nor to the zero
     * address (tokens minted straight to the deposit address). Records the return (pending, or held
     * with the reason) and takes the money into the ledger, held for the sender, in one transaction.
     * A return an operator released to another address is screened again, at that address. A fiat
     * deposit is screened by its sender's name, where the provider gave one (screenRailSender).
     */
    async prepareStrayDepositReturn(input: { depositKey: string }): Promise<{ returnKey: string; held: boolean }> {
      const returnKey = strayReturnKey(input.depositKey);
      const existing = await deps.db.selectFrom('payments').selectAll().where('idempotency_key', '=', returnKey).executeTakeFirst();
      if (existing) {
        const release = existing.operator_releases?.at(-1);
        if (existing.status === 'pending' && release && existing.to_address !== release.held_to_address) {
          const listed = screen(existing.to_address!, existing.environment);
          if (listed) {
            await deps.db.updateTable('payments').set({ status: 'held', failure_reason: `the address ${existing.to_address} it was released to ${listed}`, updated_at: new Date() })
              .where('id', '=', existing.id).where('status', '=', 'pending').execute();
            return { returnKey, held: true };
          }
        }
        return { returnKey, held: existing.status === 'held' };
      }

      const stray = await deps.db.selectFrom('payments').selectAll().where('idempotency_key', '=', input.depositKey).executeTakeFirstOrThrow();
      let holdReason: string | null = null;
      if (!isChainRail(stray.rail)) {
        holdReason = await screenRailSender(stray);
      } else if (!stray.from_address || isZeroEvmAddress(stray.from_address)) {
        holdReason = 'minted straight to the deposit address: there is no sender to return it to; held for operators';
      } else {
        const listed = screen(stray.from_address, stray.environment);
        if (listed) holdReason = `the sender ${stray.from_address} ${listed}`;
      }
      await deps.db.transaction().execute(async (trx) => {
        const now = new Date();
        await trx.insertInto('payments').values({
          id: newId('payment', now.getTime()), developer_id: stray.developer_id, environment: stray.environment, transfer_id: stray.transfer_id,
          kind: 'deposit_return', rail: stray.rail, currency: stray.currency, amount_minor: stray.amount_minor,
          status: holdReason ? 'held' : 'pending', external_account_id: null, from_address: null, to_address: stray.from_address,
          provider_payment_id: null, tx_hash: null, signed_transaction: null, network_fee: null, return_code: null, failure_reason: holdReason,
          idempotency_key: returnKey, settles_at: null, created_at: now, updated_at: now,
        }).onConflict((oc) => oc.column('idempotency_key').doNothing()).execute();
        await postTransaction(trx, tenantOf(stray), {
          idempotencyKey: `${input.depositKey}:ledger:received`, description: 'stray deposit held for its sender', referenceId: stray.transfer_id,
          postings: strayDepositPostings(stray.rail, stray.currency, BigInt(stray.amount_minor)),
        });
      });
      const stored = await deps.db.selectFrom('payments').select('status').where('idempotency_key', '=', returnKey).executeTakeFirstOrThrow();
      return { returnKey, held: stored.status === 'held' };
    },

    /**
     * The return is final (settled: the ledger lets the money go; on chain with its network fee), or
     * the chain or the sender's bank refused it (held for operators, the money still in the ledger).
     * Answers why the return is held, if it is.
     */
    async recordStrayDepositReturn(
      input: { returnKey: string } & ({ outcome: 'settled'; networkFee?: string } | { outcome: 'refused'; reason: string }),
    ): Promise<{ held: string | null }> {
      return deps.db.transaction().execute(async (trx) => {
        const payment = await trx.selectFrom('payments').selectAll().where('idempotency_key', '=', input.returnKey).forUpdate().executeTakeFirstOrThrow();
        // Recorded by an earlier attempt, or held meanwhile: the sender's bank sent it back (holdReturnedDepositReturn).
        if (payment.status === 'settled' || payment.status === 'held') return { held: payment.status === 'held' ? payment.failure_reason : null };
        if (input.outcome === 'refused') {
          const refusal = isChainRail(payment.rail) ? `the chain refused the return: ${input.reason}` : input.reason;
          const reason = `${refusal}; held for operators`;
          await trx.updateTable('payments').set({ status: 'held', failure_reason: reason, updated_at: new Date() }).where('id', '=', payment.id).execute();
          return { held: reason };
        }
        await trx.updateTable('payments').set({ status: 'settled', network_fee: input.networkFee ?? null, failure_reason: null, updated_at: new Date() })
          .where('id', '=', payment.id).execute();
        await postTransaction(trx, tenantOf(payment), {
          idempotencyKey: `${input.returnKey}:ledger:returned${releaseSuffix(payment)}`, description: 'stray deposit returned to its sender', referenceId: payment.transfer_id,
          postings: strayReturnPostings(payment.rail, payment.currency, BigInt(payment.amount_minor)),
        });
        return { held: null };
      });
    },
  };
}

/**
 * Each attempt to return the money has its own ledger keys: a return that settled, came back and was
 * released again moves the money once per attempt.
 */
export type StrayDepositActivities = ReturnType<typeof createStrayDepositActivities>;
