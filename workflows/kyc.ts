import { ActivityFailure, condition, log, proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { IdentityVerificationActivities } from '../activities/identity-verification';
import type { SanctionsActivities } from '../activities/sanctions';
import type { KycStatus } from '../src/domain/kyc';
import type { VerificationVerdict } from '../src/providers/identity-verification';
import { KycRun, STEP } from './kyc-run';
import type { KycSubmission, KycWorkflowInput, OperatorDecision } from './kyc-messages';

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

/**
 * KYC for one customer, `kyc:{customer_id}`. PostgreSQL holds the read model; this workflow is the
 * only writer of kyc_status after creation, moving it through the states of spec 3.2:
 * not_started → pending → under_review → approved | rejected | manual_review | incomplete | awaiting_ubo,
 * where incomplete and awaiting_ubo go back to under_review on the next submission.
 */
export async function kycWorkflow(input: KycWorkflowInput): Promise<KycStatus | 'closed'> {
  const run = new KycRun(input);
  try {
    await run.moveTo('pending');
  } catch (err) {
    // The customer row never became visible (its creating transaction rolled back): nothing to verify.
    if (err instanceof ActivityFailure) {
      log.warn('customer not found; ending KYC', { customerId: input.customerId });
      return 'closed';
    }
    throw err;
  }
  run.ready = true;

  for (;;) {
    await condition(() => run.closed || (run.queue.length > 0 && run.status === 'under_review'));
    if (run.closed) return 'closed';
    const submission = run.queue.shift()!;
    const verdict = await reviewSubmission(input, submission);
    if (verdict.outcome === 'incomplete' || verdict.outcome === 'awaiting_ubo') {
      await run.moveTo(verdict.outcome, { incompleteReasons: verdict.reasons });
      run.reviewing = false;
      continue;
    }
    if (verdict.outcome === 'manual_review') {
      await run.moveTo('manual_review', { reviewReasons: verdict.reviewReasons });
      setCurrentDetails(`${STEP.manual_review}: ${verdict.reviewReasons.join(', ')}${verdict.screeningNote ? ` (${verdict.screeningNote})` : ''}`);
      return recordOperatorDecision(run);
    }
    return conclude(run, verdict.outcome === 'approved', verdict.reasons, verdict.riskRating);
  }
}

type Review = VerificationVerdict & { reviewReasons: string[]; screeningNote: string };

/**
 * The vendor's verdict on a submission, then, for one that would be approved or reviewed, the
 * sanctions screening: nobody is approved without one, and a potential match goes to a human.
 */
async function reviewSubmission(input: KycWorkflowInput, submission: KycSubmission): Promise<Review> {
  setCurrentDetails(`${STEP.under_review}: submission ${submission.submissionId}`);
  const verdict = await verifyIdentity({ customerId: input.customerId, submissionId: submission.submissionId });
  let reviewReasons: string[] = verdict.outcome === 'manual_review' ? (verdict.reasons ?? []) : [];
  let screeningNote = '';
  if (verdict.outcome === 'approved' || verdict.outcome === 'manual_review') {
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
  return { ...verdict, reviewReasons, screeningNote };
}

/**
 * Waits for an operator's decision and records it. A decision whose data cannot be stored is
 * refused (its Update fails) and the case goes on waiting for another.
 */
async function recordOperatorDecision(run: KycRun): Promise<KycStatus | 'closed'> {
  for (;;) {
    await condition(() => run.closed || run.decision !== undefined);
    if (run.closed) return 'closed';
    const d = run.decision!;
    try {
      return await conclude(run, d.decision === 'approve', d.reasons ?? ['rejected_by_compliance'], d.decision === 'approve' ? 'medium' : 'high', d);
    } catch (err) {
      if (!run.refusedDecisions.refuse(d, err)) throw err;
      run.decision = undefined;
    }
  }
}

/**
 * The final status. An operator's decision is written with the status it sets (an input of the
 * same write, so histories from before it was kept replay unchanged).
 */
async function conclude(
  run: KycRun, approved: boolean, reasons: string[] | undefined, riskRating: 'low' | 'medium' | 'high' | undefined, operatorDecision?: OperatorDecision,
): Promise<KycStatus> {
  const decided = operatorDecision ? { operatorDecision } : {};
  if (approved) {
    await run.moveTo('approved', { grantEndorsements: true, riskRating, customerStatus: 'active', ...decided });
    return 'approved';
  }
  await run.moveTo('rejected', { rejectionReasons: reasons, riskRating: riskRating ?? 'high', ...decided });
  return 'rejected';
}
