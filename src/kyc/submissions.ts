import { z } from 'zod';
import type { PlatformDeps } from '../deps';
import type { Tenant } from '../db/tenant-scope';
import { ApiError, invalidField, invalidState } from '../errors';
import { ACCEPTS_SUBMISSION } from '../domain/kyc';
import { pastDate } from '../domain/validation';
import { newId } from '../ids';
import { AddressInput, assertCustomerNotDeleted, findCustomer, serializeCustomer } from '../customers/customer';
import { decodeImageDataUri } from './documents';
import { submitToKycWorkflow } from './workflow-client';
import { oneOfShapes, variant } from '../domain/documented-variants';

const BeneficialOwner = z.strictObject({
  first_name: z.string().trim().min(1).max(100),
  last_name: z.string().trim().min(1).max(100),
  date_of_birth: pastDate,
  ownership_percentage: z.number().min(25, 'beneficial owners hold at least 25%').max(100),
  address: AddressInput.optional(),
});

export const KycSubmissionInput = z
  .strictObject({
    document_type: z.enum(['passport', 'drivers_license', 'national_id']).optional(),
    document_front: z.string().optional().describe('base64 data URI of a JPEG, PNG or WebP image, at most 5 MB'),
    selfie: z.string().optional().describe('base64 data URI of a JPEG, PNG or WebP image, at most 5 MB'),
    beneficial_owners: z.array(BeneficialOwner).min(1).max(10).optional().describe('Businesses: owners of 25% or more'),
  })
  .superRefine((v, ctx) => {
    const anyDocument = v.document_type !== undefined || v.document_front !== undefined || v.selfie !== undefined;
    if (!anyDocument && !v.beneficial_owners) {
      ctx.addIssue({ code: 'custom', path: ['document_type'], message: 'documents are required', params: { missing: true } });
      return;
    }
    if (anyDocument) {
      for (const key of ['document_type', 'document_front', 'selfie'] as const) {
        if (v[key] === undefined) {
          ctx.addIssue({ code: 'custom', path: [key], message: 'a submission carries document_type, document_front and selfie', params: { missing: true } });
        }
      }
    }
  })
  .meta(oneOfShapes([
      variant({ document_type: { type: 'string', enum: ['passport', 'drivers_license', 'national_id'] }, document_front: { type: 'string' }, selfie: { type: 'string' } }, 'Documents'),
      variant({ beneficial_owners: { type: 'array', minItems: 1, items: { type: 'object' } } }, 'Beneficial owners (businesses), with or without documents'),
  ]));
export type KycSubmissionInputType = z.output<typeof KycSubmissionInput>;

/**
 * Stores a KYC submission (images and owners encrypted) and hands it to the customer's KYC workflow,
 * which moves kyc_status to under_review before this returns. Shared by the API and the hosted page.
 */
export async function submitKyc(
  deps: PlatformDeps,
  tenant: Tenant,
  customerId: string,
  input: KycSubmissionInputType,
  channel: 'api' | 'hosted_page',
) {
  const customer = await findCustomer(deps.db, tenant, customerId);
  assertCustomerNotDeleted(customer);
  if (!ACCEPTS_SUBMISSION.includes(customer.kyc_status as (typeof ACCEPTS_SUBMISSION)[number])) {
    throw invalidState(`KYC is ${customer.kyc_status}; documents cannot be submitted now`);
  }
  if (input.beneficial_owners && customer.type !== 'business') {
    throw invalidField('body', 'beneficial_owners', "'beneficial_owners' applies to business customers only");
  }
  if (!input.document_type && customer.kyc_status !== 'awaiting_ubo') {
    throw invalidField('body', 'document_type', "Missing required field 'document_type': documents are required");
  }
  const front = input.document_front ? decodeImageDataUri(input.document_front, 'document_front') : undefined;
  const selfie = input.selfie ? decodeImageDataUri(input.selfie, 'selfie') : undefined;

  const submissionId = newId('kycSubmission');
  await deps.db
    .insertInto('kyc_submissions')
    .values({
      id: submissionId,
      customer_id: customer.id,
      developer_id: tenant.developerId,
      environment: tenant.environment,
      document_type: input.document_type ?? null,
      document_front_encrypted: front ? deps.cipher.encrypt(front.bytes) : null,
      selfie_encrypted: selfie ? deps.cipher.encrypt(selfie.bytes) : null,
      beneficial_owners_encrypted: input.beneficial_owners ? deps.cipher.encrypt(JSON.stringify(input.beneficial_owners)) : null,
      beneficial_owner_count: input.beneficial_owners?.length ?? 0,
      channel,
      created_at: new Date(),
    })
    .execute();
  try {
    await submitToKycWorkflow(
      deps,
      { customerId: customer.id, customerType: customer.type },
      { submissionId, beneficialOwnerCount: input.beneficial_owners?.length ?? 0 },
    );
  } catch (err) {
    // The workflow refused it (state changed meanwhile): the submission never counted. Any other
    // failure (no answer in time, Temporal down) keeps it: the workflow may still take it.
    if (err instanceof ApiError && err.code === 'invalid_state') {
      await deps.db.deleteFrom('kyc_submissions').where('id', '=', submissionId).execute();
    }
    throw err;
  }
  return serializeCustomer(await findCustomer(deps.db, tenant, customer.id));
}
