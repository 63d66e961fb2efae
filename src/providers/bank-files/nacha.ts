import nach from 'nach2';
import batchControlFields from 'nach2/lib/batch/control';
import batchHeaderFields from 'nach2/lib/batch/header';
import entryFields from 'nach2/lib/entry/fields';
import fileControlFields from 'nach2/lib/file/control';
import fileHeaderFields from 'nach2/lib/file/header';
import entryAddendaFields from 'nach2/lib/entry-addenda/fields';
import { NOC_ADDENDA_FIELDS, RETURN_ADDENDA_FIELDS, type AchRecord } from './nacha-addenda';

export type { AchRecord };
import { formatAmount } from '../../domain/money';

// NACHA files as the ODFI takes them (docs/BANK_FILES.md): written by nach2, read back with nach2's
// own record tables, and checked in bigint before anybody records or uploads them.

/** Who sends the file: the platform's company at its bank (the ODFI). */
export interface AchOriginator {
  /** The ODFI's routing number (9 digits): the file's destination and the trace numbers' prefix. */
  odfiRouting: string;
  odfiName: string;
  /** The company id the bank assigned (10 characters). */
  companyId: string;
  companyName: string;
  /** What the receiver's statement shows (10 characters), e.g. `PAYOUT`. */
  entryDescription: string;
}

export interface AchEntry {
  /** Our reference for the entry (up to 15 characters): how a return names it. */
  idNumber: string;
  direction: 'credit' | 'debit';
  accountType: 'checking' | 'savings';
  routingNumber: string;
  accountNumber: string;
  amountMinor: bigint;
  name: string;
  secCode: 'PPD' | 'CCD';
  /** The settlement date asked for (YYYY-MM-DD). */
  effectiveDate: string;
  /** What the receiver's statement shows, when not the originator's (`ACCTVERIFY` for micro-deposits). */
  entryDescription?: string;
  /** 15 digits, unique across files (a return names the entry by it); default: the ODFI's id and the entry's place in the file. */
  traceNumber?: string;
}

export interface AchTotals {
  entryCount: number;
  /** Sum of the receiving banks' 8-digit ids, its last 10 digits. */
  entryHash: bigint;
  totalDebitMinor: bigint;
  totalCreditMinor: bigint;
}

type Fields = Record<string, { width: number; position: number }>;

export interface ReadAchFile {
  header: AchRecord;
  /** `addenda[i]`: the addenda records of `entries[i]` (types 05, 98 and 99). */
  batches: { header: AchRecord; entries: AchRecord[]; addenda: AchRecord[][]; control: AchRecord }[];
  control: AchRecord;
}

const TRANSACTION_CODES = { checking: { credit: '22', debit: '27' }, savings: { credit: '32', debit: '37' } } as const;
const NINES = '9'.repeat(94);
const ADDENDA_FIELDS: Record<string, Fields> = { '98': NOC_ADDENDA_FIELDS, '99': RETURN_ADDENDA_FIELDS };
/** The most one entry carries through the library (9,999,999.99; the ACH rail's own bound is lower). */
export const MAX_ACH_ENTRY_MINOR = 999_999_999n;
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];

/** The file's bytes and its totals, computed in bigint and found again in the file's own controls. */
export async function buildAchFile(
  originator: AchOriginator, entries: AchEntry[], opts: { createdAt: Date; fileIdModifier: string },
): Promise<{ text: string; totals: AchTotals }> {
  if (entries.length === 0) throw new Error('An ACH file needs at least one entry');
  // The library writes at most 9,999,999.99 an entry (the ACH rail's own bound is 1,000,000.00).
  const tooLarge = entries.find((e) => e.amountMinor <= 0n || e.amountMinor > MAX_ACH_ENTRY_MINOR);
  if (tooLarge) throw new Error(`Entry ${tooLarge.idNumber}: ${formatAmount(tooLarge.amountMinor, 2)} is not an ACH entry amount (0.01 to 9,999,999.99)`);
  const iso = opts.createdAt.toISOString();
  const file = new nach.File({
    immediateDestination: originator.odfiRouting,
    immediateOrigin: originator.odfiRouting,
    immediateDestinationName: originator.odfiName,
    immediateOriginName: originator.companyName,
    // Set here, in UTC: the library would take the machine's clock and zone, and a rebuilt file must be the same bytes.
    fileCreationDate: `${iso.slice(2, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}`,
    fileCreationTime: `${iso.slice(11, 13)}${iso.slice(14, 16)}`,
    fileIdModifier: opts.fileIdModifier,
    referenceCode: `FILE${opts.fileIdModifier}`,
    // Batches are numbered from 1.
    batchSequenceNumber: '1',
  });
  let trace = 0;
  for (const group of batchesOf(entries)) {
    const credits = group.some((e) => e.direction === 'credit');
    const debits = group.some((e) => e.direction === 'debit');
    const [year, month, day] = group[0].effectiveDate.split('-').map(Number);
    const batch = new nach.Batch({
      serviceClassCode: credits && debits ? '200' : credits ? '220' : '225',
      companyName: originator.companyName,
      standardEntryClassCode: group[0].secCode,
      companyIdentification: originator.companyId,
      companyEntryDescription: group[0].entryDescription ?? originator.entryDescription,
      // What the receiver's statement shows as the date: `NOV 30`.
      companyDescriptiveDate: `${MONTHS[month - 1]} ${String(day).padStart(2, '0')}`,
      // The library formats it with the local calendar: a local date of that day.
      effectiveEntryDate: new Date(year, month - 1, day),
      originatingDFI: originator.odfiRouting.slice(0, 8),
    });
    for (const e of group) {
      batch.addEntry(new nach.Entry({
        receivingDFI: e.routingNumber,
        DFIAccount: e.accountNumber,
        amount: formatAmount(e.amountMinor, 2),
        idNumber: e.idNumber,
        individualName: e.name,
        // Blank: the library refuses an empty field, NACHA leaves this one to the originator.
        discretionaryData: '  ',
        transactionCode: TRANSACTION_CODES[e.accountType][e.direction],
        traceNumber: e.traceNumber ?? `${originator.odfiRouting.slice(0, 8)}${String(++trace).padStart(7, '0')}`,
      }));
    }
    file.addBatch(batch);
  }
  // Every record ends in CRLF, the last one too (the library leaves it off).
  const text = `${(await new Promise<string>((resolve) => file.generateFile(resolve))).replace(/(\r?\n)*$/, '')}\r\n`;
  const totals = totalsOf(entries);
  checkControls(readFileControl(text), totals);
  return { text, totals };
}

/**
 * At most this many entries in one batch: the library sums a batch's entries again at each entry
 * it adds (quadratic in the batch's size), and NACHA allows any number of batches of the same kind.
 */
export const MAX_BATCH_ENTRIES = 50;

/**
 * Entries grouped by SEC code, effective date and description, in a stable order, each group cut in
 * batches of at most MAX_BATCH_ENTRIES.
 */
function batchesOf(entries: AchEntry[]): AchEntry[][] {
  const groups = new Map<string, AchEntry[]>();
  for (const e of entries) {
    const key = achBatchKey(e);
    const group = groups.get(key);
    if (group) group.push(e);
    else groups.set(key, [e]);
  }
  return [...groups.keys()].sort().flatMap((key) => {
    const group = groups.get(key)!;
    return Array.from({ length: Math.ceil(group.length / MAX_BATCH_ENTRIES) }, (_, i) => group.slice(i * MAX_BATCH_ENTRIES, (i + 1) * MAX_BATCH_ENTRIES));
  });
}

/** What puts entries in one batch: their SEC code, effective date and description. Batches go out in the order of their keys. */
export const achBatchKey = (e: Pick<AchEntry, 'secCode' | 'effectiveDate' | 'entryDescription'>) => `${e.secCode} ${e.effectiveDate} ${e.entryDescription ?? ''}`;

export function totalsOf(entries: AchEntry[]): AchTotals {
  let hash = 0n;
  const totals = { entryCount: entries.length, entryHash: 0n, totalDebitMinor: 0n, totalCreditMinor: 0n };
  for (const e of entries) {
    hash += BigInt(e.routingNumber.slice(0, 8));
    if (e.direction === 'credit') totals.totalCreditMinor += e.amountMinor;
    else totals.totalDebitMinor += e.amountMinor;
  }
  totals.entryHash = hash % 10_000_000_000n;
  return totals;
}

/** What a batch or file control record says: its entry count, entry hash and totals. */
export function controlTotals(control: AchRecord): AchTotals {
  return {
    entryCount: Number(control.addendaCount),
    entryHash: BigInt(control.entryHash),
    totalDebitMinor: BigInt(control.totalDebit),
    totalCreditMinor: BigInt(control.totalCredit),
  };
}

/** The file control record: the last record before the padding of nines. */
function readFileControl(text: string): AchRecord {
  // Records end in blanks (reserved fields): only line breaks are trimmed.
  const lines = text.replace(/[\r\n]+$/, '').split(/\r?\n/);
  let at = lines.length - 1;
  while (at > 0 && lines[at] === NINES) at--;
  const line = lines[at] ?? '';
  if (line[0] !== '9' || line.length !== 94) throw new Error('The NACHA file ends without its file control record');
  return readRecord(line, fileControlFields);
}

/** The file control must say what we summed: the library adds amounts as JavaScript numbers. */
function checkControls(control: AchRecord, totals: AchTotals) {
  const found = controlTotals(control);
  for (const key of Object.keys(found) as (keyof AchTotals)[]) {
    if (found[key] !== totals[key]) throw new Error(`The NACHA file's ${key} is ${found[key]}, not ${totals[key]}: the file is not used`);
  }
}

const fieldOrder = new WeakMap<Fields, [string, { width: number }][]>();

/** A layout's fields in the order of their positions (worked out once per layout). */
function orderedFields(fields: Fields): [string, { width: number }][] {
  let order = fieldOrder.get(fields);
  if (!order) fieldOrder.set(fields, order = Object.entries(fields).sort(([, a], [, b]) => a.position - b.position));
  return order;
}

/** One record's fields, cut by the library's widths in the order of their positions. */
function readRecord(line: string, fields: Fields): AchRecord {
  const out: AchRecord = {};
  let at = 0;
  for (const [name, field] of orderedFields(fields)) {
    out[name] = line.slice(at, at + field.width).trim();
    at += field.width;
  }
  return out;
}

/**
 * A NACHA file's 94-character records as banks send them: one a line (CRLF or LF), or with no line
 * breaks at all (blocks of 940 characters), and with the blanks that end a record trimmed.
 */
export function achRecords(text: string): string[] {
  const body = text.replace(/^\uFEFF/, '');
  const lines = /[\r\n]/.test(body) ? body.split(/\r?\n|\r/) : body.match(/.{1,94}/gs) ?? [];
  return lines.map((l) => l.replace(/\s+$/, '')).filter((l) => l.length > 0).map((l) => (l.length < 94 ? l.padEnd(94, ' ') : l));
}

const PAYOUT_CODES = new Set(Object.values(TRANSACTION_CODES).map((c) => c.credit));
const PULL_CODES = new Set(Object.values(TRANSACTION_CODES).map((c) => c.debit));

/** What a batch of ours moves on our account at the bank: the credits it pays out and the debits it pulls in. */
export function achBatchTotals(batch: ReadAchFile['batches'][number]): { paidOutMinor: bigint; pulledInMinor: bigint } {
  const sum = (codes: Set<string>) => batch.entries.filter((e) => codes.has(e.transactionCode)).reduce((s, e) => s + BigInt(e.amount), 0n);
  return { paidOutMinor: sum(PAYOUT_CODES), pulledInMinor: sum(PULL_CODES) };
}

/** How the bank's statement and our books name a batch of one of our files: the file's name without its extension, and the batch's place (`ACH-20261130-A-B1`). */
export const achBatchReference = (fileName: string, index: number) => `${fileName.replace(/\.[a-z]+$/, '')}-B${index + 1}`;

/** A NACHA file's records, by the library's layouts; padding records are skipped. */
export function readAchFile(text: string): ReadAchFile {
  const lines = achRecords(text);
  const bad = lines.findIndex((l) => l.length !== 94);
  if (bad >= 0) throw new Error(`Record ${bad + 1} is ${lines[bad].length} characters long, not 94`);
  const out: ReadAchFile = { header: {}, batches: [], control: {} };
  for (const line of lines) {
    const type = line[0];
    if (type === '1') out.header = readRecord(line, fileHeaderFields);
    else if (type === '5') out.batches.push({ header: readRecord(line, batchHeaderFields), entries: [], addenda: [], control: {} });
    else if (type === '6') {
      out.batches.at(-1)!.entries.push(readRecord(line, entryFields));
      out.batches.at(-1)!.addenda.push([]);
    } else if (type === '7') out.batches.at(-1)!.addenda.at(-1)!.push(readRecord(line, ADDENDA_FIELDS[line.slice(1, 3)] ?? entryAddendaFields));
    else if (type === '8') out.batches.at(-1)!.control = readRecord(line, batchControlFields);
    else if (type === '9' && line !== NINES) out.control = readRecord(line, fileControlFields);
    else if (type !== '9') throw new Error(`Record ${lines.indexOf(line) + 1} is of type '${type}', not a NACHA record (1, 5, 6, 7, 8 or 9)`);
  }
  if (out.header.recordTypeCode !== '1') throw new Error('No file header record (type 1): not a NACHA file');
  return out;
}
