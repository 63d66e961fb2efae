import { z } from 'zod';
import { EXTERNAL_ACCOUNT_STATUSES, ExternalAccountSchema } from '../../external-accounts/external-account';
import { listParams, listSchema } from '../../api/pagination';
import { abaRoutingError, bicCheck, burnAddressError, clabeError, cryptoAddressError, ibanCheck } from '../../domain/bank-validation';
import { CRYPTO_CHAINS } from '../../domain/rails';
import { countryCode } from '../../domain/validation';

const accountName = z.string().trim().min(1, 'must not be empty').max(140);
const base = { customer_id: z.string().min(1) };

const field = (ctx: z.RefinementCtx, key: string, message: string | null) => {
  if (message) ctx.addIssue({ code: 'custom', path: [key], message });
};

const UsBankAccount = z
  .strictObject({
    ...base,
    type: z.literal('us_bank_account'),
    account_name: accountName,
    account_type: z.enum(['checking', 'savings']).default('checking'),
    routing_number: z.string().trim(),
    account_number: z.string().trim().regex(/^\d{4,17}$/, 'must be 4 to 17 digits'),
    bank_name: z.string().trim().min(1).max(140).optional(),
  })
  .superRefine((v, ctx) => field(ctx, 'routing_number', abaRoutingError(v.routing_number)));

const InternationalBankAccount = z
  .strictObject({
    ...base,
    type: z.literal('international_bank_account'),
    account_name: accountName,
    iban: z.string().trim(),
    bic: z.string().trim(),
    bank_name: z.string().trim().min(1).max(140),
    bank_country: countryCode,
  })
  .superRefine((v, ctx) => {
    const iban = ibanCheck(v.iban);
    const bic = bicCheck(v.bic);
    if ('error' in iban) return field(ctx, 'iban', iban.error);
    if ('error' in bic) return field(ctx, 'bic', bic.error);
    if (iban.country !== v.bank_country) field(ctx, 'iban', `is an IBAN of ${iban.country}, but bank_country is ${v.bank_country}`);
    else if (bic.country !== v.bank_country) field(ctx, 'bic', `is a BIC of ${bic.country}, but bank_country is ${v.bank_country}`);
  });

const MxBankAccount = z
  .strictObject({
    ...base,
    type: z.literal('mx_bank_account'),
    account_name: accountName,
    clabe: z.string().trim(),
    bank_name: z.string().trim().min(1).max(140).optional(),
  })
  .superRefine((v, ctx) => field(ctx, 'clabe', clabeError(v.clabe)));

const CryptoAddress = z
  .strictObject({
    ...base,
    type: z.literal('crypto_address'),
    chain: z.enum(CRYPTO_CHAINS),
    address: z.string().trim().min(1),
    label: z.string().trim().max(140).optional(),
  })
  .superRefine((v, ctx) => field(ctx, 'address', cryptoAddressError(v.chain, v.address) ?? burnAddressError(v.chain, v.address)));

export const ExternalAccountCreate = z.discriminatedUnion('type', [UsBankAccount, InternationalBankAccount, MxBankAccount, CryptoAddress]);
export type ExternalAccountCreateInput = z.output<typeof ExternalAccountCreate>;

export const ExternalAccountListQuery = z.strictObject({
  ...listParams,
  customer_id: z.string().optional(),
  type: z.enum(['us_bank_account', 'international_bank_account', 'mx_bank_account', 'crypto_address']).optional(),
  status: z.enum(EXTERNAL_ACCOUNT_STATUSES).optional(),
  chain: z.enum(CRYPTO_CHAINS).optional(),
});

export const ExternalAccountListSchema = listSchema(ExternalAccountSchema, 'ExternalAccount');
