import type { TransferState } from '../db/schema';

/**
 * Every event developers receive, by name, with what it reports: the one list the outbox writes
 * from, and that webhook delivery and the OpenAPI document read. `data` is the object's
 * representation after the change (plus `previous_attributes` on updates; docs/API.md, "Events").
 */
export const EVENT_CATALOGUE = {
  'customer.created': 'A customer was created.',
  'customer.updated': 'A customer\'s details changed (`previous_attributes` holds the old values).',
  'customer.deleted': 'A customer was deleted.',
  'customer.suspended': 'A compliance operator suspended the customer (`suspension` says why): nothing new starts, funded transfers are held in review.',
  'customer.reactivated': 'The suspension was lifted: the customer is back to its earlier status.',
  'customer.kyc_status_changed': 'KYC moved (`previous_attributes.kyc_status`).',
  'customer.kyc_approved': 'KYC approved the customer: endorsements granted.',
  'external_account.created': 'An external account was linked.',
  'external_account.verified': 'A US bank account passed its micro-deposit verification.',
  'external_account.verification_failed': 'A US bank account failed its micro-deposit verification.',
  'external_account.deleted': 'An external account was deleted.',
  'external_account.updated': 'The receiving bank corrected the account\'s details (an ACH notification of change; `previous_attributes` holds the old ones); the next payment uses them.',
  'screening.completed': 'A sanctions screening completed (`data.screening_id`, `data.status`, `data.customer_id`).',
  'screening_batch.completed': 'A screening batch completed (`data.batch_id`, `data.total`, `data.potential_matches`).',
  'transfer.created': 'A transfer was created, awaiting funds.',
  'transfer.updated': 'A transfer changed (`previous_attributes.state`, or `review_decision`).',
  'transfer.funds_received': 'The transfer\'s deposit arrived.',
  'transfer.in_review': 'The transfer is screened and checked against limits; it may be held.',
  'transfer.payment_submitted': 'The payout was sent.',
  'transfer.payment_processed': 'The payout settled (on a rail, its return window follows).',
  'transfer.canceled': 'The transfer was canceled (received funds are refunded).',
  'transfer.undeliverable': 'The payout could not be delivered.',
  'transfer.returned': 'The payout came back.',
  'transfer.refunded': 'The funds went back to the source.',
  'account.created': 'A platform account was created for a customer and currency.',
  'wallet.created': 'A wallet was created (its addresses on each of its chains; an MPC wallet has none until its key generation ends).',
  'wallet.updated': 'An MPC wallet\'s key generation ended: the wallet is active with its addresses, or failed.',
  'wallet.transaction.created': 'A token transfer into or out of a wallet was seen on chain (pending until deep enough, or confirmed at once).',
  'wallet.transaction.updated': 'A wallet transaction became confirmed, or was dropped by a reorganisation of the chain.',
  'liquidation_address.created': 'A liquidation address was created: a permanent address on a chain whose deposits each become a transfer to its destination.',
  'liquidation_address.updated': 'A liquidation address changed: its destination or fee, or it was deactivated or reactivated (`previous_attributes`).',
  'liquidation_address.drain.created': 'A deposit arrived at a liquidation address (pending until deep enough).',
  'liquidation_address.drain.updated': 'A drain moved on: its transfer was created, it was held for operators (`reason`), or its deposit was dropped by a reorganisation.',
  'virtual_account.created': 'A virtual account was created: permanent bank deposit details whose deposits each become a transfer to its destination.',
  'virtual_account.updated': 'A virtual account changed: its destination or fee, or it was deactivated or reactivated (`previous_attributes`).',
  'virtual_account.deposit.created': 'A payment arrived on a virtual account.',
  'virtual_account.deposit.updated': 'A virtual account deposit moved on: its transfer was created (or, on a deactivated account, its return), or it was held for operators (`reason`).',
  'reconciliation.break': 'To the platform\'s operators only: the daily reconciliation found a statement that never came, exceptions it opened, or a balance or chain treasury the books do not explain (`data.breaks`, the day\'s report).',
  'webhook.test': 'Sent to one endpoint by `POST /v0/webhooks/{id}/test` (`data.webhook_id`), to try a receiver.',
} as const satisfies Record<string, string> & Record<`transfer.${Exclude<TransferState, 'awaiting_funds'>}`, string>;

export type EventType = keyof typeof EVENT_CATALOGUE;

/** The event named after the state a transfer moved to. */
export const transferStateEvent = (state: Exclude<TransferState, 'awaiting_funds'>): EventType => `transfer.${state}`;
