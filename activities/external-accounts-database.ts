import type { Db } from '../src/db';
import { recordEvent } from '../src/domain/events';
import { serializeExternalAccount } from '../src/external-accounts/external-account';

/** Writes of the external-account read model, with their outbox events. */
export function createExternalAccountActivities(db: Db) {
  return {
    /**
     * Final outcome of a verification. Idempotent; a link deleted meanwhile keeps `deleted`
     * (its transfers already under way are not affected either way).
     */
    async recordVerificationOutcome(input: { externalAccountId: string; outcome: 'verified' | 'verification_failed'; reason?: string }) {
      await db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('external_accounts').selectAll().where('id', '=', input.externalAccountId).forUpdate().executeTakeFirstOrThrow();
        if (row.status !== 'pending_verification') return;
        const now = new Date();
        const updated = await trx
          .updateTable('external_accounts')
          .set({ status: input.outcome, failure_reason: input.reason ?? null, updated_at: now })
          .where('id', '=', row.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await recordEvent(trx, { developerId: row.developer_id, environment: row.environment }, {
          type: `external_account.${input.outcome}`,
          objectId: row.id,
          data: serializeExternalAccount(updated),
          previousAttributes: { status: row.status },
        }, now);
      });
    },
  };
}

export type ExternalAccountActivities = ReturnType<typeof createExternalAccountActivities>;
