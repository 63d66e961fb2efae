import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { KycStatus } from '../src/domain/kyc';

// The KYC workflow's input and messages: what the API and the operators' tools send it, importable
// without the workflow's code (workflows/kyc.ts).

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
