import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Updateable } from 'kysely';
import type { Db } from '../src/db';
import type { CustomerRow, CustomersTable } from '../src/db/schema';
import type { Tenant } from '../src/db/tenant-scope';
import { endorsementsFor, type KycStatus } from '../src/domain/kyc';
import { recordEvent } from '../src/domain/events';
import { serializeCustomer } from '../src/customers/customer';
import { FAILURE } from '../src/temporal/failures';

export interface RecordKycStatusInput {
  customerId: string;
  kycStatus: KycStatus;
  incompleteReasons?: string[];
  reviewReasons?: string[];
  rejectionReasons?: string[];
  riskRating?: 'low' | 'medium' | 'high';
  customerStatus?: 'active';
  grantEndorsements?: boolean;
  /** The compliance operator's decision that ended a manual review, kept for audit. */
  operatorDecision?: { decision: 'approve' | 'reject'; reasons?: string[]; operator: string };
}

/**
 * Attempts before a customer that never became visible counts as rolled back (~13 s of retries;
 * fewer than the retry alarm's threshold, workflows/retry-alarm.ts, so the answer comes first).
 */
const CUSTOMER_VISIBILITY_ATTEMPTS = 7;

/** Activities that write the KYC read model in PostgreSQL, with their outbox events. */
export function createKycDatabaseActivities(db: Db) {
  return {
    /**
     * Moves kyc_status and writes `customer.kyc_status_changed` (plus `customer.kyc_approved`) in one
     * transaction. Idempotent: a retry after success finds the status already set and writes nothing.
     */
    async recordKycStatus(input: RecordKycStatusInput): Promise<{ changed: boolean; customerDeleted: boolean }> {
      return db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('customers').selectAll().where('id', '=', input.customerId).forUpdate().executeTakeFirst();
        if (!row) {
          const attempt = Context.current().info.attempt;
          if (attempt >= CUSTOMER_VISIBILITY_ATTEMPTS) {
            throw ApplicationFailure.nonRetryable(`customer ${input.customerId} does not exist`, FAILURE.CustomerNotFound);
          }
          throw ApplicationFailure.retryable(`customer ${input.customerId} not visible yet`, FAILURE.CustomerNotVisible);
        }
        if (row.status === 'deleted') return { changed: false, customerDeleted: true };
        if (row.kyc_status === input.kycStatus) return { changed: false, customerDeleted: false };

        const tenant: Tenant = { developerId: row.developer_id, environment: row.environment };
        const now = new Date();
        const updated = await trx
          .updateTable('customers')
          .set({
            kyc_status: input.kycStatus,
            incomplete_reasons: input.incompleteReasons ? JSON.stringify(input.incompleteReasons) : null,
            review_reasons: input.reviewReasons ? JSON.stringify(input.reviewReasons) : null,
            rejection_reasons: input.rejectionReasons ? JSON.stringify(input.rejectionReasons) : null,
            ...(input.riskRating ? { risk_rating: input.riskRating } : {}),
            ...statusFromKyc(row, input.customerStatus),
            ...(input.grantEndorsements ? { endorsements: endorsementsFor(row.address?.country) } : {}),
            ...(input.operatorDecision ? {
              kyc_decision: JSON.stringify({ ...input.operatorDecision, reasons: input.operatorDecision.reasons ?? null, decided_at: now.toISOString() }),
            } : {}),
            updated_at: now,
          })
          .where('id', '=', row.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        const customer = serializeCustomer(updated);
        const previous: Record<string, unknown> = { kyc_status: row.kyc_status };
        if (input.customerStatus && updated.status !== row.status) previous.status = row.status;
        if (input.grantEndorsements) previous.endorsements = row.endorsements;
        await recordEvent(trx, tenant, {
          type: 'customer.kyc_status_changed', objectId: row.id, data: customer, previousAttributes: previous,
        }, now);
        if (input.kycStatus === 'approved') {
          await recordEvent(trx, tenant, { type: 'customer.kyc_approved', objectId: row.id, data: customer }, now);
        }
        return { changed: true, customerDeleted: false };
      });
    },
  };
}

/** The status KYC gives the customer; a suspended customer keeps it for its reactivation instead. */
function statusFromKyc(row: CustomerRow, status: 'active' | undefined): Partial<Updateable<CustomersTable>> {
  if (!status) return {};
  if (row.status === 'suspended' && row.suspension) return { suspension: JSON.stringify({ ...row.suspension, previous_status: status }) };
  return { status };
}

export type KycActivities = ReturnType<typeof createKycDatabaseActivities>;
