import { randomInt } from 'node:crypto';
import { composeIBAN } from 'ibantools';
import type { Transaction } from 'kysely';
import { z } from 'zod';
import type { Config } from '../config';
import type { PlatformDeps } from '../deps';
import { findCustomer } from '../customers/customer';
import type { Database, Environment, PaymentRouteRow } from '../db/schema';
import type { Tenant } from '../db/tenant-scope';
import { clabeControlDigit } from '../domain/bank-validation';
import { recordEvent } from '../domain/events';
import { FIAT_RAILS, RAILS, type FiatRail, type FiatRailProfile, type PaymentRail } from '../domain/rails';
import { invalidField } from '../errors';
import { newId, objectId, randomBase62 } from '../ids';
import { bankCollectionAccount } from '../providers/bank-files/settings';
import { currencyCode, TransferCreate } from '../transfers/service';
import { DeveloperFeePercent, percentString } from './fees';
import { limitColumns, RouteLimits, RouteLimitsSchema, serializeLimits } from './limits';
import { checkRouteOutside, checkRouteParties } from './route-checks';
import { changePaymentRoute } from './route-changes';

// Virtual accounts (docs/ROUTES.md): a customer's permanent bank deposit details; every payment to
// them becomes a transfer to the route's destination. The rail-event intake (src/transfers/
// rail-events.ts) matches a payment to its account by the reference the provider reports. In the
// sandbox, usd, eur and mxn accounts get numbers of their own (account and routing number, IBAN,
// CLABE); elsewhere, and always in live, the account is the platform's collection account with a
// static deposit reference of the customer's (a "static memo").

/** The rail a currency's deposits arrive on when the request names none. */
const DEFAULT_SOURCE_RAIL: Record<string, FiatRail> = { usd: 'ach', eur: 'sepa', mxn: 'spei', gbp: 'faster_payments', brl: 'pix' };

export const VirtualAccountCreate = z.strictObject({
  source: z.strictObject({
    currency: currencyCode,
    payment_rail: z.enum(FIAT_RAILS).optional().describe("The rail deposits arrive on; by default the currency's usual one (usd: ach, eur: sepa, mxn: spei)"),
  }),
  destination: TransferCreate.shape.destination,
  developer_fee_percent: DeveloperFeePercent.optional(),
  limits: RouteLimits.optional(),
});

export const VirtualAccountUpdate = z.strictObject({
  destination: TransferCreate.shape.destination.optional(),
  developer_fee_percent: DeveloperFeePercent.optional(),
  limits: RouteLimits.optional(),
});

export const VirtualAccountSchema = z.object({
  id: objectId('va'),
  object: z.literal('virtual_account'),
  customer_id: z.string(),
  status: z.enum(['active', 'deactivated']),
  source: z.object({ currency: z.string(), payment_rail: z.string() }),
  source_deposit_instructions: z.record(z.string(), z.string())
    .describe('Where the customer sends money: account details of their own, or the collection account with their deposit_reference'),
  destination: z.record(z.string(), z.string()).describe("Where each deposit goes: a transfer's destination leg"),
  developer_fee_percent: z.string().describe('Decimal percent of each deposit kept as developer_fee'),
  limits: RouteLimitsSchema.describe('Deposits above a limit are held in review'),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
}).meta({ id: 'VirtualAccount' });

/** The account details a deposit is sent to. */
export function virtualAccountInstructions(
  config: Config, row: Pick<PaymentRouteRow, 'environment' | 'source_rail' | 'display_address' | 'deposit_reference'>,
): Record<string, string> {
  const rail = row.source_rail as FiatRail;
  const collection = bankCollectionAccount(config, row.environment, rail) ?? (RAILS[rail] as FiatRailProfile).collectionAccount;
  if (!row.display_address) return { ...collection, deposit_reference: row.deposit_reference! };
  const { bank_name, bank_beneficiary_name } = collection;
  if (rail === 'sepa') return { bank_name, iban: row.display_address, bic: collection.bic!, bank_beneficiary_name };
  if (rail === 'spei') return { bank_name, clabe: row.display_address, bank_beneficiary_name };
  return { bank_name, bank_routing_number: collection.bank_routing_number!, bank_account_number: row.display_address, bank_beneficiary_name };
}

export function serializeVirtualAccount(config: Config, row: PaymentRouteRow) {
  return {
    id: row.id, object: 'virtual_account' as const, customer_id: row.customer_id, status: row.status,
    source: { currency: row.source_currency, payment_rail: row.source_rail },
    source_deposit_instructions: virtualAccountInstructions(config, row),
    destination: { ...row.destination } as Record<string, string>, developer_fee_percent: percentString(row.developer_fee_percent), limits: serializeLimits(row),
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
  };
}


/**
 * Numbers of the account's own in the sandbox, for the rails that have them there (random, so that
 * no one can guess another customer's); null for a static deposit reference on the collection account.
 */
function ownAccountNumber(environment: Environment, rail: FiatRail): string | null {
  if (environment !== 'sandbox') return null;
  const digits = (n: number) => Array.from({ length: n }, () => randomInt(10)).join('');
  if (rail === 'sepa') return composeIBAN({ countryCode: 'DE', bban: `37040044${digits(10)}` })!;
  if (rail === 'spei') {
    const first17 = `002010${digits(11)}`;
    return `${first17}${clabeControlDigit(first17)}`;
  }
  if (rail === 'ach' || rail === 'ach_push' || rail === 'ach_same_day' || rail === 'wire') return `8${digits(11)}`;
  return null;
}

function sourceRailOf(body: z.output<typeof VirtualAccountCreate>): FiatRail {
  const rail = body.source.payment_rail ?? DEFAULT_SOURCE_RAIL[body.source.currency];
  if (!rail) {
    throw invalidField('body', 'source.currency', `no rail carries ${body.source.currency} into a virtual account (${Object.keys(DEFAULT_SOURCE_RAIL).join(', ')})`);
  }
  if (!(RAILS[rail] as FiatRailProfile).currencies.includes(body.source.currency)) {
    throw invalidField('body', 'source.currency', `${rail} does not carry ${body.source.currency}`);
  }
  return rail;
}

const draftOf = (customerId: string, body: z.output<typeof VirtualAccountCreate>) => ({
  customer_id: customerId, source_rail: sourceRailOf(body), source_currency: body.source.currency,
  developer_fee_percent: body.developer_fee_percent ?? '0', destination: body.destination,
});

/** What is checked before the database transaction opens. */
export async function prepareVirtualAccount(deps: PlatformDeps, tenant: Tenant, customerId: string, body: z.output<typeof VirtualAccountCreate>) {
  await findCustomer(deps.db, tenant, customerId);
  await checkRouteOutside(deps, tenant, draftOf(customerId, body));
}

/** A new virtual account with its deposit details; announced as `virtual_account.created`. */
export async function createVirtualAccount(
  trx: Transaction<Database>, deps: PlatformDeps, tenant: Tenant, customerId: string, body: z.output<typeof VirtualAccountCreate>,
) {
  const draft = draftOf(customerId, body);
  await checkRouteParties(deps, trx, tenant, draft);
  const number = ownAccountNumber(tenant.environment, draft.source_rail);
  const now = new Date();
  const row = await trx.insertInto('payment_routes').values({
    id: newId('virtualAccount', now.getTime()), developer_id: tenant.developerId, environment: tenant.environment, customer_id: customerId,
    kind: 'virtual_account', status: 'active', source_rail: draft.source_rail, source_currency: draft.source_currency,
    address: null, display_address: number, deposit_index: null, deposit_reference: number ?? `VA${randomBase62(14).toUpperCase()}`,
    destination: JSON.stringify(body.destination), developer_fee_percent: draft.developer_fee_percent, return_address: null,
    ...limitColumns(draft.source_currency, draft.source_rail as PaymentRail, body.limits), created_at: now, updated_at: now,
  }).returningAll().executeTakeFirstOrThrow();
  await recordEvent(trx, tenant, { type: 'virtual_account.created', objectId: row.id, data: serializeVirtualAccount(deps.config, row) }, now);
  return row;
}

/** A new destination, fee or limits (checked as at creation), or a new status; announced as `virtual_account.updated`. */
export function updateVirtualAccount(
  deps: PlatformDeps, trx: Transaction<Database>, tenant: Tenant, customerId: string, id: string,
  change: z.output<typeof VirtualAccountUpdate> & { status?: PaymentRouteRow['status'] },
) {
  return changePaymentRoute(deps, trx, tenant, { kind: 'virtual_account', customerId, id }, change, (row) => serializeVirtualAccount(deps.config, row));
}
