import { z } from 'zod';
import { objectId } from '../../api/common-schemas';
import { listParams, listSchema } from '../../api/pagination';
import { countryCode, e164Phone, pastDate } from '../../domain/validation';
import { ENDORSEMENTS, KYC_STATUSES } from '../../domain/kyc';

const personName = z.string().trim().min(1, 'must not be empty').max(100);

export const AddressInput = z.strictObject({
  line1: z.string().trim().min(1, 'must not be empty').max(200),
  line2: z.string().trim().max(200).optional(),
  city: z.string().trim().min(1, 'must not be empty').max(100),
  state: z.string().trim().max(100).optional(),
  postal_code: z.string().trim().max(20).optional(),
  country: countryCode,
});

const taxId = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9 .-]{4,32}$/, 'must be 4 to 32 letters, digits, spaces, dots or dashes');

const editable = {
  email: z.email('must be a valid e-mail address').max(254),
  first_name: personName,
  last_name: personName,
  business_name: z.string().trim().min(1).max(200),
  phone: e164Phone,
  date_of_birth: pastDate,
  address: AddressInput,
  tax_id: taxId,
};

export const CustomerCreate = z
  .strictObject({
    type: z.enum(['individual', 'business']),
    email: editable.email,
    first_name: editable.first_name.optional(),
    last_name: editable.last_name.optional(),
    business_name: editable.business_name.optional(),
    phone: editable.phone.optional(),
    date_of_birth: editable.date_of_birth.optional(),
    address: editable.address.optional(),
    tax_id: editable.tax_id.optional(),
  })
  .superRefine((c, ctx) => {
    const need = (key: string, who: string) =>
      ctx.addIssue({ code: 'custom', path: [key], message: `is required for ${who} customers`, params: { missing: true } });
    if (c.type === 'individual') {
      if (!c.first_name) need('first_name', 'individual');
      if (!c.last_name) need('last_name', 'individual');
      if (c.business_name) ctx.addIssue({ code: 'custom', path: ['business_name'], message: 'applies to business customers only' });
    } else {
      if (!c.business_name) need('business_name', 'business');
      if (c.date_of_birth) ctx.addIssue({ code: 'custom', path: ['date_of_birth'], message: 'applies to individual customers only' });
    }
  });
export type CustomerCreateInput = z.output<typeof CustomerCreate>;

export const CustomerPatch = z.strictObject({
  email: editable.email.optional(),
  phone: editable.phone.optional(),
  address: editable.address.optional(),
  first_name: editable.first_name.optional(),
  last_name: editable.last_name.optional(),
  business_name: editable.business_name.optional(),
  date_of_birth: editable.date_of_birth.optional(),
  tax_id: editable.tax_id.optional(),
});
export type CustomerPatchInput = z.output<typeof CustomerPatch>;

/** Fields that describe who the customer is: frozen once KYC has approved them. */
export const IDENTITY_FIELDS = ['first_name', 'last_name', 'business_name', 'date_of_birth', 'tax_id'] as const;

export const CustomerIdParams = z.strictObject({ customer_id: z.string() });

export const CustomerListQuery = z.strictObject({
  ...listParams,
  status: z.enum(['pending', 'active', 'suspended', 'deleted']).optional(),
  kyc_status: z.enum(KYC_STATUSES).optional(),
  type: z.enum(['individual', 'business']).optional(),
  email: z.string().trim().toLowerCase().optional(),
});

const timestamp = z.iso.datetime();

export const AddressSchema = z
  .object({
    line1: z.string(),
    line2: z.string().optional(),
    city: z.string(),
    state: z.string().optional(),
    postal_code: z.string().optional(),
    country: z.string().length(2),
  })
  .meta({ id: 'Address' });

export const CustomerSchema = z
  .object({
    id: objectId('cus'),
    object: z.literal('customer'),
    type: z.enum(['individual', 'business']),
    email: z.string(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    business_name: z.string().nullable(),
    phone: z.string().nullable(),
    date_of_birth: z.string().nullable(),
    tax_id_provided: z.boolean(),
    address: AddressSchema.nullable(),
    status: z.enum(['pending', 'active', 'suspended', 'deleted']),
    kyc_status: z.enum(KYC_STATUSES),
    risk_rating: z.enum(['low', 'medium', 'high']).nullable(),
    endorsements: z.array(z.enum(ENDORSEMENTS)),
    rejection_reasons: z.array(z.string()).optional().describe('Present when kyc_status is rejected'),
    incomplete_reasons: z.array(z.string()).optional().describe('Present when kyc_status is incomplete'),
    review_reasons: z.array(z.string()).optional().describe('Present when kyc_status is manual_review (e.g. sanctions_potential_match)'),
    kyc_link: z.string().optional().describe('Returned when the customer is created: the hosted KYC page'),
    kyc_link_expires_at: timestamp.optional(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Customer' });
export type Customer = z.infer<typeof CustomerSchema>;

export const CustomerListSchema = listSchema(CustomerSchema, 'Customer');
