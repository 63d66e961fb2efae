import { sql, type Transaction } from 'kysely';
import type { DataCipher } from '../crypto';
import type { Db } from '../db';
import type { Database, Environment } from '../db/schema';
import { realSettlementTime, type FiatRailProfile } from '../domain/rails';
import type { AchTotals } from '../providers/bank-files/nacha';
import { recordOutboundFileWhileBuilt } from './outbound-files';

// A file window (docs/BANK_FILES.md), whatever the format: the payments queued for it go into one
// file, recorded with them in one transaction before anything is uploaded.

export interface FiledWindow {
  fileId: string;
  name: string;
  entryCount: number;
}

/** A queued payment with what a file needs of its account and customer. */
export type QueuedPayment = Awaited<ReturnType<typeof queuedPayments>>[number];

/** How one format fills a window: which rails, which payments it can carry, and the file it builds. */
export interface WindowFormat {
  /** `bank_files.rail`, and the prefix of the files' names (`ACH-20261127-A.ach`). */
  fileRail: 'ach' | 'sepa';
  namePrefix: string;
  rails: readonly string[];
  /** The rail whose settlement times give the effective date. */
  settlement: FiatRailProfile;
  /**
   * Why a payment cannot go in a file, or null. Such a payment is set aside (`rejected`, its code
   * and reason kept) and the rest of the window goes out: one payment never blocks a window.
   */
  refusal(p: QueuedPayment): SetAside | null;
  /** The payments in the order the file carries them and, for ACH, the trace number each goes out with (taken in `trx`). */
  arrange?(trx: Transaction<Database>, payments: QueuedPayment[]): Promise<{ payments: QueuedPayment[]; traces: string[] }>;
  /** The name of the window's file (the day's `sequence`-th of its format), known before it is built. */
  name(ctx: WindowContext): { name: string; fileIdModifier: string | null };
  /** The file, given the window and the name's file id modifier. */
  build(payments: QueuedPayment[], ctx: WindowContext & { fileIdModifier: string | null; traces?: string[] }): Promise<{ text: string; totals: AchTotals }>;
}

/** A payment taken out of its window: the bank's code where one fits, and the field with what is wrong. */
export interface SetAside {
  code: string;
  reason: string;
}

type WindowContext = { now: Date; effectiveDate: string; sequence: number; day: string };

/** At most this many payments in one file; the rest wait for the next window. */
export const MAX_FILE_ENTRIES = 10_000;

/**
 * Files the window's queued payments: one file, recorded with its payments (now `filed`, with their
 * effective date and settlement time) in one transaction. The same window again (its workflow
 * retried after the commit) answers the file it recorded; an empty window records nothing.
 */
export async function fileWindow(
  db: Db, cipher: DataCipher, settings: { environment: Environment; settlementSeconds?: number },
  window: { id: string }, format: WindowFormat, now = new Date(),
): Promise<FiledWindow | null> {
  return db.transaction().execute(async (trx) => {
    const done = await trx.selectFrom('bank_files').select(['id', 'name', 'entry_count']).where('window_id', '=', window.id).executeTakeFirst();
    if (done) return { fileId: done.id, name: done.name, entryCount: done.entry_count };
    if (format.rails.length === 0) return null;
    // One window of a format at a time picks payments and the file's sequence.
    await sql`select pg_advisory_xact_lock(hashtext(${`bank-files:${format.fileRail}`}))`.execute(trx);
    const queued = await queuedPayments(trx, settings.environment, format.rails);
    const fileable: QueuedPayment[] = [];
    for (const p of queued) {
      const refused = format.refusal(p);
      if (!refused) fileable.push(p);
      else await trx.updateTable('bank_payments').set({ status: 'rejected', code: refused.code, reason: refused.reason.slice(0, 500) }).where('id', '=', p.id).execute();
    }
    if (fileable.length === 0) return null;
    const settlement = realSettlementTime(format.settlement, now);
    const effectiveDate = settlement.toISOString().slice(0, 10);
    const settlesAt = settings.settlementSeconds === undefined ? settlement : new Date(now.getTime() + settings.settlementSeconds * 1000);
    const day = now.toISOString().slice(0, 10).replaceAll('-', '');
    const ctx: WindowContext = { now, effectiveDate, day, sequence: await filesToday(trx, `${format.namePrefix}-${day}-`) };
    const { name, fileIdModifier } = format.name(ctx);
    const { payments, traces } = format.arrange ? await format.arrange(trx, fileable) : { payments: fileable, traces: undefined };
    const ids = payments.map((p) => p.id);
    // The file's row with its payments, and the payments filed, are written while the file is built.
    const file = await recordOutboundFileWhileBuilt(trx, cipher, {
      rail: format.fileRail, name, fileIdModifier: fileIdModifier ?? '', paymentIds: ids, windowId: window.id,
    }, () => format.build(payments, { ...ctx, fileIdModifier, traces }), (fileId) => markFiled(trx, { fileId, ids, traces, effectiveDate, settlesAt }), now);
    return { fileId: file.id, name, entryCount: ids.length };
  });
}

/** The window's payments filed (with their trace numbers, for ACH), as one statement: one array parameter each, not one per payment. */
function markFiled(trx: Transaction<Database>, q: { fileId: string; ids: string[]; traces?: string[]; effectiveDate: string; settlesAt: Date }) {
  const filed = { status: 'filed' as const, file_id: q.fileId, effective_date: q.effectiveDate, settles_at: q.settlesAt };
  if (!q.traces) return trx.updateTable('bank_payments').set(filed).where(sql<boolean>`id = any(${q.ids}::text[])`);
  return trx.updateTable('bank_payments').set({ ...filed, trace_number: sql<string>`t.trace` })
    .from(sql<{ id: string; trace: string }>`unnest(${q.ids}::text[], ${q.traces}::text[])`.as(sql`t(id, trace)`))
    .whereRef('bank_payments.id', '=', sql.ref('t.id'));
}

/** The window's queued payments, oldest first, with what the file needs of their accounts. */
function queuedPayments(trx: Transaction<Database>, environment: Environment, rails: readonly string[]) {
  return trx.selectFrom('bank_payments as p')
    .leftJoin('external_accounts as a', 'a.id', 'p.external_account_id')
    .leftJoin('customers as c', 'c.id', 'a.customer_id')
    .select([
      'p.id', 'p.entry_ref', 'p.direction', 'p.amount_minor', 'p.purpose', 'p.reference', 'a.type', 'a.routing_number', 'a.number_encrypted',
      'a.account_type', 'a.account_name', 'a.bic', 'c.type as customer_type', 'c.first_name', 'c.last_name', 'c.business_name',
    ])
    .where('p.status', '=', 'queued').where('p.environment', '=', environment).where('p.rail', 'in', rails)
    .orderBy('p.created_at').orderBy('p.id').limit(MAX_FILE_ENTRIES)
    .forUpdate('p').skipLocked()
    .execute();
}

/**
 * Opens sealed account numbers for one window, each once: the refusal check, the batch order and
 * the file all read them, and a 10,000-entry window would otherwise open each two or three times.
 */
export function openedOncePerWindow(cipher: DataCipher): (sealed: string) => string {
  const opened = new Map<string, string>();
  return (sealed) => {
    const plain = opened.get(sealed) ?? cipher.decryptText(sealed);
    opened.set(sealed, plain);
    return plain;
  };
}

/** The receiver's name as the file gives it: the account's, else the customer's. */
export function receiverName(p: Pick<QueuedPayment, 'account_name' | 'business_name' | 'first_name' | 'last_name'>): string {
  return p.account_name ?? p.business_name ?? ([p.first_name, p.last_name].filter(Boolean).join(' ') || 'ACCOUNT HOLDER');
}

/** How many outbound files of this name prefix (format and day) exist already. */
async function filesToday(trx: Transaction<Database>, prefix: string): Promise<number> {
  const { n } = await trx.selectFrom('bank_files').select((eb) => eb.fn.countAll<string>().as('n'))
    .where('direction', '=', 'outbound').where('name', 'like', `${prefix}%`).executeTakeFirstOrThrow();
  return Number(n);
}
