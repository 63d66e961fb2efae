import { achFileLines } from '../../src/reconciliation/expected-lines';
import { matchStatement } from '../../src/reconciliation/matching';
import { bai2Lines } from '../../src/reconciliation/statement-lines';
import { readBai2 } from '../../src/providers/bank-files/bai2';
import { buildAchFile, readAchFile, type AchEntry } from '../../src/providers/bank-files/nacha';
import { achBookings } from '../../src/sandbox-bank/book';
import { bai2Statement } from '../../src/sandbox-bank/statements';

// The books' side of a statement (src/reconciliation/expected-lines.ts) against the bank's: a NACHA
// file of ours, booked by the sandbox bank and stated in its BAI2, reconciles line for line.

const originator = { odfiRouting: '091000019', odfiName: 'SANDBOX BANK', companyId: '1234567890', companyName: 'FINPLATFORM', entryDescription: 'PAYOUT' };
const entry = (i: number, amountMinor: bigint, over: Partial<AchEntry> = {}): AchEntry => ({
  idNumber: String(7000 + i).padStart(15, '0'), direction: 'credit', accountType: 'checking', routingNumber: '021000021', accountNumber: `4000${i}`,
  amountMinor, name: 'JANE DOE', secCode: 'PPD', effectiveDate: '2026-12-01', traceNumber: `09100001${String(i).padStart(7, '0')}`, ...over,
});

test('a NACHA file of ours is expected as the bank books it, one line per batch and direction; the sandbox bank\'s statement of it reconciles with no exception', async () => {
  const entries = [
    ...Array.from({ length: 60 }, (_, i) => entry(i + 1, BigInt(1_000 + i))),
    entry(61, 17n, { entryDescription: 'ACCTVERIFY' }), entry(62, 23n, { entryDescription: 'ACCTVERIFY' }),
    entry(63, 40n, { entryDescription: 'ACCTVERIFY', direction: 'debit' }),
  ];
  const { text } = await buildAchFile(originator, entries, { createdAt: new Date('2026-11-30T15:00:00Z'), fileIdModifier: 'A' });
  const file = readAchFile(text);
  const expected = achFileLines('ACH-20261130-A.ach', file);
  // 60 payouts in batches of 50 and 10; the micro-deposits' batch pays 0.40 out and pulls 0.40 back.
  expect(expected.map((l) => [l.direction, l.amountMinor, l.references[0]])).toEqual([
    ['debit', 1_000n * 50n + 1_225n, 'ACH-20261130-A-B1'], ['debit', 1_000n * 10n + 545n, 'ACH-20261130-A-B2'],
    ['debit', 40n, 'ACH-20261130-A-B3'], ['credit', 40n, 'ACH-20261130-A-B3'],
  ]);
  const statement = bai2Statement({
    sequence: 1, at: new Date('2026-12-01T22:00:00Z'), account: '9000012345', currency: 'usd', openingMinor: 0n,
    lines: achBookings('ACH-20261130-A.ach', file, []), bankId: '091000019', customerId: 'FINPLATFORM',
  });
  const { matches, exceptions } = matchStatement(bai2Lines(readBai2(statement), 'BAI-1', '9000012345'), expected, { shortfallMinor: 0n, days: 2 });
  expect(exceptions).toEqual([]);
  expect(matches.map((m) => m.by)).toEqual(['reference', 'reference', 'reference', 'reference']);
});
