import { sha256Hex, type DataCipher } from '../crypto';
import { sql, type Transaction } from 'kysely';
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

/** recordOutboundFile inside the caller's transaction (a window files its payments in the same one). */
export async function insertOutboundFile(
  trx: Transaction<Database>, cipher: DataCipher, file: OutboundFile & { windowId?: string }, now = new Date(),
): Promise<{ id: string; sha256: string }> {
  const sha256 = sha256Hex(file.text);
  const existing = await trx.selectFrom('bank_files').select(['id', 'sha256']).where('direction', '=', 'outbound').where('name', '=', file.name).executeTakeFirst();
  if (existing) {
    if (existing.sha256 !== sha256) throw new Error(`A different file named ${file.name} is recorded already`);
    return existing;
  }
  const filed = file.paymentIds.length === 0 ? [] : await trx.selectFrom('bank_file_payments')
    .select(['payment_id', 'file_id']).where(sql<boolean>`payment_id = any(${file.paymentIds}::text[])`).execute();
  if (filed.length > 0) throw new PaymentAlreadyFiledError(`Payment ${filed[0].payment_id} is in file ${filed[0].file_id} already: it goes out once`);
  const id = newId('bankFile', now.getTime());
  await trx.insertInto('bank_files').values({
    id, rail: file.rail, direction: 'outbound', name: file.name, file_id_modifier: file.fileIdModifier, sha256,
    contents_encrypted: cipher.encrypt(file.text), entry_count: file.totals.entryCount,
    total_debit_minor: file.totals.totalDebitMinor, total_credit_minor: file.totals.totalCreditMinor,
    status: 'recorded', created_at: now, uploaded_at: null, window_id: file.windowId ?? null,
  }).execute();
  await sql`insert into bank_file_payments (file_id, payment_id) select ${id}, unnest(${file.paymentIds}::text[])`.execute(trx);
  return { id, sha256 };
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
