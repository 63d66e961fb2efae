import batchControlFields from 'nach2/lib/batch/control';
import batchHeaderFields from 'nach2/lib/batch/header';
import entryFields from 'nach2/lib/entry/fields';
import fileControlFields from 'nach2/lib/file/control';
import fileHeaderFields from 'nach2/lib/file/header';
import { NOC_ADDENDA_FIELDS, RETURN_ADDENDA_FIELDS, writeRecord, type AchRecord } from '../providers/bank-files/nacha-addenda';

// The NACHA files a receiving bank sends back to the originator, as the sandbox bank writes them:
// returns (each entry with its type-99 addenda and R-code) and notifications of change (batch
// `COR`, amount zero, type-98 addenda with the corrected data). Each record is written from the
// NACHA library's own field tables, and the tests read these files with moov-io/ach.

/** An entry of the originator's file the bank answers, in the batch it came in. */
export interface AnsweredEntry {
  batchHeader: AchRecord;
  entry: AchRecord;
  code: string;
  /** Notifications of change: the corrected value (C01: the account number). */
  correctedData?: string;
}

/** Credit codes 22/32 come back as 21/31, debits 27/37 as 26/36 (returns and notifications alike). */
const ANSWER_CODES: Record<string, string> = { 22: '21', 32: '31', 27: '26', 37: '36', 23: '21', 33: '31', 28: '26', 38: '36' };
const CREDIT_ANSWER_CODES = new Set(['21', '31']);
const NINES = '9'.repeat(94);

/**
 * One answer file to `original` (the originator's file header, as read): one batch per original
 * batch, each answered entry with its new trace (the bank's routing and a counter) and its addenda.
 */
export function buildAchAnswerFile(kind: 'return' | 'notification_of_change', original: AchRecord, answers: AnsweredEntry[], createdAt: Date): string {
  if (answers.length === 0) throw new Error('An answer file needs at least one entry');
  const iso = createdAt.toISOString();
  const records = [writeRecord(fileHeaderFields, {
    ...original,
    // The receiving bank sends it to the originator's bank.
    immediateDestination: original.immediateOrigin, immediateOrigin: original.immediateDestination,
    immediateDestinationName: original.immediateOriginName, immediateOriginName: original.immediateDestinationName,
    fileCreationDate: `${iso.slice(2, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}`, fileCreationTime: `${iso.slice(11, 13)}${iso.slice(14, 16)}`,
    fileIdModifier: 'A', referenceCode: kind === 'return' ? 'RETURNS' : 'COR',
  })];
  const file = { batches: 0, entries: 0, hash: 0n, debit: 0n, credit: 0n };
  let trace = 0;
  for (const batch of batchesOf(answers)) {
    // The receiving bank originates the answers: its own 8 digits head the batch and its traces.
    const header: AchRecord = {
      ...batch[0].batchHeader, batchNumber: String(++file.batches), originatingDFI: batch[0].entry.receivingDFI,
      ...(kind === 'notification_of_change' ? { standardEntryClassCode: 'COR' } : {}),
    };
    const lines = [writeRecord(batchHeaderFields, header)];
    const sums = { count: 0, hash: 0n, debit: 0n, credit: 0n };
    for (const answer of batch) {
      const code = ANSWER_CODES[answer.entry.transactionCode];
      if (!code) throw new Error(`Entry ${answer.entry.traceNumber}: transaction code ${answer.entry.transactionCode} cannot be answered`);
      const amount = kind === 'return' ? BigInt(answer.entry.amount) : 0n;
      const newTrace = `${answer.entry.receivingDFI}${String(++trace).padStart(7, '0')}`;
      lines.push(writeRecord(entryFields, { ...answer.entry, transactionCode: code, amount: amount.toString(), addendaId: '1', traceNumber: newTrace }));
      const addenda = { originalEntryTraceNumber: answer.entry.traceNumber, originalReceivingDFI: answer.entry.receivingDFI, traceNumber: newTrace };
      lines.push(kind === 'return'
        ? writeRecord(RETURN_ADDENDA_FIELDS, { ...addenda, returnReasonCode: answer.code })
        : writeRecord(NOC_ADDENDA_FIELDS, { ...addenda, changeCode: answer.code, correctedData: answer.correctedData ?? '' }));
      sums.count += 2;
      sums.hash += BigInt(answer.entry.receivingDFI);
      if (CREDIT_ANSWER_CODES.has(code)) sums.credit += amount;
      else sums.debit += amount;
    }
    lines.push(writeRecord(batchControlFields, {
      serviceClassCode: header.serviceClassCode, addendaCount: String(sums.count), entryHash: String(sums.hash % 10_000_000_000n),
      totalDebit: String(sums.debit), totalCredit: String(sums.credit), companyIdentification: header.companyIdentification,
      originatingDFI: header.originatingDFI, batchNumber: header.batchNumber,
    }));
    records.push(...lines);
    file.entries += sums.count;
    file.hash += sums.hash;
    file.debit += sums.debit;
    file.credit += sums.credit;
  }
  const blocks = Math.ceil((records.length + 1) / 10);
  records.push(writeRecord(fileControlFields, {
    batchCount: String(file.batches), blockCount: String(blocks), addendaCount: String(file.entries),
    entryHash: String(file.hash % 10_000_000_000n), totalDebit: String(file.debit), totalCredit: String(file.credit),
  }));
  while (records.length % 10 !== 0) records.push(NINES);
  return `${records.join('\r\n')}\r\n`;
}

/** The answers grouped by the batch their entries came in and their receiving bank, in the order they came. */
function batchesOf(answers: AnsweredEntry[]): AnsweredEntry[][] {
  const groups = new Map<string, AnsweredEntry[]>();
  for (const a of answers) {
    const key = JSON.stringify([a.batchHeader, a.entry.receivingDFI]);
    groups.set(key, [...(groups.get(key) ?? []), a]);
  }
  return [...groups.values()];
}
