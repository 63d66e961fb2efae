import { buildAchFile, MAX_BATCH_ENTRIES, achRecords, readAchFile, totalsOf, type AchEntry, type AchOriginator } from '../../src/providers/bank-files/nacha';

// NACHA files: written by the library, read back by its own record tables, totals exact in bigint.

const originator: AchOriginator = {
  odfiRouting: '091000019', odfiName: 'ODFI TEST BANK', companyId: '1234567890', companyName: 'FIN PLATFORM', entryDescription: 'PAYOUT',
};
const ROUTINGS = ['021000021', '011000015', '122105278', '026009593'];

/** 200 entries: credits and debits, checking and savings, PPD and CCD, two settlement dates; amounts up to the rail's 1,000,000.00. */
function entries(): AchEntry[] {
  return Array.from({ length: 200 }, (_, i) => ({
    idNumber: `PAY${String(i).padStart(12, '0')}`,
    direction: i % 5 === 0 ? 'debit' : 'credit',
    accountType: i % 3 === 0 ? 'savings' : 'checking',
    routingNumber: ROUTINGS[i % ROUTINGS.length],
    accountNumber: String(100000 + i * 7919),
    // 0.10 and 0.20 sum inexactly as binary floating point; 1,000,000.00 is the ACH rail's largest payment.
    amountMinor: i % 50 === 0 ? 100_000_000n : BigInt(10 + (i % 2) * 10),
    name: `Customer ${i}`,
    secCode: i % 4 === 0 ? 'CCD' : 'PPD',
    effectiveDate: i % 2 === 0 ? '2026-11-30' : '2026-12-01',
  }));
}

const createdAt = new Date('2026-11-27T14:05:00.000Z');

test('200 entries make one balanced file: 94-character records in blocks of ten, read back field by field', async () => {
  const list = entries();
  const { text, totals } = await buildAchFile(originator, list, { createdAt, fileIdModifier: 'A' });
  // Every record ends in CRLF, the last one too.
  expect(text.endsWith('\r\n')).toBe(true);
  const lines = text.slice(0, -2).split('\r\n');
  expect(lines.every((l) => l.length === 94)).toBe(true);
  expect(lines.length % 10).toBe(0);

  const file = readAchFile(text);
  expect(file.header).toMatchObject({ immediateDestination: '091000019', fileCreationDate: '261127', fileCreationTime: '1405', fileIdModifier: 'A' });
  // Batches by SEC code and settlement date (50 CCD, 50 PPD on the 30th; 100 PPD on the 1st, cut in two).
  expect(file.batches.map((b) => [b.header.batchNumber, b.header.standardEntryClassCode, b.header.effectiveEntryDate, b.entries.length])).toEqual([
    ['0000001', 'CCD', '261130', 50], ['0000002', 'PPD', '261130', 50], ['0000003', 'PPD', '261201', 50], ['0000004', 'PPD', '261201', 50],
  ]);
  const read = file.batches.flatMap((b) => b.entries);
  expect(read).toHaveLength(200);
  const byId = new Map(read.map((e) => [e.idNumber, e]));
  for (const e of list) {
    const r = byId.get(e.idNumber)!;
    expect(`${r.receivingDFI}${r.checkDigit}`).toBe(e.routingNumber);
    expect(r.DFIAccount).toBe(e.accountNumber);
    expect(BigInt(r.amount)).toBe(e.amountMinor);
    expect(r.individualName).toBe(e.name);
    expect(r.transactionCode).toBe({ checking: { credit: '22', debit: '27' }, savings: { credit: '32', debit: '37' } }[e.accountType][e.direction]);
    expect(r.traceNumber).toMatch(/^09100001\d{7}$/);
  }
  expect(new Set(read.map((e) => e.traceNumber)).size).toBe(200);

  // Each batch's control is its own entries' count and sums; the file's, all of them.
  for (const b of file.batches) {
    const mine = list.filter((e) => b.entries.some((r) => r.idNumber === e.idNumber));
    const t = totalsOf(mine);
    expect([Number(b.control.addendaCount), BigInt(b.control.totalDebit), BigInt(b.control.totalCredit), BigInt(b.control.entryHash)])
      .toEqual([t.entryCount, t.totalDebitMinor, t.totalCreditMinor, t.entryHash]);
  }
  expect(totals).toEqual(totalsOf(list));
  expect([BigInt(file.control.totalDebit), BigInt(file.control.totalCredit), Number(file.control.batchCount)]).toEqual([totals.totalDebitMinor, totals.totalCreditMinor, 4]);
});

test('the same payments and time give the same bytes (a repeated upload sends the same file)', async () => {
  const a = await buildAchFile(originator, entries(), { createdAt, fileIdModifier: 'B' });
  const b = await buildAchFile(originator, entries(), { createdAt, fileIdModifier: 'B' });
  expect(a.text).toBe(b.text);
});

test('an amount the library cannot write is refused with its entry named, before any file exists', async () => {
  const [first] = entries();
  await expect(buildAchFile(originator, [{ ...first, amountMinor: 1_000_000_000n }], { createdAt, fileIdModifier: 'C' }))
    .rejects.toThrow(/Entry PAY000000000000: 10000000.00 is not an ACH entry amount/);
});

test('a record longer than 94 characters is refused when read; one whose closing blanks were trimmed is read whole', () => {
  expect(() => readAchFile(`${'1'.repeat(95)}\n`)).toThrow(/Record 1 is 95 characters long, not 94/);
  expect(achRecords(`${'1'.repeat(93)}\n`)).toEqual([`${'1'.repeat(93)} `]);
});

test('a large group of entries of one kind is cut in batches of at most MAX_BATCH_ENTRIES, numbered in order, each balanced', async () => {
  const many: AchEntry[] = Array.from({ length: 2 * MAX_BATCH_ENTRIES + 20 }, (_, i) => ({
    idNumber: `BIG${String(i).padStart(12, '0')}`, direction: 'credit', accountType: 'checking', routingNumber: ROUTINGS[i % ROUTINGS.length],
    accountNumber: String(200000 + i), amountMinor: BigInt(100 + i), name: `Customer ${i}`, secCode: 'PPD', effectiveDate: '2026-11-30',
  }));
  const { text, totals } = await buildAchFile(originator, many, { createdAt, fileIdModifier: 'B' });
  const file = readAchFile(text);
  expect(file.batches.map((b) => b.entries.length)).toEqual([MAX_BATCH_ENTRIES, MAX_BATCH_ENTRIES, 20]);
  expect(file.batches.map((b) => Number(b.header.batchNumber))).toEqual([1, 2, 3]);
  expect(file.batches.flatMap((b) => b.entries.map((e) => e.idNumber))).toEqual(many.map((e) => e.idNumber));
  expect(totals).toEqual(totalsOf(many));
  for (const b of file.batches) {
    expect(BigInt(b.control.totalCredit)).toBe(b.entries.reduce((s, e) => s + BigInt(e.amount), 0n));
  }
});
