import type { Bai2File } from '../providers/bank-files/bai2';
import type { Camt053Statement, StatementEntry } from '../providers/bank-files/camt053';
import type { StatementLine } from './matching';

// A bank statement as the matcher's lines (docs/RECONCILIATION.md): one line per thing the books
// expect on it. Our files settle as one line each (a NACHA batch, a pain.001 payment block), so a
// batch booking of ours stays one line; credits booked as a batch are split, one line per deposit.

/** BAI2's YYMMDD as YYYY-MM-DD (a statement from this century). */
const bai2Date = (yymmdd: string) => (/^\d{6}$/.test(yymmdd) ? `20${yymmdd.slice(0, 2)}-${yymmdd.slice(2, 4)}-${yymmdd.slice(4, 6)}` : '');

/** Every transaction (`16`) of an account of a BAI2 file, on its group's as-of date; ids name the file, group, account and place. */
export function bai2Lines(file: Bai2File, fileName: string, account: string): StatementLine[] {
  return file.groups.flatMap((group, g) => group.accounts.flatMap((a, i) => (a.number !== account ? [] : a.transactions.flatMap((t, j): StatementLine[] => {
    if (t.direction === 'other') return [];
    return [{
      id: `${fileName}:${g + 1}:${i + 1}:${j + 1}`, direction: t.direction, amountMinor: t.amountMinor, date: bai2Date(group.asOfDate),
      references: [t.bankReference, t.customerReference, t.text.split(/\s+/)[0] ?? ''].filter(Boolean), counterparty: '',
    }];
  }))));
}

/**
 * The booked entries of a camt.053 statement (reversals included: they move money too): a batch of
 * ours (a debit naming its message or payment block) as one line; an entry whose transactions each
 * have their own amount as one line each; any other entry as one line.
 */
export function camt053Lines(statement: Camt053Statement): StatementLine[] {
  return statement.entries.filter((e) => e.status === 'BOOK').flatMap((e, i): StatementLine[] => {
    const id = `${statement.id}:${i + 1}`;
    const date = e.valueDate || e.bookingDate;
    const split = e.transactions.length > 1 && e.transactions.every((t) => t.amountMinor !== null) && !(e.direction === 'debit' && e.batch);
    if (split) {
      return e.transactions.map((t, j) => ({
        id: `${id}:${j + 1}`, direction: e.direction, amountMinor: t.amountMinor!, date,
        references: [t.reference, t.endToEndId, t.remittance.split(/\s+/)[0] ?? ''].filter(Boolean), counterparty: t.counterparty,
      }));
    }
    return [{ id, direction: e.direction, amountMinor: e.amountMinor, date, references: entryReferences(e), counterparty: e.transactions.length === 1 ? e.transactions[0]!.counterparty : '' }];
  });
}

function entryReferences(e: StatementEntry): string[] {
  const refs = [e.reference, e.batch?.messageId, e.batch?.paymentInfoId, ...e.transactions.flatMap((t) => [t.reference, t.endToEndId])];
  return [...new Set(refs.filter((r): r is string => Boolean(r)))];
}
