import { z } from 'zod';
import { listParams, listSchema } from '../../api/pagination';
import { e164Phone, pastDate } from '../../domain/validation';
import { KYC_STATUSES } from '../../domain/kyc';
import { AddressInput, CustomerSchema } from '../../customers/customer';
import { oneOfShapes, variant } from '../../domain/documented-variants';

const personName = z.string().trim().min(1, 'must not be empty').max(100);

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
  })
  .meta(oneOfShapes([
      variant({ type: { type: 'string', const: 'individual' }, first_name: { type: 'string' }, last_name: { type: 'string' } }, 'An individual: first and last name'),
      variant({ type: { type: 'string', const: 'business' }, business_name: { type: 'string' } }, 'A business: its name'),
  ]));
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

export const CustomerListSchema = listSchema(CustomerSchema, 'Customer');
