import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readInboundFile } from '../../src/bank-files/inbound-items';
import { buildAchFile, type AchEntry } from '../../src/providers/bank-files/nacha';
import { buildPain001 } from '../../src/providers/bank-files/sepa-messages';
import { answerInbox, answersTo, runSandboxBank } from '../../src/sandbox-bank/sandbox-bank';
import { requestCredit } from '../../src/sandbox-bank/credits';
import { CLOSED_IBAN, CORRECTED_ACCOUNT } from '../../src/sandbox-bank/magic';
import { iso20022SchemaErrors } from '../harness/iso20022-schemas';
import { moovValidate } from '../harness/moov-ach';
import { moovBai2Read } from '../harness/moov-bai2';
import { bai2Statement, camt053Statement, type BookedLine } from '../../src/sandbox-bank/statements';
import { writeStatements } from '../../src/sandbox-bank/book';
import { readBai2 } from '../../src/providers/bank-files/bai2';
import { readCamt053 } from '../../src/providers/bank-files/camt053';
import { bai2Lines, camt053Lines } from '../../src/reconciliation/statement-lines';

// The sandbox bank behind `npm start` (SANDBOX_BANK=on): what it answers to the platform's files,
// read by moov-io/ach (an implementation this project did not write) and by the platform's own
// reader of the bank's outbox.

const originator = { odfiRouting: '091000019', odfiName: 'SANDBOX BANK', companyId: '1234567890', companyName: 'FINPLATFORM', entryDescription: 'PAYOUT' };
const bank = { us: { account: '9000012345', bankId: '091000019', customerId: 'FINPLATFORM', name: 'FINPLATFORM' }, sepa: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' } };
const now = new Date('2026-11-30T15:00:00Z');

const entry = (i: number, amountMinor: bigint, over: Partial<AchEntry> = {}): AchEntry => ({
  idNumber: String(7000 + i).padStart(15, '0'), direction: 'credit', accountType: 'checking', routingNumber: '021000021', accountNumber: `4000${i}`,
  amountMinor, name: 'JANE DOE', secCode: 'PPD', effectiveDate: '2026-12-01', traceNumber: `09100001${String(i).padStart(7, '0')}`, ...over,
});

test('an ACH file with a payout of .14 and one of .15 is answered with a return R01 and a notification of change C01, both valid to moov-io/ach and read back by the platform as they name the entries', async () => {
  const { text } = await buildAchFile(originator, [
    entry(1, 2_000n), entry(2, 3_014n), entry(3, 4_015n, { accountType: 'savings' }),
    // Micro-deposits are never answered, whatever their cents.
    entry(4, 14n, { entryDescription: 'ACCTVERIFY' }),
  ], { createdAt: now, fileIdModifier: 'A' });
  const { answers, booked } = answersTo(bank, 'ACH-20261130-A.ach', text, now);
  expect(answers.map((a) => a.name)).toEqual(['RET-ACH-20261130-A.ach', 'NOC-ACH-20261130-A.ach']);
  const checked = moovValidate(...answers.map((a) => a.text));
  expect(checked).toEqual([
    { batches: 1, entries: 1, returns: 1, notifications_of_change: 0 },
    { batches: 1, entries: 1, returns: 0, notifications_of_change: 1 },
  ]);
  const [returned, changed] = answers.map((a) => readInboundFile(a.text).items);
  expect(returned).toEqual([expect.objectContaining({ kind: 'return', originalTrace: '091000010000002', code: 'R01' })]);
  expect(changed).toEqual([expect.objectContaining({ kind: 'notification_of_change', originalTrace: '091000010000003', code: 'C01', correctedData: CORRECTED_ACCOUNT })]);
  // Booked on the US account: the batch paid out as one debit, the return as a credit.
  expect(booked.account).toBe('us');
  expect(booked.lines.map((l) => [l.direction, l.amountMinor, l.customerReference])).toEqual([
    ['debit', 2_000n + 3_014n + 4_015n, 'ACH-20261130-A-B1'], ['debit', 14n, 'ACH-20261130-A-B2'], ['credit', 3_014n, '091000010000002'],
  ]);
});

test('a pain.001 is acknowledged (ACCP), or its magic credits rejected (AC04) and returned (AC04): each answer valid to its ISO 20022 schema, read back by the platform', async () => {
  const debtor = { name: 'Financial Platform Sandbox', iban: bank.sepa.iban, bic: 'COBADEFFXXX' };
  const credit = (i: number, amountMinor: bigint, iban = 'FR1420041010050500013M02606') => ({
    endToEndId: String(8000 + i).padStart(15, '0'), amountMinor, creditorName: 'Erika Mustermann', creditorIban: iban,
    creditorBic: iban.startsWith('DE') ? 'MARKDEF1200' : 'PSSTFRPPXXX', remittance: `PAYOUT tr-${i}`,
  });
  const plain = buildPain001(debtor, [credit(1, 1_000n)], { messageId: 'SCT-20261130-1', createdAt: now, executionDate: '2026-12-01' });
  const [ack] = answersTo(bank, 'SCT-20261130-1.xml', plain.text, now).answers;
  expect(ack.name).toBe('STS-SCT-20261130-1-1.xml');
  expect(readInboundFile(ack.text).items).toEqual([]);
  expect(await iso20022SchemaErrors(ack.text)).toEqual([]);

  const magic = buildPain001(debtor, [credit(1, 1_000n), credit(2, 1_013n), credit(3, 1_000n, CLOSED_IBAN), credit(4, 1_014n)],
    { messageId: 'SCT-20261130-2', createdAt: now, executionDate: '2026-12-01' });
  const { answers, booked } = answersTo(bank, 'SCT-20261130-2.xml', magic.text, now);
  expect(answers.map((a) => a.name)).toEqual(['STS-SCT-20261130-2-1.xml', 'NTF-SCT-20261130-2-2.xml']);
  expect(readInboundFile(answers[0].text).items.map((i) => [i.kind, 'endToEndId' in i && i.endToEndId, 'code' in i && i.code])).toEqual([
    ['rejection', '000000000008002', 'AC04'], ['rejection', '000000000008003', 'AC04'],
  ]);
  for (const answer of answers) expect(await iso20022SchemaErrors(answer.text)).toEqual([]);
  expect(readInboundFile(answers[1].text).items).toEqual([expect.objectContaining({ kind: 'return', endToEndId: '000000000008004', code: 'AC04' })]);
  // Booked on the SEPA account: the accepted transfers as one batch, the return as a credit.
  expect(booked.lines.map((l) => [l.direction, l.amountMinor, l.batch?.transactions.length ?? l.returned?.code])).toEqual([['debit', 2_014n, 2], ['credit', 1_014n, 'AC04']]);
});

test('the bank takes each inbox file once, answers it in the outbox whole (never a .part left), refuses what it cannot read, and leaves uploads still in progress', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-bank-'));
  try {
    for (const folder of ['inbox', 'outbox']) fs.mkdirSync(path.join(root, folder));
    const { text } = await buildAchFile(originator, [entry(1, 5_014n)], { createdAt: now, fileIdModifier: 'B' });
    fs.writeFileSync(path.join(root, 'inbox', 'ACH-20261130-B.ach'), text);
    fs.writeFileSync(path.join(root, 'inbox', 'ACH-20261130-C.ach'), 'not a NACHA file');
    fs.writeFileSync(path.join(root, 'inbox', 'ACH-20261130-D.ach.part'), text.slice(0, 100));
    const first = answerInbox({ ...bank, root }, now);
    expect(first).toEqual({ taken: ['ACH-20261130-B.ach', 'ACH-20261130-C.ach'], answers: ['RET-ACH-20261130-B.ach', 'ACH-20261130-C.ach.rejected'] });
    expect(fs.readdirSync(path.join(root, 'outbox')).sort()).toEqual(['ACH-20261130-C.ach.rejected', 'RET-ACH-20261130-B.ach']);
    expect(readInboundFile(fs.readFileSync(path.join(root, 'outbox', 'ACH-20261130-C.ach.rejected'), 'utf8')).items)
      .toEqual([expect.objectContaining({ kind: 'file_rejection', file: 'ACH-20261130-C.ach' })]);
    expect(fs.readdirSync(path.join(root, 'inbox'))).toEqual(['ACH-20261130-D.ach.part']);
    expect(answerInbox({ ...bank, root }, now)).toEqual({ taken: [], answers: [] });

    // The day's statements: what was booked (the batch out, its return back), then an empty day from the closing balance.
    expect(writeStatements({ ...bank, root }, now)).toEqual(['BAI-20261130-1.txt', 'STM-20261130-1.xml']);
    const stated = readBai2(fs.readFileSync(path.join(root, 'outbox', 'BAI-20261130-1.txt'), 'utf8'));
    expect(stated.groups[0]!.accounts[0]!.summaries.map((x) => [x.typeCode, x.amountMinor])).toEqual([['010', 0n], ['015', 0n], ['100', 5_014n], ['400', 5_014n]]);
    expect(writeStatements({ ...bank, root }, new Date('2026-12-01T22:00:00Z'))).toEqual(['BAI-20261201-2.txt', 'STM-20261201-2.xml']);
    const second = readCamt053(fs.readFileSync(path.join(root, 'outbox', 'STM-20261201-2.xml'), 'utf8'))[0]!;
    expect([second.entries, second.problems]).toEqual([[], []]);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

describe('end-of-day statements', () => {
  const at = new Date('2026-11-30T22:00:00Z');
  const payouts = { messageId: 'SCT-20261130-3', paymentInfoId: 'SCT-20261130-3.0', transactions: [{ endToEndId: '000000000009001', amountMinor: 1_000n }, { endToEndId: '000000000009002', amountMinor: 2_500n }] };
  const lines: BookedLine[] = [
    { direction: 'debit', amountMinor: 12_345n, bankReference: 'SB1', customerReference: 'ACH-20261130-A-1', bai2TypeCode: '469', bankTransactionCode: 'PMNT/ICDT/ESCT', text: 'ACH SETTLEMENT PAYOUT, 3 ENTRIES' },
    { direction: 'credit', amountMinor: 3_014n, bankReference: 'SB2', customerReference: '091000010000002', bai2TypeCode: '261', bankTransactionCode: 'PMNT/ICDT/RRTN', text: 'ACH RETURN R01 / ORIGINAL 091000010000002', returned: { code: 'R01', endToEndId: '091000010000002' } },
  ];

  test('a BAI2 statement of the US account is read by moov-io/bai2 and by the platform alike: balances, totals and each line', () => {
    const text = bai2Statement({ sequence: 4, at, account: '9000012345', currency: 'usd', openingMinor: 100_000n, lines, bankId: '091000019', customerId: 'FINPLATFORM' });
    const [moov] = moovBai2Read(text);
    expect(moov!.error).toBeUndefined();
    const account = moov!.bai2!.Groups[0]!.Accounts[0]!;
    expect(account.summaries.map((s) => [s.TypeCode, Number(s.Amount)])).toEqual([['010', 100_000], ['015', 90_669], ['100', 3_014], ['400', 12_345]]);
    expect(account.Details!.map((d) => [d.TypeCode, Number(d.Amount), d.BankReferenceNumber, d.CustomerReferenceNumber])).toEqual([
      ['469', 12_345, 'SB1', 'ACH-20261130-A-1'], ['261', 3_014, 'SB2', '091000010000002'],
    ]);
    const ours = readBai2(text);
    expect(ours.problems).toEqual([]);
    // From the outbox, the platform keeps it for the reconciliation: no payment moves.
    expect(readInboundFile(text)).toEqual({ rail: 'ach', items: [{ kind: 'statement', id: '4:1:9000012345', account: '9000012345', entries: 2, closingMinor: 90_669n, problems: [] }] });
    expect(bai2Lines(ours, 'BAI-1', '9000012345').map((l) => [l.direction, l.amountMinor, l.references[1]])).toEqual([['debit', 12_345n, 'ACH-20261130-A-1'], ['credit', 3_014n, '091000010000002']]);
  });

  test('a camt.053 statement of the SEPA account is valid to the ISO schema, and the platform reads a payment block of ours as one line', async () => {
    const sepa: BookedLine[] = [
      { direction: 'debit', amountMinor: 3_500n, bankReference: 'SB3', customerReference: payouts.paymentInfoId, bai2TypeCode: '469', bankTransactionCode: 'PMNT/ICDT/ESCT', text: 'SEPA CREDIT TRANSFERS, 2', batch: payouts },
      { direction: 'credit', amountMinor: 1_014n, bankReference: 'SB4', customerReference: '000000000009003', bai2TypeCode: '261', bankTransactionCode: 'PMNT/ICDT/RRTN', text: 'RETURN AC04', returned: { code: 'AC04', endToEndId: '000000000009003' } },
    ];
    const text = camt053Statement({ sequence: 2, at, account: bank.sepa.iban, currency: 'eur', openingMinor: 10_000n, lines: sepa, bic: 'COBADEFFXXX' });
    expect(await iso20022SchemaErrors(text)).toEqual([]);
    expect(readInboundFile(text).items).toEqual([{ kind: 'statement', id: 'STMT-20261130-2', account: bank.sepa.iban, entries: 2, closingMinor: 7_514n, problems: [] }]);
    const [statement] = readCamt053(text);
    expect(statement!.problems).toEqual([]);
    expect(statement!.balances.map((b) => [b.type, b.amountMinor])).toEqual([['OPBD', 10_000n], ['CLBD', 7_514n]]);
    expect(camt053Lines(statement!).map((l) => [l.direction, l.amountMinor, l.references.includes(payouts.paymentInfoId) || l.references.includes('000000000009003')]))
      .toEqual([['debit', 3_500n, true], ['credit', 1_014n, true]]);
  });
});

test('a sandbox deposit asked of the bank goes out on its next run as a NACHA credit or a camt.054 credit naming the deposit reference, booked for the statement', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-bank-'));
  try {
    for (const folder of ['inbox', 'outbox']) fs.mkdirSync(path.join(root, folder));
    requestCredit(root, { rail: 'ach', amountMinor: 2_500n, reference: 'FPABCDEF123456', senderName: 'José Núñez' });
    requestCredit(root, { rail: 'sepa', amountMinor: 4_000n, reference: 'FPZYXWVU987654', senderName: 'Łukasz Żółć' });
    const run = await runSandboxBank({ ...bank, root }, now);
    expect(run.answers).toEqual([expect.stringMatching(/^CRD-\w+-\w+\.ach$/), expect.stringMatching(/^NTF-CRD-\w+-\w+\.xml$/)]);
    const [ach, sepa] = run.answers.map((n) => fs.readFileSync(path.join(root, 'outbox', n), 'utf8'));
    expect(moovValidate(ach!)[0]!.error).toBeUndefined();
    expect(readInboundFile(ach!).items).toEqual([expect.objectContaining({ kind: 'credit', rail: 'ach', amountMinor: 2_500n, reference: 'FPABCDEF123456', senderName: 'JOSE NUNEZ' })]);
    expect(await iso20022SchemaErrors(sepa!)).toEqual([]);
    expect(readInboundFile(sepa!).items).toEqual([expect.objectContaining({ kind: 'credit', rail: 'sepa', amountMinor: 4_000n, reference: 'FPZYXWVU987654', senderName: 'Lukasz Zolc' })]);
    expect(fs.readdirSync(path.join(root, 'requests'))).toEqual([]);
    writeStatements({ ...bank, root }, now);
    const statement = readBai2(fs.readFileSync(path.join(root, 'outbox', 'BAI-20261130-1.txt'), 'utf8'));
    expect(statement.groups[0]!.accounts[0]!.transactions.map((t) => [t.typeCode, t.amountMinor, t.customerReference])).toEqual([['142', 2_500n, 'FPABCDEF123456']]);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
