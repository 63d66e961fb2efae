import type { Transaction } from 'kysely';
import pLimit from 'p-limit';
import { sha256Hex, type DataCipher } from '../crypto';
import type { Db } from '../db';
import type { Database } from '../db/schema';
import { newId } from '../ids';
import { formatAmount } from '../domain/money';
import { changedAttributes, recordEvent } from '../domain/events';
import { accountIdentity, serializeExternalAccount } from '../external-accounts/external-account';
import type { RailEvent } from '../providers/rails';
import { STATEMENT_FILE_DETAIL } from '../providers/bank-files/statements';
import type { InboundItem } from './inbound-items';
import { sepaFileOfMessage } from './sepa-window';

// Files the bank puts in its outbox (docs/BANK_FILES.md): NACHA returns (addenda 99), notifications
// of change (addenda 98) and credits; SEPA status reports (pain.002) and notifications (camt.054).
// A file is recorded, by name and hash, in the same transaction as what it changes in our books;
// the events it carries for the transfer workflows are handled after, as often as needed (each
// rail event once, by its id).

/**
 * Our payment an item names: by the trace number it was filed with (the newest such payment: a
 * trace repeats only after 9,999,999 entries), or its end-to-end id. Payments filed before traces
 * were kept carry the last 7 digits of their entry reference as their trace.
 */
function paymentOf(db: Db | Transaction<Database>, item: { originalTrace?: string; endToEndId?: string }) {
  const q = db.selectFrom('bank_payments').select(['id', 'status', 'external_account_id', 'settles_at', 'code']);
  const trace = item.originalTrace ?? '';
  const named = item.endToEndId ? q.where('entry_ref', '=', item.endToEndId) : q.where((eb) => eb.or([
    eb('trace_number', '=', trace),
    eb.and([eb('trace_number', 'is', null), eb('entry_ref', 'like', `%${trace.slice(8)}`)]),
  ]));
  return named.where('status', 'in', ['filed', 'returned', 'rejected']).orderBy('created_at', 'desc').executeTakeFirst();
}

/**
 * The rail events of a file's items, with ids derived from the file and the entry (a file read twice
 * gives the same ids): credits, and returns of our payments (a SEPA rejection that came after
 * settlement is one).
 */
export async function railEventsOf(db: Db, fileName: string, items: InboundItem[]): Promise<RailEvent[]> {
  const events: RailEvent[] = [];
  for (const item of items) {
    const id = `bankfile:${fileName}:${item.id}`;
    if (item.kind === 'credit') {
      events.push({
        id, type: 'payment.received', providerPaymentId: `${item.rail}:${fileName}:${item.id}`,
        rail: item.rail, currency: item.currency, amountMinor: item.amountMinor, reference: item.reference, senderName: item.senderName,
      });
    } else if (item.kind === 'return' || item.kind === 'rejection') {
      const payment = await paymentOf(db, item);
      if (item.kind === 'rejection' && payment?.status !== 'returned') continue;
      events.push({ id, type: 'payment.returned', providerPaymentId: payment?.id ?? `unknown:${item.kind === 'return' ? (item.originalTrace ?? item.endToEndId) : item.endToEndId}`, code: item.code });
    } else if (item.kind === 'message_rejection') {
      // Rejected after its settlement time, a payment of the message had counted as paid: a return.
      for (const p of await messagePayments(db, item.messageId, ['returned'])) {
        if (p.code === item.code) events.push({ id: `${id}:${p.id}`, type: 'payment.returned', providerPaymentId: p.id, code: item.code });
      }
    }
  }
  return events;
}

/** Changes a notification may carry: C01 account number, C02 routing number, C03 both, C05 account type. */
const APPLIED_CHANGES = new Set(['C01', 'C02', 'C03', 'C05']);

/** How many payments' events of one file are handled at a time. */
export const INBOUND_EVENT_CONCURRENCY = 8;

/**
 * A file's events, handled several payments at a time (a file of credits is a deposit per
 * transfer, each a round trip to its workflow); the events of one payment (a credit's deposit
 * reference, a return's payment) one after another, in the file's order. Ends when every one has
 * ended; the first failure is then thrown (each event is handled once, so a retry does the rest).
 */
export async function handleInboundEvents(events: RailEvent[], handle: (event: RailEvent) => Promise<unknown>, concurrency = INBOUND_EVENT_CONCURRENCY) {
  const byPayment = new Map<string, RailEvent[]>();
  for (const event of events) {
    const key = event.type === 'payment.received' ? `reference:${event.reference}` : `payment:${event.providerPaymentId}`;
    byPayment.set(key, [...(byPayment.get(key) ?? []), event]);
  }
  const limit = pLimit(concurrency);
  const outcomes = await Promise.allSettled([...byPayment.values()].map((ofOnePayment) => limit(async () => {
    for (const event of ofOnePayment) await handle(event);
  })));
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * Records an inbound file and, in the same transaction, what it changes: returned or rejected
 * payments are marked (their code kept), and notifications of change correct the external account
 * (with its `external_account.updated` event). A file recorded before is not applied again
 * (`fresh: false`); one with the same name and other bytes is refused.
 */
export async function recordInboundFile(
  db: Db, cipher: DataCipher, file: { name: string; text: string; rail: 'ach' | 'sepa'; items: InboundItem[] }, now = new Date(),
) {
  const sha256 = sha256Hex(file.text);
  return db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('bank_files').select(['id', 'sha256', 'status']).where('direction', '=', 'inbound').where('name', '=', file.name).executeTakeFirst();
    if (existing) {
      if (existing.sha256 !== sha256) throw new Error(`The bank sent another file named ${file.name}, with other bytes: for an operator`);
      return { id: existing.id, fresh: false, handled: existing.status === 'processed' };
    }
    const id = newId('bankFile', now.getTime());
    const credits = file.items.flatMap((i) => (i.kind === 'credit' ? [i.amountMinor] : []));
    await trx.insertInto('bank_files').values({
      id, rail: file.rail, direction: 'inbound', name: file.name, file_id_modifier: null, sha256, contents_encrypted: cipher.encrypt(file.text),
      entry_count: file.items.length, total_debit_minor: 0n, total_credit_minor: credits.reduce((sum, c) => sum + c, 0n),
      status: 'recorded', created_at: now, uploaded_at: null, detail: summary(file.items),
    }).execute();
    for (const item of file.items) {
      if (item.kind === 'return' || item.kind === 'rejection') await markPaymentAnswered(trx, item, now);
      else if (item.kind === 'notification_of_change') await applyNotificationOfChange(trx, cipher, item, now);
      else if (item.kind === 'file_rejection') await markFileRejected(trx, item, now);
      else if (item.kind === 'message_rejection') await markMessageRejected(trx, item, now);
    }
    return { id, fresh: true, handled: false };
  });
}

/**
 * A return, or a rejection, of a filed payment. A rejection before the payment's settlement time is
 * what its workflow finds when it asks (`rejected`); after it, the money had counted as delivered,
 * so it is a return like any other.
 */
async function markPaymentAnswered(trx: Transaction<Database>, item: Extract<InboundItem, { kind: 'return' | 'rejection' }>, now: Date) {
  const payment = await paymentOf(trx, item);
  if (payment?.status !== 'filed') return;
  const beforeSettlement = item.kind === 'rejection' && (payment.settles_at?.getTime() ?? 0) > now.getTime();
  await trx.updateTable('bank_payments').set(beforeSettlement
    ? { status: 'rejected', code: item.code }
    : { status: 'returned', code: item.code, returned_at: now }).where('id', '=', payment.id).execute();
}

/** The payments of our SEPA message `messageId` (its file's), in the given states. */
async function messagePayments(db: Db | Transaction<Database>, messageId: string, statuses: ('filed' | 'returned' | 'rejected')[]) {
  const name = sepaFileOfMessage(messageId);
  if (!name) return [];
  return db.selectFrom('bank_payments as p').innerJoin('bank_files as f', 'f.id', 'p.file_id').select(['p.id', 'p.status', 'p.settles_at', 'p.code'])
    .where('f.direction', '=', 'outbound').where('f.name', '=', name).where('p.status', 'in', statuses).execute();
}

/**
 * A status report rejected a whole message of ours, or its payment block (each file is one message
 * of one block): each of its filed payments is answered as if rejected alone.
 */
async function markMessageRejected(trx: Transaction<Database>, item: Extract<InboundItem, { kind: 'message_rejection' }>, now: Date) {
  for (const p of await messagePayments(trx, item.messageId, ['filed'])) {
    const beforeSettlement = (p.settles_at?.getTime() ?? 0) > now.getTime();
    await trx.updateTable('bank_payments').set(beforeSettlement
      ? { status: 'rejected', code: item.code, reason: `the bank rejected ${item.paymentInfoId ? `payment block ${item.paymentInfoId} of ` : ''}message ${item.messageId}` }
      : { status: 'returned', code: item.code, returned_at: now }).where('id', '=', p.id).execute();
  }
}

/**
 * The bank refused a file of ours. Before its payments' settlement time, the file is `rejected`
 * and its payments stay pending (never refiled on their own: a payment goes out in one file) until
 * an operator resends it once the problem is solved. After it, the payments counted as paid: the
 * refusal was of a copy sent again (a duplicate), and only the notice is kept.
 */
async function markFileRejected(trx: Transaction<Database>, item: Extract<InboundItem, { kind: 'file_rejection' }>, now: Date) {
  const file = await trx.selectFrom('bank_files').select(['id']).where('direction', '=', 'outbound').where('name', '=', item.file).executeTakeFirst();
  if (!file) return;
  const unsettled = await trx.selectFrom('bank_payments').select('id').where('file_id', '=', file.id).where('settles_at', '>', now).limit(1).executeTakeFirst();
  if (!unsettled) return;
  await trx.updateTable('bank_files').set({ status: 'rejected', detail: `rejected by the bank: ${item.reasons.join('; ')}`.slice(0, 1000) }).where('id', '=', file.id).execute();
}

/** A file that is not one we can read: kept (`rejected`, with why) for an operator, and not read again. */
export async function recordUnreadableInboundFile(db: Db, cipher: DataCipher, file: { name: string; text: string; reason: string }, now = new Date()) {
  await db.insertInto('bank_files').values({
    id: newId('bankFile', now.getTime()), rail: 'unknown', direction: 'inbound', name: file.name, file_id_modifier: null, sha256: sha256Hex(file.text),
    contents_encrypted: cipher.encrypt(file.text), entry_count: 0, total_debit_minor: 0n, total_credit_minor: 0n,
    status: 'rejected', created_at: now, uploaded_at: null, detail: file.reason.slice(0, 500),
  }).onConflict((oc) => oc.columns(['direction', 'name']).doNothing()).execute();
}

/** Once every event of the file is handled: the file is done. */
export async function markInboundFileHandled(db: Db, fileId: string) {
  await db.updateTable('bank_files').set({ status: 'processed' }).where('id', '=', fileId).execute();
}

function summary(items: InboundItem[]): string {
  const count = (kind: InboundItem['kind']) => items.filter((i) => i.kind === kind).length;
  const refused = items.flatMap((i) => (i.kind === 'file_rejection' ? [i.file] : []));
  if (refused.length > 0) return `the bank rejected ${refused.join(', ')}`;
  const statements = items.flatMap((i) => (i.kind === 'statement' ? [i] : []));
  if (statements.length > 0) {
    return statements.map((st) => `${STATEMENT_FILE_DETAIL}${st.account}: ${st.entries} entries, closing ${st.closingMinor === null ? 'not given' : formatAmount(st.closingMinor, 2)}`
      + `${st.problems.length > 0 ? ` (${st.problems.join('; ')})` : ''}`).join('; ');
  }
  const messages = count('message_rejection');
  return `${count('return')} returns, ${count('rejection')} rejections, ${messages > 0 ? `${messages} messages or payment blocks rejected, ` : ''}`
    + `${count('notification_of_change')} notifications of change, ${count('credit')} credits`;
}

/**
 * The receiving bank's correction of an account (C01 number, C02 routing, C03 both, C05 account
 * type): written to the external account the entry paid, so that its next payment uses it.
 */
async function applyNotificationOfChange(
  trx: Transaction<Database>, cipher: DataCipher, item: Extract<InboundItem, { kind: 'notification_of_change' }>, now: Date,
) {
  if (!APPLIED_CHANGES.has(item.code)) return;
  const payment = await paymentOf(trx, item);
  if (!payment?.external_account_id) return;
  const row = await trx.selectFrom('external_accounts').selectAll().where('id', '=', payment.external_account_id).forUpdate().executeTakeFirstOrThrow();
  const data = item.correctedData.trim();
  let routing = row.routing_number;
  let number = row.number_encrypted ? cipher.decryptText(row.number_encrypted) : null;
  let accountType = row.account_type;
  if (item.code === 'C01') number = data;
  if (item.code === 'C02') routing = data.slice(0, 9);
  if (item.code === 'C03') [routing, number] = [data.slice(0, 9), data.slice(9).trim()];
  if (item.code === 'C05') accountType = data.startsWith('3') ? 'savings' : 'checking';
  const updated = await trx.updateTable('external_accounts').set({
    routing_number: routing, account_type: accountType, number_encrypted: number ? cipher.encrypt(number) : null, last4: number ? number.slice(-4) : row.last4,
    fingerprint: cipher.fingerprint(accountIdentity({ type: row.type, routing_number: routing, secret: number })), updated_at: now,
  }).where('id', '=', row.id).returningAll().executeTakeFirstOrThrow();
  await recordEvent(trx, { developerId: row.developer_id, environment: row.environment }, {
    type: 'external_account.updated', objectId: row.id, data: serializeExternalAccount(updated),
    previousAttributes: changedAttributes(serializeExternalAccount(row), serializeExternalAccount(updated)),
  }, now);
}
