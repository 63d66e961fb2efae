import fc from 'fast-check';
import { achEntryOf, achRefusal } from '../../src/bank-files/ach-window';
import { sepaCreditOf, sepaRefusal } from '../../src/bank-files/sepa-window';
import type { QueuedPayment } from '../../src/bank-files/file-window';
import { readInboundFile } from '../../src/bank-files/inbound-items';
import { achBatchKey, buildAchFile, readAchFile, type AchEntry } from '../../src/providers/bank-files/nacha';
import { isSepaText } from '../../src/providers/bank-files/rail-text';
import { buildPain001, readCamt054, readPain001, type SepaCredit } from '../../src/providers/bank-files/sepa-messages';
import { EPC_SCHEMAS, epcSchemaErrors, iso20022SchemaErrors } from '../harness/iso20022-schemas';
import { moovValidate } from '../harness/moov-ach';
import { camt054Batch, pain002Report } from '../../src/sandbox-bank/sepa-answers';
import { TestBank } from '../harness/test-bank';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The bank boundary checked by implementations this project did not write (issue 64): every NACHA
// file through moov-io/ach's reader and Validate(), every pain.001 through the European Payments
// Council's SEPA schemas; and bank answers in the shapes banks send them.

const originator = { odfiRouting: '091000019', odfiName: 'TEST ODFI BANK', companyId: '1234567890', companyName: 'FINPLATFORM', entryDescription: 'PAYMENT' };
const open = (sealed: string) => sealed;

/** A queued payment as the window reads it (the account number "sealed" as itself here). */
const queued = (over: Partial<QueuedPayment>, i: number): QueuedPayment => ({
  id: `bpay_${i}`, entry_ref: String(1000 + i).padStart(15, '0'), direction: 'credit', amount_minor: '1000', purpose: 'payout', reference: `tr_${i}`,
  type: 'us_bank_account', routing_number: '021000021', number_encrypted: '12345678', account_type: 'checking', account_name: 'Jane Doe', bic: null,
  customer_type: 'individual', first_name: 'Jane', last_name: 'Doe', business_name: null, ...over,
} as QueuedPayment);

/** What the ACH window files of `payments`: the refused set aside, the rest in batch order with ascending traces. */
async function achWindowFile(payments: QueuedPayment[]) {
  const fileable = payments.filter((p) => achRefusal(p, open) === null);
  const entries = fileable.map((p) => achEntryOf(p, open, '2026-12-01'))
    .map((e, i) => ({ e, i })).sort((a, b) => (achBatchKey(a.e) < achBatchKey(b.e) ? -1 : achBatchKey(a.e) > achBatchKey(b.e) ? 1 : a.i - b.i))
    .map(({ e }, i): AchEntry => ({ ...e, traceNumber: `09100001${String(i + 1).padStart(7, '0')}` }));
  if (entries.length === 0) return { refused: payments.length, text: null };
  const { text } = await buildAchFile(originator, entries, { createdAt: new Date('2026-11-28T15:00:00Z'), fileIdModifier: 'A' });
  return { refused: payments.length - fileable.length, text };
}

test('hostile names, routing numbers, account numbers and amounts never stop a window: what cannot go is set aside, the file of the rest passes moov-io/ach', async () => {
  const payment = fc.record({
    account_name: fc.oneof(fc.string({ maxLength: 140 }), fc.string({ unit: 'binary', maxLength: 60 }), fc.constantFrom('José Núñez', 'Łukasz Żółć', '北京公司', '\u0000\u200b', '   ')),
    routing_number: fc.oneof(fc.constantFrom('021000021', '011000015', '091000019', '021000022', '123456789'), fc.stringMatching(/^\d{0,10}$/)),
    number_encrypted: fc.oneof(fc.stringMatching(/^[0-9]{4,17}$/), fc.string({ maxLength: 25 })),
    amount_minor: fc.bigInt({ min: -5n, max: 2_000_000_000n }).map(String),
    customer_type: fc.constantFrom('individual', 'business'),
    purpose: fc.constantFrom('payout', 'refund', 'micro_deposit'),
    account_type: fc.constantFrom('checking', 'savings'),
  });
  await fc.assert(fc.asyncProperty(fc.array(payment, { minLength: 1, maxLength: 30 }), async (generated) => {
    const { refused, text } = await achWindowFile(generated.map((g, i) => queued(g as Partial<QueuedPayment>, i)));
    if (text === null) return;
    const [moov] = moovValidate(text);
    expect([moov!.error, moov!.entries! + refused]).toEqual([undefined, generated.length]);
  }), { numRuns: 40 });
}, 120_000);

test('a window with one unbuildable payment and 99 good ones files the 99, which moov-io/ach validates; the one is set aside with its code and field', async () => {
  const payments = Array.from({ length: 100 }, (_, i) => queued({ account_name: i % 7 === 0 ? 'José Núñez' : `Payee ${i}`, amount_minor: String(100 + i) }, i));
  payments[42] = queued({ number_encrypted: '1234 5678 ÄÖ' }, 42);
  expect(achRefusal(payments[42]!, open)).toEqual({ code: 'R04', reason: 'account_number must be 1 to 17 letters, digits or hyphens to go in a NACHA entry' });
  expect(achRefusal(queued({ routing_number: '021000022' }, 1), open)).toEqual({ code: 'R28', reason: 'routing_number is not a valid ABA routing number (checksum)' });
  const { refused, text } = await achWindowFile(payments);
  expect(refused).toBe(1);
  expect(moovValidate(text!)).toEqual([{ batches: 2, entries: 99, returns: 0, notifications_of_change: 0 }]);
  expect(text).toContain('JOSE NUNEZ');
  expect(text).not.toMatch(/[^\x20-\x7E\r\n]/);
});

test('1,000 payments of every kind in one file: traces ascend within each batch and never repeat, and moov-io/ach reports no error', async () => {
  const payments = Array.from({ length: 1_000 }, (_, i) => queued({
    customer_type: i % 3 === 0 ? 'business' : 'individual', purpose: ['payout', 'refund', 'micro_deposit'][i % 3]!, amount_minor: String(1 + i),
  }, 999 - i));
  const { text } = await achWindowFile(payments);
  expect(moovValidate(text!)[0]).toMatchObject({ entries: 1_000 });
  const traces = readAchFile(text!).batches.flatMap((b) => b.entries.map((e) => e.traceNumber));
  expect(new Set(traces).size).toBe(1_000);
  expect([...traces].sort()).toEqual(traces);
});

test('the platform\'s pain.001.001.09 passes both EPC SEPA credit transfer schemas, and its texts hold only the EPC basic Latin set', async () => {
  const credits: SepaCredit[] = [
    { endToEndId: '000000000000101', amountMinor: 5_400n, creditorName: 'Łukasz Żółć', creditorIban: 'FR1420041010050500013M02606', creditorBic: 'PSSTFRPPXXX', remittance: 'PAYOUT tr_0VcJ9aZ' },
    { endToEndId: '000000000000102', amountMinor: 1n, creditorName: 'José Núñez & Söhne <GmbH>', creditorIban: 'ES9121000418450200051332', creditorBic: 'CAIXESBBXXX', remittance: 'REFUND tr_x; ≠ ok' },
  ];
  const text = buildPain001({ name: 'Finplatform Europe GmbH & Co.', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' }, credits,
    { messageId: 'SCT20261128001', createdAt: new Date('2026-11-28T10:00:00Z'), executionDate: '2026-11-30' }).text;
  expect(await epcSchemaErrors(text, EPC_SCHEMAS.pain001_2023)).toEqual([]);
  expect(await epcSchemaErrors(text, EPC_SCHEMAS.pain001_2025)).toEqual([]);
  expect(text).toContain('<CreDtTm>2026-11-28T10:00:00Z</CreDtTm>');
  const read = readPain001(text);
  expect(read.credits.map((c) => [c.creditorName, c.remittance])).toEqual([['Lukasz Zolc', 'PAYOUT tr-0VcJ9aZ'], ['Jose Nunez Sohne GmbH', 'REFUND tr-x ok']]);
  for (const c of read.credits) expect([isSepaText(c.creditorName), isSepaText(c.remittance)]).toEqual([true, true]);
});

test('hostile names, IBANs, BICs, references and amounts never stop a SEPA window: what cannot go is set aside, the pain.001 of the rest passes both EPC schemas', async () => {
  const debtor = { name: 'Finplatform Europe GmbH & Co.', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' };
  let filedRuns = 0;
  // Mostly accounts as the API takes them (an IBAN and a BIC of one country, spaces and case as typed), some anything at all.
  const account = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(
      { number_encrypted: 'FR1420041010050500013M02606', bic: 'PSSTFRPPXXX' }, { number_encrypted: 'es91 2100 0418 4502 0005 1332', bic: 'caixesbb' },
      { number_encrypted: 'DE89370400440532013000', bic: 'COBA DE FF' }, { number_encrypted: 'GB29NWBK60161331926819', bic: 'NWBKGB2L' },
    ) },
    { weight: 1, arbitrary: fc.record({
      number_encrypted: fc.oneof(fc.constantFrom('DE89370400440532013001', 'FR1420041010050500013M02606'), fc.string({ maxLength: 40 })),
      bic: fc.oneof(fc.constantFrom('PSSTFRPPXXX', 'NWBKGB2L'), fc.string({ maxLength: 14 }), fc.constant(null)),
    }) },
  );
  const payment = fc.record({
    account,
    account_name: fc.oneof(fc.string({ maxLength: 140 }), fc.string({ unit: 'binary', maxLength: 60 }), fc.constantFrom('Łukasz Żółć', 'José Núñez & Söhne <GmbH>', '北京公司', '\u0000\u200b', '   ')),
    reference: fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.constant(null)),
    amount_minor: fc.oneof({ weight: 4, arbitrary: fc.bigInt({ min: 1n, max: 1_000_000_000n }) }, { weight: 1, arbitrary: fc.bigInt({ min: -5n, max: 200_000_000_000n }) }).map(String),
    purpose: fc.constantFrom('payout', 'refund', 'payout', 'deposit_return'),
  });
  await fc.assert(fc.asyncProperty(fc.array(payment, { minLength: 1, maxLength: 20 }), async (generated) => {
    const payments = generated.map(({ account: a, ...g }, i) => queued({ ...g, ...a, type: 'international_bank_account', routing_number: null } as Partial<QueuedPayment>, i));
    const fileable = payments.filter((p) => sepaRefusal(p, open) === null);
    if (fileable.length === 0) return;
    filedRuns += 1;
    const { text } = buildPain001(debtor, fileable.map((p) => sepaCreditOf(p, open)), { messageId: 'SCT20261128001', createdAt: new Date('2026-11-28T10:00:00Z'), executionDate: '2026-11-30' });
    expect(await epcSchemaErrors(text, EPC_SCHEMAS.pain001_2023)).toEqual([]);
    expect(await epcSchemaErrors(text, EPC_SCHEMAS.pain001_2025)).toEqual([]);
    expect(readPain001(text).credits.map((c) => c.endToEndId)).toEqual(fileable.map((p) => p.entry_ref));
  }), { numRuns: 30 });
  // The generators reach the file, not only the refusals.
  expect(filedRuns).toBeGreaterThan(10);
  const german = { type: 'international_bank_account', number_encrypted: 'DE89370400440532013000', bic: 'COBADEFFXXX' } as const;
  expect(sepaRefusal(queued({ ...german, amount_minor: '100000000000' }, 1), open))
    .toEqual({ code: 'AM02', reason: 'amount 1000000000.00 is not a SEPA credit transfer amount (0.01 to 999,999,999.99)' });
  expect(sepaRefusal(queued({ ...german, bic: 'PSSTFRPPXXX' }, 1), open))
    .toEqual({ code: 'RC01', reason: 'external_account_id: the SEPA message cannot carry it: country mismatch in BIC/IBAN' });
}, 120_000);

const sepaCredit = (endToEndId: string) => ({
  endToEndId, amountMinor: 1_000n, currency: 'EUR', creditorName: 'Erika Mustermann', creditorIban: 'FR1420041010050500013M02606', creditorBic: 'PSSTFRPPXXX',
  remittance: 'PAYOUT', executionDate: '2026-11-30', debtorIban: 'DE89370400440532013000',
});

test('pain.002 rejections at the group and the payment-block level name the message; transaction ones each payment; accepted and pending statuses change nothing', async () => {
  const group = pain002Report('SCT20261128001', { group: { status: 'RJCT', reason: 'DU01' }, blocks: [] });
  const block = pain002Report('SCT20261128002', { blocks: [{ id: 'SCT20261128002.0', status: 'RJCT', reason: 'AM04', transactions: [] }] });
  // The EPC's pain.002 carries rejections only; a bank that reports the other statuses writes ISO 20022's.
  const partial = pain002Report('SCT20261128003', { group: { status: 'PART' }, blocks: [{ id: 'SCT20261128003.0', status: 'PART', transactions: [
    { credit: sepaCredit('000000000000201'), status: 'RJCT', code: 'AC04' }, { credit: sepaCredit('000000000000202'), status: 'ACSC' },
  ] }] }, 'pain.002.001.11');
  const accepted = pain002Report('SCT20261128004', { group: { status: 'ACCP' }, blocks: [{ id: 'SCT20261128004.0', status: 'PDNG', transactions: [] }] }, 'pain.002.001.11');
  for (const text of [group, block]) expect(await epcSchemaErrors(text, EPC_SCHEMAS.pain002_2025)).toEqual([]);
  for (const text of [partial, accepted]) expect(await iso20022SchemaErrors(text)).toEqual([]);
  expect(readInboundFile(group).items).toEqual([{ kind: 'message_rejection', id: 'SCT20261128001', messageId: 'SCT20261128001', code: 'DU01' }]);
  expect(readInboundFile(block).items).toEqual([
    { kind: 'message_rejection', id: 'SCT20261128002:SCT20261128002.0', messageId: 'SCT20261128002', paymentInfoId: 'SCT20261128002.0', code: 'AM04' },
  ]);
  expect(readInboundFile(partial).items).toEqual([{ kind: 'rejection', id: '000000000000201', endToEndId: '000000000000201', code: 'AC04' }]);
  expect(readInboundFile(accepted).items).toEqual([]);
});

test('a camt.054 entry booking 3 credits as a batch gives 3 credits, each with its own id, amount and reference; several remittance lines are not run together', () => {
  const text = camt054Batch('DE89370400440532013000', 'NTF-7', 'BATCH-1', [
    { amountMinor: 1_000n, lines: ['FPABCDEF123456 invoice 7'], senderName: 'Anna' },
    { amountMinor: 2_500n, lines: ['Payment for order 12', 'ref FPZYXWVU987654'], senderName: 'Bernd' },
    { ref: 'TX-3', amountMinor: 333n, lines: ['FP000000000001'], senderName: 'Clara' },
  ]);
  expect(readCamt054(text)).toEqual([
    { kind: 'credit', id: 'BATCH-1:1', amountMinor: 1_000n, reference: 'FPABCDEF123456', senderName: 'Anna' },
    { kind: 'credit', id: 'BATCH-1:2', amountMinor: 2_500n, reference: 'FPZYXWVU987654', senderName: 'Bernd' },
    { kind: 'credit', id: 'TX-3', amountMinor: 333n, reference: 'FP000000000001', senderName: 'Clara' },
  ]);
});

test('return, notification-of-change and credit files with no line breaks, or with their closing blanks trimmed, are read as moov-io/ach reads them', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-'));
  try {
    for (const folder of ['inbox', 'outbox']) fs.mkdirSync(path.join(root, folder));
    const odfi = { routing: '091000019', name: 'TEST ODFI BANK', companyId: '1234567890', companyName: 'FINPLATFORM', collectionAccount: '9000012345' };
    // .14 is returned R01, .15 corrected C01 by the test bank.
    const { text } = await achWindowFile([queued({ amount_minor: '1014' }, 1), queued({ amount_minor: '2015' }, 2)]);
    fs.writeFileSync(path.join(root, 'inbox', 'ACH-20261128-A.ach'), text!);
    const bank = new TestBank(root, odfi);
    bank.takeInbox();
    await bank.writeCredits([{ amountMinor: 12_345n, reference: 'FPABCDEF123456', senderName: 'JANE DOE' }]);
    const answers = fs.readdirSync(path.join(root, 'outbox')).sort().map((n) => fs.readFileSync(path.join(root, 'outbox', n), 'utf8'));
    expect(answers).toHaveLength(3);
    for (const answer of answers) {
      const unwrapped = answer.replace(/\r?\n/g, '');
      const trimmed = answer.split(/\r?\n/).map((l) => l.trimEnd()).join('\n');
      const moov = moovValidate(answer, unwrapped, trimmed);
      expect(moov.map((m) => m.error)).toEqual([undefined, undefined, undefined]);
      const items = readInboundFile(answer).items;
      expect(items.length).toBeGreaterThan(0);
      expect(readInboundFile(unwrapped).items).toEqual(items);
      expect(readInboundFile(trimmed).items).toEqual(items);
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
