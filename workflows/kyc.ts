import {
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  log,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  ActivityFailure,
} from '@temporalio/workflow';
import type { KycActivities } from '../activities/kyc-database';
import type { IdentityVerificationActivities } from '../activities/identity-verification';
import type { SanctionsActivities } from '../activities/sanctions';
import { ACCEPTS_SUBMISSION, type KycStatus } from '../src/domain/kyc';
import { InvalidDataRefusals } from '../src/temporal/failures';
import { KycStatusAttr } from '../src/temporal/search-attributes';

export interface KycWorkflowInput {
  customerId: string;
  customerType: 'individual' | 'business';
}

export interface KycSubmission {
  submissionId: string;
  beneficialOwnerCount: number;
}

export interface OperatorDecision {
  decision: 'approve' | 'reject';
  reasons?: string[];
  operator: string;
}

export interface KycState {
  kyc_status: KycStatus;
  step: string;
}

/** Documents arrive through an Update so the API can answer with the outcome of the hand-over. */
export const submitKycDocuments = defineUpdate<KycState, [KycSubmission]>('submitKycDocuments');
/** A compliance operator's decision on a case in manual_review. */
export const decideManualReview = defineUpdate<KycState, [OperatorDecision]>('decideManualReview');
/** The customer was deleted: stop waiting. */
export const closeKyc = defineSignal('closeKyc');
export const kycState = defineQuery<KycState>('kycState');

// Read-model writes are short database transactions in our own PostgreSQL: local activities run them
// inside the workflow task (no extra round trip through the Temporal server), with the same retries.
const { recordKycStatus } = proxyLocalActivities<KycActivities>({
  startToCloseTimeout: '30 seconds',
  // The first write can race the API transaction that creates the customer: retry until it is visible.
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

// Each is one call to a provider (or the in-memory lists) that answers in well under a second. A
// task a stopping worker had polled but not started is lost until this timeout runs out: short, so
// that a restart resumes the KYC within seconds.
const { verifyIdentity } = proxyActivities<IdentityVerificationActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const { screenCustomerForKyc } = proxyActivities<SanctionsActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const STEP: Record<KycStatus, string> = {
  not_started: 'Starting KYC',
  pending: 'Waiting for identity documents',
  incomplete: 'Waiting for additional documents',
  under_review: 'Verifying identity documents',
  manual_review: 'Waiting for a compliance operator decision',
  awaiting_ubo: 'Waiting for beneficial owner information',
  approved: 'KYC approved',
  rejected: 'KYC rejected',
};

/**
 * KYC for one customer, `kyc:{customer_id}`. PostgreSQL holds the read model; this workflow is the
 * only writer of kyc_status after creation, moving it through the states of spec 3.2:
 * not_started → pending → under_review → approved | rejected | manual_review | incomplete | awaiting_ubo,
 * where incomplete and awaiting_ubo go back to under_review on the next submission.
 */
export async function kycWorkflow(input: KycWorkflowInput): Promise<KycStatus | 'closed'> {
  let status: KycStatus = 'not_started';
  let ready = false;
  let reviewing = false;
  let closed = false;
  let decision: OperatorDecision | undefined;
  /** Decisions whose record failed on invalid data, with why: their Update is refused. */
  const refusedDecisions = new InvalidDataRefusals<OperatorDecision>();
  const queue: KycSubmission[] = [];
  let screeningNote = '';

  const moveTo = async (next: KycStatus, extra: Omit<Parameters<KycActivities['recordKycStatus']>[0], 'customerId' | 'kycStatus'> = {}) => {
    setCurrentDetails(`${STEP[next]} (recording)`);
    const result = await recordKycStatus({ customerId: input.customerId, kycStatus: next, ...extra });
    if (result.customerDeleted) closed = true;
    status = next;
    upsertSearchAttributes([{ key: KycStatusAttr, value: next }]);
    setCurrentDetails(STEP[next]);
  };

  setHandler(kycState, () => ({ kyc_status: status, step: STEP[status] }));
  setHandler(closeKyc, () => {
    closed = true;
  });
  setHandler(
    submitKycDocuments,
    async (submission) => {
      reviewing = true;
      await condition(() => ready);
      queue.push(submission);
      await moveTo('under_review');
      return { kyc_status: status, step: STEP[status] };
    },
    {
      validator: (_submission: KycSubmission) => {
        if (closed) throw new Error('The customer is deleted');
        if (reviewing || !ACCEPTS_SUBMISSION.includes(status)) {
          throw new Error(`KYC is ${reviewing ? 'under_review' : status}; documents cannot be submitted now`);
        }
      },
    },
  );
  setHandler(
    decideManualReview,
    async (d) => {
      decision = d;
      await condition(() => status !== 'manual_review' || refusedDecisions.has(d));
      refusedDecisions.throwIfRefused(d);
      return { kyc_status: status, step: STEP[status] };
    },
    {
      validator: (_decision: OperatorDecision) => {
        if (status !== 'manual_review' || decision) throw new Error(`KYC is ${status}, not waiting for a manual review decision`);
      },
    },
  );

  try {
    await moveTo('pending');
  } catch (err) {
    // The customer row never became visible (its creating transaction rolled back): nothing to verify.
    if (err instanceof ActivityFailure) {
      log.warn('customer not found; ending KYC', { customerId: input.customerId });
      return 'closed';
    }
    throw err;
  }
  ready = true;

  for (;;) {
    await condition(() => closed || (queue.length > 0 && status === 'under_review'));
    if (closed) return 'closed';
    const submission = queue.shift()!;
    setCurrentDetails(`${STEP.under_review}: submission ${submission.submissionId}`);
    const verdict = await verifyIdentity({ customerId: input.customerId, submissionId: submission.submissionId });

    if (verdict.outcome === 'incomplete' || verdict.outcome === 'awaiting_ubo') {
      await moveTo(verdict.outcome, { incompleteReasons: verdict.reasons });
      reviewing = false;
      continue;
    }
    let reviewReasons: string[] = verdict.outcome === 'manual_review' ? (verdict.reasons ?? []) : [];
    if (verdict.outcome === 'approved' || verdict.outcome === 'manual_review') {
      // Nobody is approved without a sanctions screening; a potential match goes to a human.
      setCurrentDetails('Screening against sanctions lists');
      const screening = await screenCustomerForKyc({ customerId: input.customerId });
      if (screening.status === 'potential_match') {
        reviewReasons = ['sanctions_potential_match', ...reviewReasons];
        screeningNote = `potential sanctions match in ${screening.screeningId}: ${screening.summary}`;
      } else if (screening.status === 'unavailable' && screening.environment === 'production') {
        reviewReasons = ['sanctions_screening_unavailable', ...reviewReasons];
        screeningNote = 'sanctions lists unavailable';
      } else {
        screeningNote = screening.status === 'clear' ? `sanctions screening ${screening.screeningId}: clear` : 'sanctions screening skipped: no lists loaded (sandbox)';
      }
      if (reviewReasons.length > 0) verdict.outcome = 'manual_review';
    }
    if (verdict.outcome === 'manual_review') {
      await moveTo('manual_review', { reviewReasons });
      setCurrentDetails(`${STEP.manual_review}: ${reviewReasons.join(', ')}${screeningNote ? ` (${screeningNote})` : ''}`);
      return recordOperatorDecision();
    }
    return conclude(verdict.outcome === 'approved', verdict.reasons, verdict.riskRating);
  }

  /**
   * Waits for an operator's decision and records it. A decision whose data cannot be stored is
   * refused (its Update fails) and the case goes on waiting for another.
   */
  async function recordOperatorDecision(): Promise<KycStatus | 'closed'> {
    for (;;) {
      await condition(() => closed || decision !== undefined);
      if (closed) return 'closed';
      const d = decision!;
      try {
        return await conclude(d.decision === 'approve', d.reasons ?? ['rejected_by_compliance'], d.decision === 'approve' ? 'medium' : 'high', d);
      } catch (err) {
        if (!refusedDecisions.refuse(d, err)) throw err;
        decision = undefined;
      }
    }
  }

  /**
   * The final status. An operator's decision is written with the status it sets (an input of the
   * same write, so histories from before it was kept replay unchanged).
   */
  async function conclude(approved: boolean, reasons: string[] | undefined, riskRating: 'low' | 'medium' | 'high' | undefined, operatorDecision?: OperatorDecision) {
    const decided = operatorDecision ? { operatorDecision } : {};
    if (approved) {
      await moveTo('approved', { grantEndorsements: true, riskRating, customerStatus: 'active', ...decided });
      return 'approved';
    }
    await moveTo('rejected', { rejectionReasons: reasons, riskRating: riskRating ?? 'high', ...decided });
    return 'rejected';
  }
}
