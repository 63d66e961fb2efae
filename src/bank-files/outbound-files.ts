import { sha256Hex, type DataCipher } from '../crypto';
import { sql, type Compilable, type Transaction } from 'kysely';
import type { Db } from '../db';
import type { Database } from '../db/schema';
import { newId } from '../ids';
import type { AchTotals } from '../providers/bank-files/nacha';
import type { SftpChannel } from '../providers/bank-files/sftp-channel';

// Files the platform sends its bank (docs/BANK_FILES.md): recorded whole, with the payments in them,
// before the first upload; uploaded once, however often the upload is tried.

/** A payment is already in another file: it goes out once. */
export class PaymentAlreadyFiledError extends Error {}

export interface OutboundFile {
  rail: string;
  name: string;
  fileIdModifier: string;
  text: string;
  totals: AchTotals;
  /** The rail payments the file carries. */
  paymentIds: string[];
}

/**
 * Records a built file and the payments in it, in one transaction, encrypted (it holds account
 * numbers). Recording the same file again (a retry after the commit) returns the first record;
 * a payment already in another file refuses the whole file.
 */
export async function recordOutboundFile(db: Db, cipher: DataCipher, file: OutboundFile, now = new Date()): Promise<{ id: string; sha256: string }> {
  return db.transaction().execute((trx) => insertOutboundFile(trx, cipher, file, now));
}

/** recordOutboundFile inside the caller's transaction. */
export async function insertOutboundFile(
  trx: Transaction<Database>, cipher: DataCipher, file: OutboundFile & { windowId?: string }, now = new Date(),
): Promise<{ id: string; sha256: string }> {
  const sha256 = sha256Hex(file.text);
  const existing = await outboundFileNamed(trx, file.name);
  if (existing) {
    if (existing.sha256 !== sha256) throw new Error(`A different file named ${file.name} is recorded already`);
    return existing;
  }
  const id = newId('bankFile', now.getTime());
  await refusingFiledPayments(sql`
    with file as (${fileRow(cipher, { ...file, id, sha256, text: file.text, totals: file.totals }, now)}), members as (${members(id, file.paymentIds)})
    select 1`.execute(trx));
  return { id, sha256 };
}

/**
 * Records a window's file (src/bank-files/file-window.ts) while it is built, in the caller's
 * transaction: its row (the contents to come) with the payments in it and `alongside` (the
 * payments' own change, which names the file) are one statement, sent first and written by the
 * database while `build` takes this process; then the contents. A name recorded already, or a
 * payment in another file, refuses the whole file.
 */
export async function recordOutboundFileWhileBuilt(
  trx: Transaction<Database>, cipher: DataCipher, head: Omit<OutboundFile, 'text' | 'totals'> & { windowId: string },
  build: () => Promise<{ text: string; totals: AchTotals }>, alongside: (fileId: string) => Compilable, now = new Date(),
): Promise<{ id: string; sha256: string }> {
  if (await outboundFileNamed(trx, head.name)) throw new Error(`A file named ${head.name} is recorded already`);
  const id = newId('bankFile', now.getTime());
  const empty = { entryCount: head.paymentIds.length, entryHash: 0n, totalDebitMinor: 0n, totalCreditMinor: 0n };
  const recording = refusingFiledPayments(sql`
    with file as (${fileRow(cipher, { ...head, id, sha256: '', text: null, totals: empty }, now)}), members as (${members(id, head.paymentIds)}),
      filed as (${alongside(id)})
    select 1`.execute(trx));
  recording.catch(() => undefined); // awaited below, once the file is built
  // The statement is on its way before the build takes this thread.
  await new Promise((resolve) => setImmediate(resolve));
  let built: { text: string; totals: AchTotals };
  try {
    built = await build();
  } finally {
    await recording;
  }
  const sha256 = sha256Hex(built.text);
  await trx.updateTable('bank_files').set({
    sha256, contents_encrypted: cipher.encrypt(built.text), entry_count: built.totals.entryCount,
    total_debit_minor: built.totals.totalDebitMinor, total_credit_minor: built.totals.totalCreditMinor,
  }).where('id', '=', id).execute();
  return { id, sha256 };
}

/** The outbound file recorded under this name, if any: a name goes to the bank once. */
const outboundFileNamed = (trx: Transaction<Database>, name: string) =>
  trx.selectFrom('bank_files').select(['id', 'sha256']).where('direction', '=', 'outbound').where('name', '=', name).executeTakeFirst();

/** The insert of an outbound file's row (`text` null: its contents come later, in the same transaction). */
function fileRow(cipher: DataCipher, f: Omit<OutboundFile, 'text' | 'paymentIds'> & { id: string; sha256: string; text: string | null; windowId?: string }, now: Date) {
  return sql`insert into bank_files (id, rail, direction, name, file_id_modifier, sha256, contents_encrypted, entry_count, total_debit_minor, total_credit_minor, status, created_at, uploaded_at, window_id)
    values (${f.id}, ${f.rail}, 'outbound', ${f.name}, ${f.fileIdModifier}, ${f.sha256}, ${f.text === null ? '' : cipher.encrypt(f.text)}, ${f.totals.entryCount},
      ${f.totals.totalDebitMinor.toString()}::numeric, ${f.totals.totalCreditMinor.toString()}::numeric, 'recorded', ${now}, null, ${f.windowId ?? null})`;
}

/** The insert of the payments a file carries: one array parameter, however many (a window may hold 10,000). */
const members = (fileId: string, paymentIds: string[]) =>
  sql`insert into bank_file_payments (file_id, payment_id) select ${fileId}, unnest(${paymentIds}::text[])`;

/** A payment is in one file at most (the unique payment_id of bank_file_payments): another file with it is refused whole. */
async function refusingFiledPayments<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (err) {
    const e = err as { code?: string; constraint?: string; detail?: string };
    if (e.code === '23505' && e.constraint === 'bank_file_payments_payment_id_key') {
      throw new PaymentAlreadyFiledError(`A payment of this file is in another file already (${e.detail ?? 'payment_id'}): it goes out once`);
    }
    throw err;
  }
}

/**
 * Uploads a recorded file to the bank's inbox and marks it uploaded. Safe to repeat at any point:
 * the channel finds the same bytes in place and does nothing, and the mark is written once.
 */
export async function uploadRecordedFile(db: Db, cipher: DataCipher, channel: Pick<SftpChannel, 'upload'>, fileId: string, now = new Date()) {
  const row = await db.selectFrom('bank_files').select(['name', 'sha256', 'contents_encrypted', 'status']).where('id', '=', fileId).executeTakeFirstOrThrow();
  if (row.status !== 'recorded') return { uploaded: false };
  const bytes = cipher.decrypt(row.contents_encrypted);
  const sent = await channel.upload(row.name, bytes);
  if (sent.sha256 !== row.sha256) throw new Error(`${row.name}: the bytes sent are not the bytes recorded`);
  await db.updateTable('bank_files').set({ status: 'uploaded', uploaded_at: now }).where('id', '=', fileId).where('status', '=', 'recorded').execute();
  return { uploaded: sent.uploaded };
}
