import fs from 'node:fs';
import path from 'node:path';
import { buildPain001, readCamt054, readPain002, type ReadCredit, type SepaCredit } from '../../src/providers/bank-files/sepa-messages';
import { expectFixturesAsListed } from '../harness/fixture-checksums';
import { ISO20022_SCHEMA_FILES, iso20022SchemaErrors } from '../harness/iso20022-schemas';
import { camt054, pain002Rejections } from '../../src/sandbox-bank/sepa-answers';

// The SEPA messages both sides write, validated against the official ISO 20022 schemas
// (test/fixtures/iso20022/README.md): the platform's pain.001, the test bank's pain.002 and camt.054.

const debtor = { name: 'Finplatform Europe GmbH', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' };
const credits: SepaCredit[] = [
  { endToEndId: 'tr_0001', amountMinor: 5_400n, creditorName: 'Erika Mustermann', creditorIban: 'FR1420041010050500013M02606', creditorBic: 'PSSTFRPPXXX', remittance: 'PAYOUT tr_0001' },
  { endToEndId: 'tr_0002', amountMinor: 1n, creditorName: 'José Ñúñez & Söhne', creditorIban: 'ES9121000418450200051332', creditorBic: 'CAIXESBBXXX', remittance: 'R'.repeat(140) },
  { endToEndId: 'tr_0003', amountMinor: 99_999_999_999n, creditorName: 'N'.repeat(90), creditorIban: 'NL91ABNA0417164300', creditorBic: 'ABNANL2A', remittance: 'PAYOUT tr_0003' },
];
const pain001 = () => buildPain001(debtor, credits, { messageId: 'SEPA-20261128-A', createdAt: new Date('2026-11-28T10:00:00Z'), executionDate: '2026-11-30' }).text;
const read = (c: SepaCredit): ReadCredit => ({ ...c, currency: 'EUR', executionDate: '2026-11-30', debtorIban: debtor.iban });

test('the committed schemas are the ones the fixtures README names', () => {
  expectFixturesAsListed(path.join(__dirname, '..', 'fixtures', 'iso20022'), '.xsd');
  for (const file of ISO20022_SCHEMA_FILES) expect(fs.existsSync(file)).toBe(true);
});

test('the platform\'s pain.001.001.09 is valid: names with accents, the longest remittance, the largest amount', async () => {
  const text = pain001();
  expect(text).toContain('xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"');
  expect(await iso20022SchemaErrors(text)).toEqual([]);
});

test('the validator refuses what a bank\'s would: a BIC that is not one, a missing execution date, a currency in lower case', async () => {
  const text = pain001();
  const badBic = await iso20022SchemaErrors(text.replace('<BICFI>PSSTFRPPXXX</BICFI>', '<BICFI>PSST-FR</BICFI>'));
  expect(badBic.join('\n')).toMatch(/BICFI.*not accepted by the pattern/);
  const noDate = await iso20022SchemaErrors(text.replace(/<ReqdExctnDt>.*?<\/ReqdExctnDt>/, ''));
  expect(noDate.join('\n')).toMatch(/Dbtr.*This element is not expected.*ReqdExctnDt/);
  const lowerCase = await iso20022SchemaErrors(text.replace('Ccy="EUR"', 'Ccy="eur"'));
  expect(lowerCase.join('\n')).toMatch(/Ccy.*not accepted by the pattern/);
});

test('the test bank\'s pain.002 rejections are valid pain.002.001.11, and the platform reads them', async () => {
  const text = pain002Rejections('SEPA-20261128-A', [{ credit: read(credits[0]!), code: 'AC04' }, { credit: read(credits[1]!), code: 'AM04' }]);
  expect(await iso20022SchemaErrors(text)).toEqual([]);
  expect(readPain002(text).blocks[0]!.transactions).toEqual([
    { endToEndId: 'tr_0001', status: 'RJCT', reason: 'AC04' },
    { endToEndId: 'tr_0002', status: 'RJCT', reason: 'AM04' },
  ]);
});

test('the test bank\'s camt.054 credits and returns are valid camt.054.001.08, and the platform reads the sender from the party', async () => {
  const text = camt054(debtor.iban, 'NTF-1', [
    { kind: 'credit', ref: 'BANKREF1', amountMinor: 7_500n, reference: 'DEP7Q2X9', senderName: 'Erika Mustermann' },
    { kind: 'return', ref: 'BANKREF2', credit: read(credits[0]!), code: 'AC04' },
  ]);
  expect(await iso20022SchemaErrors(text)).toEqual([]);
  expect(readCamt054(text)).toEqual([
    { kind: 'credit', id: 'BANKREF1', amountMinor: 7_500n, reference: 'DEP7Q2X9', senderName: 'Erika Mustermann' },
    { kind: 'return', id: 'BANKREF2', endToEndId: 'tr_0001', code: 'AC04' },
  ]);
});
