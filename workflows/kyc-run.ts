import { condition, proxyLocalActivities, setCurrentDetails, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { KycActivities } from '../activities/kyc-database';
import { ACCEPTS_SUBMISSION, type KycStatus } from '../src/domain/kyc';
import { InvalidDataRefusals } from '../src/temporal/failures';
import { KycStatusAttr } from '../src/temporal/search-attributes';
import {
  closeKyc, decideManualReview, kycState, submitKycDocuments, type KycState, type KycSubmission, type KycWorkflowInput, type OperatorDecision,
} from './kyc-messages';

// Read-model writes are short database transactions in our own PostgreSQL: local activities run them
// inside the workflow task (no extra round trip through the Temporal server), with the same retries.
const { recordKycStatus } = proxyLocalActivities<KycActivities>({
  startToCloseTimeout: '30 seconds',
  // The first write can race the API transaction that creates the customer: retry until it is visible.
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

export const STEP: Record<KycStatus, string> = {
  not_started: 'Starting KYC',
  pending: 'Waiting for identity documents',
  incomplete: 'Waiting for additional documents',
  under_review: 'Verifying identity documents',
  manual_review: 'Waiting for a compliance operator decision',
  awaiting_ubo: 'Waiting for beneficial owner information',
  approved: 'KYC approved',
  rejected: 'KYC rejected',
};

type StatusExtras = Omit<Parameters<KycActivities['recordKycStatus']>[0], 'customerId' | 'kycStatus'>;

/**
 * One KYC workflow's state: what its messages (submissions, an operator's decision, the customer's
 * deletion) brought in and what they answer, and the one thing every step does: record the status.
 */
export class KycRun {
  status: KycStatus = 'not_started';
  /** Submissions are taken once the first status is recorded. */
  ready = false;
  /** A submission is being reviewed: another is refused until it is decided. */
  reviewing = false;
  closed = false;
  decision?: OperatorDecision;
  /** Decisions whose record failed on invalid data, with why: their Update is refused. */
  readonly refusedDecisions = new InvalidDataRefusals<OperatorDecision>();
  readonly queue: KycSubmission[] = [];

  constructor(private readonly input: KycWorkflowInput) {
    setHandler(kycState, () => this.state());
    setHandler(closeKyc, () => {
      this.closed = true;
    });
    setHandler(submitKycDocuments, (submission) => this.takeSubmission(submission), { validator: (_submission: KycSubmission) => this.checkSubmissionAccepted() });
    setHandler(decideManualReview, (d) => this.takeDecision(d), { validator: (_decision: OperatorDecision) => this.checkDecisionAwaited() });
  }

  state(): KycState {
    return { kyc_status: this.status, step: STEP[this.status] };
  }

  /** Records the next status (and what goes with it), shows it, and notes a customer deleted meanwhile. */
  async moveTo(next: KycStatus, extra: StatusExtras = {}): Promise<void> {
    setCurrentDetails(`${STEP[next]} (recording)`);
    const result = await recordKycStatus({ customerId: this.input.customerId, kycStatus: next, ...extra });
    if (result.customerDeleted) this.closed = true;
    this.status = next;
    upsertSearchAttributes([{ key: KycStatusAttr, value: next }]);
    setCurrentDetails(STEP[next]);
  }

  private async takeSubmission(submission: KycSubmission): Promise<KycState> {
    this.reviewing = true;
    await condition(() => this.ready);
    this.queue.push(submission);
    await this.moveTo('under_review');
    return this.state();
  }

  private checkSubmissionAccepted(): void {
    if (this.closed) throw new Error('The customer is deleted');
    if (this.reviewing || !ACCEPTS_SUBMISSION.includes(this.status)) {
      throw new Error(`KYC is ${this.reviewing ? 'under_review' : this.status}; documents cannot be submitted now`);
    }
  }

  private async takeDecision(d: OperatorDecision): Promise<KycState> {
    this.decision = d;
    await condition(() => this.status !== 'manual_review' || this.refusedDecisions.has(d));
    this.refusedDecisions.throwIfRefused(d);
    return this.state();
  }

  private checkDecisionAwaited(): void {
    if (this.status !== 'manual_review' || this.decision) throw new Error(`KYC is ${this.status}, not waiting for a manual review decision`);
  }
}
