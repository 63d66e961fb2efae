import type { DataCipher } from '../src/crypto';
import type { Db } from '../src/db';
import type { Environment } from '../src/db/schema';
import type { IdentityVerificationProvider, VerificationVerdict } from '../src/providers/identity-verification';

/** Activities that talk to the identity-verification vendor of the customer's environment. */
export function createIdentityVerificationActivities(deps: { db: Db; cipher: DataCipher; providers: Record<Environment, IdentityVerificationProvider> }) {
  return {
    async verifyIdentity(input: { customerId: string; submissionId: string }): Promise<VerificationVerdict> {
      const customer = await deps.db.selectFrom('customers').selectAll().where('id', '=', input.customerId).executeTakeFirstOrThrow();
      const submissions = await deps.db
        .selectFrom('kyc_submissions')
        .select(['id', 'document_type', 'document_front_encrypted', 'selfie_encrypted', 'beneficial_owner_count', 'created_at'])
        .where('customer_id', '=', input.customerId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      const index = submissions.findIndex((s) => s.id === input.submissionId);
      if (index < 0) throw new Error(`submission ${input.submissionId} not found`);
      // The latest documents on file count, even when this submission only added beneficial owners.
      const withDocuments = submissions.slice(0, index + 1).filter((s) => s.document_front_encrypted).pop();
      return deps.providers[customer.environment].verify({
        customer,
        documentType: withDocuments?.document_type ?? null,
        documentFront: withDocuments?.document_front_encrypted ? deps.cipher.decrypt(withDocuments.document_front_encrypted) : null,
        selfie: withDocuments?.selfie_encrypted ? deps.cipher.decrypt(withDocuments.selfie_encrypted) : null,
        submissionNumber: index + 1,
        beneficialOwnerCount: submissions.slice(0, index + 1).reduce((n, s) => n + s.beneficial_owner_count, 0),
      });
    },
  };
}

export type IdentityVerificationActivities = ReturnType<typeof createIdentityVerificationActivities>;
