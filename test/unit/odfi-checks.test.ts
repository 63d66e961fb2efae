import { buildAchFile, type AchEntry } from '../../src/providers/bank-files/nacha';
import { odfiProblems } from '../harness/odfi-checks';

// The test bank's checks on a NACHA file: what the platform builds is taken; an unbalanced batch,
// a bad check digit or a repeated file is rejected, as an ODFI does.

const originator = { odfiRouting: '091000019', odfiName: 'ODFI TEST BANK', companyId: '1234567890', companyName: 'FIN PLATFORM', entryDescription: 'PAYOUT' };
const entries: AchEntry[] = Array.from({ length: 12 }, (_, i) => ({
  idNumber: `PAY${i}`, direction: i % 3 === 0 ? 'debit' : 'credit', accountType: 'checking', routingNumber: i % 2 ? '021000021' : '011000015',
  accountNumber: `5550${i}`, amountMinor: BigInt(1_000 + i), name: `Payee ${i}`, secCode: 'PPD', effectiveDate: '2026-11-30',
}));
const build = (fileIdModifier = 'A') => buildAchFile(originator, entries, { createdAt: new Date('2026-11-27T14:05:00Z'), fileIdModifier });

/** The file with one record's characters at `from` replaced (same length). */
function alter(text: string, recordPrefix: string, from: number, replacement: string) {
  return text.split('\r\n').map((line) => (line.startsWith(recordPrefix) ? line.slice(0, from) + replacement + line.slice(from + replacement.length) : line)).join('\r\n');
}

test('a file the platform builds is taken once; the same file again is a duplicate; another file id modifier is not', async () => {
  const seen = new Set<string>();
  const { text } = await build();
  expect(odfiProblems(text, seen)).toEqual([]);
  expect(odfiProblems(text, seen)).toEqual([expect.stringMatching(/^duplicate file: /)]);
  expect(odfiProblems((await build('B')).text, seen)).toEqual([]);
});

test('an entry whose amount does not add up to its batch and file controls is rejected', async () => {
  const { text } = await build();
  // The first entry's amount (positions 30–39) one cent higher than the controls say.
  const firstEntry = text.split('\r\n').find((l) => l.startsWith('6'))!;
  const amount = String(Number(firstEntry.slice(29, 39)) + 1).padStart(10, '0');
  const problems = odfiProblems(text.replace(firstEntry, firstEntry.slice(0, 29) + amount + firstEntry.slice(39)), new Set());
  // The debits are entries 0, 3, 6 and 9: 10.00 + 10.03 + 10.06 + 10.09.
  // moov-io/ach finds it too.
  expect(problems).toEqual(['batch 0000001: debit is 4018, the entries make 4019', 'file: debit is 4018, the entries make 4019',
    expect.stringMatching(/^moov-io\/ach: .*TotalDebitEntryDollarAmount calculated 4019 is out-of-balance with batch control 4018$/)]);
});

test('a routing number with a wrong check digit is rejected', async () => {
  const { text } = await build();
  // The check digit of the entries to 011000015 (position 12) made 6.
  const problems = odfiProblems(alter(text, '62701100001', 11, '6'), new Set());
  expect(problems.some((p) => /routing number 011000016 fails its check digit/.test(p))).toBe(true);
});

test('a file cut short is rejected', async () => {
  const { text } = await build();
  // 12 entries and 4 other records, padded to 20: one padding record less is 19.
  expect(odfiProblems(text.trimEnd().split('\r\n').slice(0, -1).join('\r\n'), new Set())).toContain('19 records: not whole blocks of ten');
});
