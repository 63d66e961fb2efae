import { readAchFile, type AchRecord } from '../providers/bank-files/nacha';
import { readCamt054, readPain002 } from '../providers/bank-files/sepa-messages';
import { isStatementFile, readStatementFile } from '../providers/bank-files/statements';

// Reading the files the bank puts in its outbox (docs/BANK_FILES.md), whatever their format, into
// the items our books act on (src/bank-files/inbound-files.ts). Pure: no database.

/**
 * What one entry of a bank's file says. Our payment is named by its ACH trace number or, in SEPA,
 * by its end-to-end id (the entry reference). `id`: the entry's own, unique in its file.
 */
export type InboundItem =
  | { kind: 'return'; id: string; originalTrace?: string; endToEndId?: string; code: string }
  /** A SEPA status report's rejection (pain.002 RJCT): before settlement the payment is rejected, after it returned. */
  | { kind: 'rejection'; id: string; endToEndId: string; code: string }
  | { kind: 'notification_of_change'; id: string; originalTrace: string; code: string; correctedData: string }
  | { kind: 'credit'; id: string; rail: 'ach' | 'sepa'; currency: 'usd' | 'eur'; amountMinor: bigint; reference: string; senderName: string }
  /**
   * A status report's rejection of a whole message (group level) or of one payment block of it: every
   * payment it carries takes the rejected path, as each rejected alone would.
   */
  | { kind: 'message_rejection'; id: string; messageId: string; paymentInfoId?: string; code: string }
  /** The bank refused a whole file of ours (its rejection notice): nothing in it was paid. */
  | { kind: 'file_rejection'; id: string; file: string; reasons: string[] }
  /**
   * An end-of-day statement of one of our accounts (BAI2 or camt.053): kept with the file for the
   * reconciliation (docs/RECONCILIATION.md); it moves no payment by itself.
   */
  | { kind: 'statement'; id: string; account: string; entries: number; closingMinor: bigint | null; problems: string[] };

/**
 * The bank's notice that it refused a whole file (docs/BANK_FILES.md): `FILE REJECTED`, then
 * `FILE: <our file's name>` and one `REASON: …` line per problem.
 */
export function readRejectionNotice(text: string): Extract<InboundItem, { kind: 'file_rejection' }> {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const file = lines.find((l) => l.startsWith('FILE: '))?.slice(6).trim();
  if (lines[0] !== 'FILE REJECTED' || !file) throw new Error('Not a file rejection notice');
  return { kind: 'file_rejection', id: file, file, reasons: lines.filter((l) => l.startsWith('REASON: ')).map((l) => l.slice(8)) };
}

/** The entries of a bank's file, whatever its format: a rejection notice, a statement (BAI2, camt.053), XML (SEPA: pain.002 or camt.054), or NACHA. */
export function readInboundFile(text: string): { rail: 'ach' | 'sepa'; items: InboundItem[] } {
  if (text.startsWith('FILE REJECTED')) {
    const notice = readRejectionNotice(text);
    return { rail: notice.file.endsWith('.xml') ? 'sepa' : 'ach', items: [notice] };
  }
  if (isStatementFile(text)) {
    return {
      rail: text.trimStart().startsWith('<') ? 'sepa' : 'ach',
      items: readStatementFile(text).map(({ id, account, entries, closingMinor, problems }) => ({ kind: 'statement', id, account, entries, closingMinor, problems })),
    };
  }
  if (!text.trimStart().startsWith('<')) return { rail: 'ach', items: readInboundAchFile(text) };
  if (text.includes('CstmrPmtStsRpt')) return { rail: 'sepa', items: pain002Items(text) };
  return {
    rail: 'sepa',
    items: readCamt054(text).map((n): InboundItem => (n.kind === 'return'
      ? { kind: 'return', id: n.id, endToEndId: n.endToEndId, code: n.code }
      : { kind: 'credit', id: n.id, rail: 'sepa', currency: 'eur', amountMinor: n.amountMinor, reference: n.reference, senderName: n.senderName })),
  };
}

/**
 * A pain.002's rejections at each level: the group (the whole message), a payment block, a
 * transaction. Accepted and pending statuses change nothing; PART says to read the level below.
 */
function pain002Items(text: string): InboundItem[] {
  const report = readPain002(text);
  if (report.group.status === 'RJCT') {
    return [{ kind: 'message_rejection', id: report.messageId, messageId: report.messageId, code: report.group.reason ?? 'MS03' }];
  }
  return report.blocks.flatMap((block): InboundItem[] => {
    if (block.status === 'RJCT') {
      return [{ kind: 'message_rejection', id: `${report.messageId}:${block.paymentInfoId}`, messageId: report.messageId, paymentInfoId: block.paymentInfoId, code: block.reason ?? 'MS03' }];
    }
    return block.transactions.filter((tx) => tx.status === 'RJCT')
      .map((tx) => ({ kind: 'rejection', id: tx.endToEndId, endToEndId: tx.endToEndId, code: tx.reason ?? 'MS03' }));
  });
}

/** The entries of a NACHA file from the bank, by what they say. */
export function readInboundAchFile(text: string): InboundItem[] {
  const items: InboundItem[] = [];
  for (const batch of readAchFile(text).batches) {
    batch.entries.forEach((entry, i) => {
      const addenda = batch.addenda[i] ?? [];
      const returned = addenda.find((a) => a.addendaTypeCode === '99');
      const changed = addenda.find((a) => a.addendaTypeCode === '98');
      const id = entry.traceNumber;
      if (returned) items.push({ kind: 'return', id, originalTrace: returned.originalEntryTraceNumber, code: returned.returnReasonCode });
      else if (changed) {
        items.push({ kind: 'notification_of_change', id, originalTrace: changed.originalEntryTraceNumber, code: changed.changeCode, correctedData: changed.correctedData });
      } else if (['22', '32'].includes(entry.transactionCode)) {
        items.push({
          kind: 'credit', id, rail: 'ach', currency: 'usd', amountMinor: BigInt(entry.amount), reference: creditReference(entry, addenda), senderName: batch.header.companyName,
        });
      }
    });
  }
  return items;
}

/** The deposit reference of a credit: the first word of its payment information (addenda 05), else its individual id. */
function creditReference(entry: AchRecord, addenda: AchRecord[]): string {
  const info = addenda.find((a) => a.addendaTypeCode === '05')?.paymentRelatedInformation?.trim();
  return (info ? info.split(/\s+/)[0] : entry.idNumber).replace(/\\$/, '');
}
