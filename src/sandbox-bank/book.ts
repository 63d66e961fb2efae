import fs from 'node:fs';
import path from 'node:path';
import { achBatchReference, achBatchTotals, type ReadAchFile } from '../providers/bank-files/nacha';
import type { ReadCredit } from '../providers/bank-files/sepa-messages';
import { sepaMagicAnswers } from './magic';
import { bai2Statement, camt053Statement, closingOf, type BookedLine } from './statements';

// The sandbox bank's books of the platform's two accounts (docs/BANK_FILES.md, "In the sandbox"):
// what it booked for each file it took (`book/<file>.json`), and its end-of-day statements. A
// statement takes every booking not stated yet: they move into `statements/<n>/` first, then the
// statement files are written, then `statements/<n>/closing.json`, which closes it. A crash at any
// point leaves the statement to be finished by the next run, under the same names.

export type BankAccount = 'us' | 'sepa';

/** The accounts the statements are of, and who the bank and its customer are. */
export interface StatementSettings {
  root: string;
  /** The US account at the bank: its number, the bank's routing number, our company id and name. */
  us: { account: string; bankId: string; customerId: string; name: string };
  sepa: { iban: string; bic: string };
}

/** What taking a NACHA file books on the US account: each batch as one line per direction, each return the bank makes as a credit. */
export function achBookings(name: string, file: ReadAchFile, returnedTraces: string[]): BookedLine[] {
  const lines: BookedLine[] = [];
  file.batches.forEach((batch, i) => {
    const ref = achBatchReference(name, i);
    const text = `ACH SETTLEMENT ${batch.header.standardEntryClassCode} ${batch.header.companyEntryDescription} ${batch.entries.length} ENTRIES`;
    const { paidOutMinor, pulledInMinor } = achBatchTotals(batch);
    if (paidOutMinor > 0n) lines.push({ direction: 'debit', amountMinor: paidOutMinor, bankReference: `SB-${ref}-D`, customerReference: ref, bai2TypeCode: '469', bankTransactionCode: 'PMNT/ICDT/ESCT', text });
    if (pulledInMinor > 0n) lines.push({ direction: 'credit', amountMinor: pulledInMinor, bankReference: `SB-${ref}-C`, customerReference: ref, bai2TypeCode: '169', bankTransactionCode: 'PMNT/IDDT/ESDD', text });
  });
  const entries = new Map(file.batches.flatMap((b) => b.entries).map((e) => [e.traceNumber, e]));
  for (const trace of returnedTraces) lines.push(returnLine('ach', trace, BigInt(entries.get(trace)!.amount), 'R01'));
  return lines;
}

/** A payment of ours the receiving bank returned: the money back, as a credit naming the payment (an ACH trace, a SEPA end-to-end id). */
export function returnLine(rail: 'ach' | 'sepa', ref: string, amountMinor: bigint, code: string): BookedLine {
  return {
    direction: 'credit', amountMinor, bankReference: `SB-RET-${ref}`, customerReference: ref, bai2TypeCode: '261',
    bankTransactionCode: 'PMNT/ICDT/RRTN', text: rail === 'ach' ? `ACH RETURN ${code} ORIGINAL TRACE ${ref}` : `SEPA RETURN ${code} ${ref}`, returned: { code, endToEndId: ref },
  };
}

/** Money that arrived for the platform naming a deposit reference. */
export function depositLine(id: string, rail: 'ach' | 'sepa', amountMinor: bigint, reference: string, sender: string): BookedLine {
  return {
    direction: 'credit', amountMinor, bankReference: `SB-CRD-${id}`, customerReference: reference,
    bai2TypeCode: '142', bankTransactionCode: 'PMNT/RCDT/ESCT', text: `${rail === 'ach' ? 'ACH' : 'SEPA'} CREDIT ${reference} FROM ${sender}`,
  };
}

/**
 * What taking a pain.001 books on the SEPA account: the credit transfers the bank accepts (its magic
 * answers reject some, or the whole message or block) as one batch line, each magic return as a credit.
 */
export function sepaBookings(message: { messageId: string; credits: ReadCredit[] }): BookedLine[] {
  const magic = sepaMagicAnswers(message.credits);
  const accepted = magic.messageRejected || magic.blockRejected ? [] : message.credits.filter((c) => !magic.rejected.includes(c));
  const returned = magic.returned.filter((c) => accepted.includes(c));
  if (accepted.length === 0) return [];
  const paymentInfoId = `${message.messageId}.0`;
  const batch = { messageId: message.messageId, paymentInfoId, transactions: accepted.map((c) => ({ endToEndId: c.endToEndId, amountMinor: c.amountMinor })) };
  return [
    {
      direction: 'debit', amountMinor: accepted.reduce((s, c) => s + c.amountMinor, 0n), bankReference: `SB-${message.messageId}`, customerReference: paymentInfoId,
      bai2TypeCode: '469', bankTransactionCode: 'PMNT/ICDT/ESCT', text: `SEPA CREDIT TRANSFERS ${accepted.length}`, batch,
    },
    ...returned.map((c) => returnLine('sepa', c.endToEndId, c.amountMinor, 'AC04')),
  ];
}

const toJson = (value: unknown) => JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v));
const fromJson = <T>(text: string): T => JSON.parse(text, (_k, v) => (typeof v === 'string' && /^-?\d+n$/.test(v) ? BigInt(v.slice(0, -1)) : v));

/** Written whole or not at all. */
export function writeWhole(file: string, text: string) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(`${file}.part`, text);
  fs.renameSync(`${file}.part`, file);
}

/** The lines one taken file booked, kept until a statement states them (the same file again writes the same lines). */
export function keepBookings(root: string, fileName: string, account: BankAccount, lines: BookedLine[]) {
  if (lines.length > 0) writeWhole(path.join(root, 'book', `${fileName}.json`), toJson({ account, lines }));
}

/** The end-of-day statements: one of each account, of what was booked since the last. Their names. */
export function writeStatements(s: StatementSettings, at: Date): string[] {
  const dir = path.join(s.root, 'statements');
  fs.mkdirSync(dir, { recursive: true });
  const done = fs.readdirSync(dir).filter((d) => /^\d{6}$/.test(d)).sort();
  const last = done.at(-1);
  const closed = (d: string) => fs.existsSync(path.join(dir, d, 'closing.json'));
  const sequence = last === undefined ? 1 : Number(last) + (closed(last) ? 1 : 0);
  const current = path.join(dir, String(sequence).padStart(6, '0'));
  // A statement a crash cut short is finished as it began: same date, same names.
  if (!fs.existsSync(path.join(current, 'at.json'))) writeWhole(path.join(current, 'at.json'), JSON.stringify(at.toISOString()));
  const asOf = new Date(JSON.parse(fs.readFileSync(path.join(current, 'at.json'), 'utf8')));
  const book = path.join(s.root, 'book');
  for (const f of fs.existsSync(book) ? fs.readdirSync(book).filter((n) => n.endsWith('.json')) : []) fs.renameSync(path.join(book, f), path.join(current, f));
  const previous = sequence > 1 ? fromJson<Record<BankAccount, bigint>>(fs.readFileSync(path.join(dir, String(sequence - 1).padStart(6, '0'), 'closing.json'), 'utf8')) : { us: 0n, sepa: 0n };
  const lines: Record<BankAccount, BookedLine[]> = { us: [], sepa: [] };
  for (const f of fs.readdirSync(current).filter((n) => n.endsWith('.json') && !['closing.json', 'at.json'].includes(n)).sort()) {
    const kept = fromJson<{ account: BankAccount; lines: BookedLine[] }>(fs.readFileSync(path.join(current, f), 'utf8'));
    lines[kept.account].push(...kept.lines);
  }
  const day = asOf.toISOString().slice(0, 10).replaceAll('-', '');
  const us = { sequence, at: asOf, account: s.us.account, currency: 'usd', openingMinor: previous.us, lines: lines.us };
  const sepa = { sequence, at: asOf, account: s.sepa.iban, currency: 'eur', openingMinor: previous.sepa, lines: lines.sepa };
  const files = [
    { name: `BAI-${day}-${sequence}.txt`, text: bai2Statement({ ...us, bankId: s.us.bankId, customerId: s.us.customerId }) },
    { name: `STM-${day}-${sequence}.xml`, text: camt053Statement({ ...sepa, bic: s.sepa.bic }) },
  ];
  for (const f of files) writeWhole(path.join(s.root, 'outbox', f.name), f.text);
  writeWhole(path.join(current, 'closing.json'), toJson({ us: closingOf(us), sepa: closingOf(sepa) }));
  return files.map((f) => f.name);
}
