import type { Address } from '../db/schema';

export interface VerificationRequest {
  customer: {
    id: string;
    type: 'individual' | 'business';
    email: string;
    first_name: string | null;
    last_name: string | null;
    business_name: string | null;
    date_of_birth: string | null;
    address: Address | null;
  };
  documentType: string | null;
  documentFront: Buffer | null;
  selfie: Buffer | null;
  /** 1 for the first submission of this customer, 2 for the next, … */
  submissionNumber: number;
  /** Beneficial owners supplied so far (businesses). */
  beneficialOwnerCount: number;
}

export interface VerificationVerdict {
  outcome: 'approved' | 'rejected' | 'manual_review' | 'incomplete' | 'awaiting_ubo';
  reasons?: string[];
  riskRating?: 'low' | 'medium' | 'high';
}

/** What a real identity-verification vendor implements (document + selfie + data checks). */
export interface IdentityVerificationProvider {
  verify(request: VerificationRequest): Promise<VerificationVerdict>;
}

/**
 * Deterministic sandbox vendor. Magic values go in the customer's e-mail address (README, "Sandbox"):
 *   kyc_reject      → rejected (identity_document_invalid)
 *   kyc_manual      → manual_review, waiting for an operator decision
 *   kyc_incomplete  → incomplete (document_unreadable) on the first submission, approved after
 * Data checks apply to everyone: an individual without date_of_birth or address, or a business without
 * address, is incomplete; a business without beneficial owners is awaiting_ubo.
 */
export class SandboxIdentityProvider implements IdentityVerificationProvider {
  async verify(r: VerificationRequest): Promise<VerificationVerdict> {
    const email = r.customer.email.toLowerCase();
    const incomplete = missingData(r);
    if (incomplete) return incomplete;

    if (email.includes('kyc_incomplete') && r.submissionNumber === 1) {
      return { outcome: 'incomplete', reasons: ['document_unreadable'] };
    }
    if (r.customer.type === 'business' && r.beneficialOwnerCount === 0) {
      return { outcome: 'awaiting_ubo', reasons: ['beneficial_owners_missing'] };
    }
    if (email.includes('kyc_reject')) return { outcome: 'rejected', reasons: ['identity_document_invalid'], riskRating: 'high' };
    if (email.includes('kyc_manual')) return { outcome: 'manual_review', reasons: ['name_mismatch_on_document'] };
    return { outcome: 'approved', riskRating: 'low' };
  }
}

/**
 * The live environment without an identity-verification vendor: the same data checks, then every
 * complete submission waits for an operator's decision (`npm run cli -- kyc decide`), never an
 * automatic approval.
 */
export class OperatorReviewIdentityProvider implements IdentityVerificationProvider {
  async verify(r: VerificationRequest): Promise<VerificationVerdict> {
    const incomplete = missingData(r);
    if (incomplete) return incomplete;
    if (r.customer.type === 'business' && r.beneficialOwnerCount === 0) {
      return { outcome: 'awaiting_ubo', reasons: ['beneficial_owners_missing'] };
    }
    return { outcome: 'manual_review', reasons: ['no_identity_vendor_configured'] };
  }
}

/** Documents and data every verification needs, whoever verifies: `incomplete` naming what is missing. */
function missingData(r: VerificationRequest): VerificationVerdict | undefined {
  const missing: string[] = [];
  if (r.submissionNumber === 1 || r.documentFront) {
    if (!r.documentFront) missing.push('document_front_missing');
    if (!r.selfie && r.customer.type === 'individual') missing.push('selfie_missing');
  }
  if (r.customer.type === 'individual' && !r.customer.date_of_birth) missing.push('date_of_birth_missing');
  if (!r.customer.address) missing.push('address_missing');
  return missing.length > 0 ? { outcome: 'incomplete', reasons: missing } : undefined;
}
