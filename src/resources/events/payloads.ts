import { z } from 'zod';
import { AccountSchema } from '../../accounts/account';
import { CustomerSchema } from '../../customers/customer';
import { EVENT_CATALOGUE, type EventType } from '../../domain/event-catalogue';
import { ExternalAccountSchema } from '../../external-accounts/external-account';
import { objectId } from '../../ids';
import { ReconciliationReportSchema } from '../../reconciliation/daily';
import { DrainSchema, VirtualAccountDepositSchema } from '../../payment-routes/drains';
import { LiquidationAddressSchema } from '../../payment-routes/liquidation-addresses';
import { VirtualAccountSchema } from '../../payment-routes/virtual-accounts';
import { TransferSchema } from '../../transfers/transfer';
import { WalletTransactionSchema } from '../../wallets/transactions';
import { WalletSchema } from '../../wallets/wallet';

const ScreeningCompletedData = z.object({
  screening_id: objectId('scr'),
  status: z.enum(['clear', 'potential_match']),
  customer_id: z.string().nullable(),
}).meta({ id: 'ScreeningCompletedData' });

const ScreeningBatchCompletedData = z.object({
  batch_id: objectId('sbat'), status: z.literal('completed'), total: z.number().int(), potential_matches: z.number().int(),
}).meta({ id: 'ScreeningBatchCompletedData' });

const withPrevious = (schema: z.ZodObject) => schema.extend({
  previous_attributes: z.record(z.string(), z.unknown()).optional().describe('On updates: the changed attributes, with their values before'),
});

// What an event's `data` holds, by the kind of object it is about: each a named schema of the document.
const EVENT_DATA = {
  CustomerEventData: withPrevious(CustomerSchema).meta({ id: 'CustomerEventData' }),
  Account: AccountSchema,
  ExternalAccountEventData: withPrevious(ExternalAccountSchema).meta({ id: 'ExternalAccountEventData' }),
  TransferEventData: withPrevious(TransferSchema).meta({ id: 'TransferEventData' }),
  WalletTransactionEventData: withPrevious(WalletTransactionSchema).meta({ id: 'WalletTransactionEventData' }),
  Wallet: WalletSchema,
  LiquidationAddressEventData: withPrevious(LiquidationAddressSchema).meta({ id: 'LiquidationAddressEventData' }),
  LiquidationAddressDrainEventData: withPrevious(DrainSchema).meta({ id: 'LiquidationAddressDrainEventData' }),
  VirtualAccountEventData: withPrevious(VirtualAccountSchema).meta({ id: 'VirtualAccountEventData' }),
  VirtualAccountDepositEventData: withPrevious(VirtualAccountDepositSchema).meta({ id: 'VirtualAccountDepositEventData' }),
  ScreeningCompletedData,
  ScreeningBatchCompletedData,
  WebhookTestData: z.object({ webhook_id: objectId('whk') }).meta({ id: 'WebhookTestData' }),
  ReconciliationReport: ReconciliationReportSchema,
} as const;

function dataKindOf(type: EventType): keyof typeof EVENT_DATA {
  if (type.startsWith('customer.')) return 'CustomerEventData';
  if (type.startsWith('account.')) return 'Account';
  if (type.startsWith('external_account.')) return 'ExternalAccountEventData';
  if (type.startsWith('transfer.')) return 'TransferEventData';
  if (type.startsWith('wallet.transaction.')) return 'WalletTransactionEventData';
  if (type.startsWith('wallet.')) return 'Wallet';
  if (type.startsWith('liquidation_address.drain.')) return 'LiquidationAddressDrainEventData';
  if (type.startsWith('liquidation_address.')) return 'LiquidationAddressEventData';
  if (type.startsWith('virtual_account.deposit.')) return 'VirtualAccountDepositEventData';
  if (type.startsWith('virtual_account.')) return 'VirtualAccountEventData';
  if (type === 'screening.completed') return 'ScreeningCompletedData';
  if (type === 'screening_batch.completed') return 'ScreeningBatchCompletedData';
  if (type === 'webhook.test') return 'WebhookTestData';
  if (type === 'reconciliation.break') return 'ReconciliationReport';
  throw new Error(`no payload schema for the event ${type}`);
}
const dataOf = (type: EventType): z.ZodType => EVENT_DATA[dataKindOf(type)];

/**
 * `Event` in the document, typed by its name: one variant per kind of data, naming its events. (The
 * payload schemas are components once the webhooks section is written, as it always is.)
 */
export function eventVariants(): Record<string, unknown>[] {
  const byKind = new Map<string, EventType[]>();
  for (const type of Object.keys(EVENT_CATALOGUE) as EventType[]) byKind.set(dataKindOf(type), [...byKind.get(dataKindOf(type)) ?? [], type]);
  return [...byKind].map(([kind, events]) => ({
    type: 'object',
    properties: { event: { type: 'string', enum: events }, data: { $ref: `#/components/schemas/${kind}` } },
    required: ['event', 'data'],
  }));
}

/**
 * The webhook payload of every event of the catalogue, for the OpenAPI document's `webhooks` section:
 * the envelope of docs/WEBHOOKS.md around the object the event carries.
 */
export const EVENT_PAYLOADS = Object.fromEntries((Object.keys(EVENT_CATALOGUE) as EventType[]).map((type) => [type, {
  summary: EVENT_CATALOGUE[type],
  payload: z.object({
    id: objectId('evt').describe('The event id: the deduplication key, also in X-Webhook-Id'),
    object: z.literal('event'),
    event: z.literal(type),
    api_version: z.literal('v0'),
    created_at: z.iso.datetime(),
    sent_at: z.iso.datetime().describe('When this attempt was sent: reject deliveries older than 5 minutes'),
    data: dataOf(type),
  }),
}])) as unknown as Record<EventType, { summary: string; payload: z.ZodType }>;
