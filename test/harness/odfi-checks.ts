import { moovValidate } from './moov-ach';
import { controlTotals, readAchFile, type AchTotals, type ReadAchFile } from '../../src/providers/bank-files/nacha';

// The bank's side (a test counterpart): the checks an ODFI runs on a NACHA file before it takes it.
// A file failing any of them is rejected whole, as a bank does.

// Credits: 21–24 and 31–34 (21 and 31: returns and notifications of change of a credit); debits: 26–29 and 36–39.
const DEBIT_CODES = new Set(['26', '27', '28', '29', '36', '37', '38', '39']);
const CREDIT_CODES = new Set(['21', '22', '23', '24', '31', '32', '33', '34']);

/** The ABA check digit rule: weights 3, 7, 1 over the nine digits sum to a multiple of ten. */
function routingValid(nineDigits: string): boolean {
  if (!/^\d{9}$/.test(nineDigits)) return false;
  const weights = [3, 7, 1, 3, 7, 1, 3, 7, 1];
  return [...nineDigits].reduce((sum, d, i) => sum + Number(d) * weights[i], 0) % 10 === 0;
}

type Batch = ReadAchFile['batches'][number];

/** The bank's own sums of the entries as it read them (not the platform's); the count includes addenda records. */
function sumsOf(batches: Batch[]): AchTotals {
  const sums: AchTotals = { entryCount: 0, entryHash: 0n, totalDebitMinor: 0n, totalCreditMinor: 0n };
  for (const e of batches.flatMap((b) => b.entries)) {
    sums.entryCount++;
    sums.entryHash += BigInt(e.receivingDFI);
    if (DEBIT_CODES.has(e.transactionCode)) sums.totalDebitMinor += BigInt(e.amount);
    else if (CREDIT_CODES.has(e.transactionCode)) sums.totalCreditMinor += BigInt(e.amount);
  }
  sums.entryCount += batches.reduce((n, b) => n + b.addenda.flat().length, 0);
  sums.entryHash %= 10_000_000_000n;
  return sums;
}

/** The names the bank's rejections use for the totals. */
const TOTAL_NAMES: Record<keyof AchTotals, string> = { entryCount: 'count', entryHash: 'hash', totalDebitMinor: 'debit', totalCreditMinor: 'credit' };

function compare(where: string, control: Record<string, string>, sums: AchTotals, problems: string[]) {
  const found = controlTotals(control);
  for (const key of Object.keys(found) as (keyof AchTotals)[]) {
    if (found[key] !== sums[key]) problems.push(`${where}: ${TOTAL_NAMES[key]} is ${found[key]}, the entries make ${sums[key]}`);
  }
}

/**
 * What is wrong with a file, as an ODFI would reject it; empty when it is taken. `seen` holds the
 * files already taken (destination, origin, creation date and file id modifier): a file that
 * repeats one is a duplicate.
 */
export function odfiProblems(text: string, seen: Set<string>): string[] {
  let file: ReadAchFile;
  try {
    file = readAchFile(text);
  } catch (err) {
    return [(err as Error).message];
  }
  const problems: string[] = [];
  const records = text.split(/\r?\n/).filter(Boolean).length;
  if (records % 10 !== 0) problems.push(`${records} records: not whole blocks of ten`);
  const all = file.batches.flatMap((b) => b.entries);
  for (const [i, b] of file.batches.entries()) {
    if (b.header.batchNumber !== b.control.batchNumber) problems.push(`batch ${i + 1}: its header and control name other batches`);
    compare(`batch ${b.header.batchNumber}`, b.control, sumsOf([b]), problems);
  }
  for (const e of all) {
    if (!routingValid(`${e.receivingDFI}${e.checkDigit}`)) problems.push(`entry ${e.traceNumber}: routing number ${e.receivingDFI}${e.checkDigit} fails its check digit`);
  }
  compare('file', file.control, sumsOf(file.batches), problems);
  if (Number(file.control.batchCount) !== file.batches.length) problems.push(`file: batchCount is ${file.control.batchCount}, the file has ${file.batches.length}`);
  // And as a bank's software we did not write reads it: moov-io/ach's reader and Validate().
  const moov = moovValidate(text)[0]!;
  if (moov.error) problems.push(`moov-io/ach: ${moov.error}`);
  const identity = [file.header.immediateDestination, file.header.immediateOrigin, file.header.fileCreationDate, file.header.fileIdModifier].join('|');
  if (seen.has(identity)) problems.push(`duplicate file: ${identity} was taken already`);
  if (problems.length === 0) seen.add(identity);
  return problems;
}
