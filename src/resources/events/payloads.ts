import { z } from 'zod';
import { AccountSchema } from '../../accounts/account';
import { CustomerSchema } from '../../customers/customer';
import { EVENT_CATALOGUE, type EventType } from '../../domain/event-catalogue';
import { ExternalAccountSchema } from '../../external-accounts/external-account';
import { objectId } from '../../ids';
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

const dataOf = (type: EventType): z.ZodType => {
  if (type.startsWith('customer.')) return withPrevious(CustomerSchema);
  if (type.startsWith('account.')) return AccountSchema;
  if (type.startsWith('external_account.')) return withPrevious(ExternalAccountSchema);
  if (type.startsWith('transfer.')) return withPrevious(TransferSchema);
  if (type.startsWith('wallet.transaction.')) return withPrevious(WalletTransactionSchema);
  if (type.startsWith('wallet.')) return WalletSchema;
  if (type === 'screening.completed') return ScreeningCompletedData;
  if (type === 'screening_batch.completed') return ScreeningBatchCompletedData;
  return z.object({ webhook_id: objectId('whk') });
};

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
