import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import batchControlFields from 'nach2/lib/batch/control';
import batchHeaderFields from 'nach2/lib/batch/header';
import entryFields from 'nach2/lib/entry/fields';
import fileControlFields from 'nach2/lib/file/control';
import fileHeaderFields from 'nach2/lib/file/header';
import { buildAchFile, readAchFile, type AchEntry } from '../../src/providers/bank-files/nacha';
import { writeRecord } from '../../src/providers/bank-files/nacha-addenda';
import { readInboundAchFile, readInboundFile } from '../../src/bank-files/inbound-items';
import { TestBank } from '../harness/test-bank';
import { odfiProblems } from '../harness/odfi-checks';

// What the bank sends back (returns, notifications of change, credits), written by the test bank
// from the NACHA library's record tables and the addenda tables, and read by the platform's reader.

const odfi = { routing: '091000019', name: 'TEST ODFI BANK', companyId: '1234567890', companyName: 'FINPLATFORM', collectionAccount: '9000012345' };
const entries: AchEntry[] = [
  { idNumber: '000000000000101', traceNumber: '091000010000101', direction: 'credit', accountType: 'checking', routingNumber: '021000021', accountNumber: '12345678', amountMinor: 1014n, name: 'JANE DOE', secCode: 'PPD', effectiveDate: '2026-11-30' },
  { idNumber: '000000000000102', traceNumber: '091000010000102', direction: 'credit', accountType: 'savings', routingNumber: '011000015', accountNumber: '87654321', amountMinor: 2015n, name: 'ACME INC', secCode: 'CCD', effectiveDate: '2026-11-30' },
  { idNumber: '000000000000103', traceNumber: '091000010000103', direction: 'debit', accountType: 'checking', routingNumber: '021000021', accountNumber: '12345678', amountMinor: 77n, name: 'JANE DOE', secCode: 'PPD', effectiveDate: '2026-11-30', entryDescription: 'ACCTVERIFY' },
];

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-'));
  for (const folder of ['inbox', 'outbox']) fs.mkdirSync(path.join(root, folder));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

async function bankWithFile() {
  const { text } = await buildAchFile({ odfiRouting: odfi.routing, odfiName: odfi.name, companyId: odfi.companyId, companyName: odfi.companyName, entryDescription: 'PAYOUT' },
    entries, { createdAt: new Date('2026-11-27T15:00:00Z'), fileIdModifier: 'A' });
  fs.writeFileSync(path.join(root, 'inbox', 'ACH-20261127-A.ach'), text);
  return { bank: new TestBank(root, odfi), text };
}

const outboxFiles = () => fs.readdirSync(path.join(root, 'outbox')).filter((n) => !n.endsWith('.rejected')).sort().map((n) => fs.readFileSync(path.join(root, 'outbox', n), 'utf8'));

test('the record writer gives back, byte for byte, every record the NACHA library wrote', async () => {
  const { text } = await bankWithFile();
  const file = readAchFile(text);
  const written = [
    writeRecord(fileHeaderFields, file.header),
    ...file.batches.flatMap((b) => [writeRecord(batchHeaderFields, b.header), ...b.entries.map((e) => writeRecord(entryFields, e)), writeRecord(batchControlFields, b.control)]),
    writeRecord(fileControlFields, file.control),
  ];
  expect(written).toEqual(text.split('\r\n').filter((l) => l.length > 0 && l !== '9'.repeat(94)));
  expect(() => writeRecord(entryFields, { ...file.batches[0].entries[0], idNumber: 'X'.repeat(16) })).toThrow(/wider than its 15/);
});

test('the bank takes the file and answers magic amounts by itself: .14 returned R01, .15 corrected C01', async () => {
  const { bank } = await bankWithFile();
  expect(bank.takeInbox().map((e) => e.trace).sort()).toEqual(['091000010000101', '091000010000102', '091000010000103']);
  expect(bank.rejected).toEqual([]);
  const items = outboxFiles().flatMap(readInboundAchFile);
  expect(items).toEqual([
    { kind: 'notification_of_change', id: expect.stringMatching(/^09100001\d{7}$/), originalTrace: '091000010000102', code: 'C01', correctedData: '55500011122' },
    { kind: 'return', id: expect.stringMatching(/^09100001\d{7}$/), originalTrace: '091000010000101', code: 'R01' },
  ]);
  // The bank's own files pass the checks it runs on ours (balanced, whole blocks, check digits).
  for (const text of outboxFiles()) expect(odfiProblems(text, new Set())).toEqual([]);
  // The same file again is a duplicate: rejected whole.
  fs.copyFileSync(path.join(root, 'inbox', 'ACH-20261127-A.ach'), path.join(root, 'inbox', 'ACH-20261127-B.ach'));
  expect(bank.takeInbox()).toEqual([]);
  expect(bank.rejected[0].problems[0]).toMatch(/duplicate file/);
  // …and says so in its outbox: a notice the platform reads.
  const notice = fs.readFileSync(path.join(root, 'outbox', 'ACH-20261127-B.ach.rejected'), 'utf8');
  expect(readInboundFile(notice)).toEqual({
    rail: 'ach', items: [{ kind: 'file_rejection', id: 'ACH-20261127-B.ach', file: 'ACH-20261127-B.ach', reasons: [expect.stringMatching(/^duplicate file/)] }],
  });
});

test('returns on demand and credits for the platform read back with their codes, traces, references and senders', async () => {
  const { bank } = await bankWithFile();
  const taken = bank.takeInbox();
  fs.rmSync(path.join(root, 'outbox'), { recursive: true });
  fs.mkdirSync(path.join(root, 'outbox'));
  bank.writeReturns([{ entry: taken.find((e) => e.trace === '091000010000103')!, code: 'R10' }]);
  await bank.writeCredits([{ amountMinor: 123_456n, reference: 'FPABCDEF123456', senderName: 'JOHN SENDER' }, { amountMinor: 1n, reference: 'FPZZZ', senderName: 'JOHN SENDER' }]);
  const [credits, returns] = outboxFiles().map(readInboundAchFile);
  expect(returns).toEqual([{ kind: 'return', id: expect.any(String), originalTrace: '091000010000103', code: 'R10' }]);
  expect(credits.map((c) => c.kind === 'credit' && [c.amountMinor, c.reference, c.senderName])).toEqual([
    [123_456n, 'FPABCDEF123456', 'JOHN SENDER'], [1n, 'FPZZZ', 'JOHN SENDER'],
  ]);
});
