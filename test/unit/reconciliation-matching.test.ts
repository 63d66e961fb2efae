import fc from 'fast-check';
import { matchStatement, type ExpectedLine, type StatementLine, type Tolerances } from '../../src/reconciliation/matching';

// The statement matcher (src/reconciliation/matching.ts): references first, then amount, date and
// counterparty within the tolerances; each side used once; what is left over named.

const strict: Tolerances = { shortfallMinor: 0n, days: 2 };
const expected = (id: string, over: Partial<ExpectedLine> = {}): ExpectedLine => ({ id, direction: 'debit', amountMinor: 10_000n, date: '2026-11-27', references: [id], counterparty: '', ...over });
const line = (id: string, over: Partial<StatementLine> = {}): StatementLine => ({ id, direction: 'debit', amountMinor: 10_000n, date: '2026-11-27', references: [], counterparty: '', ...over });

test('a day of the books on the statement: every line matched by its reference, no exception', () => {
  const books = [expected('ACH-20261127-A', { amountMinor: 1_234_56n }), expected('SCT20261127001', { amountMinor: 98_76n }), expected('dep_1', { direction: 'credit', amountMinor: 500_00n })];
  const statement = [
    line('bai:1', { amountMinor: 1_234_56n, references: ['ach-20261127-a'] }), line('camt:7', { amountMinor: 98_76n, references: ['X', 'SCT20261127001'] }),
    line('bai:2', { direction: 'credit', amountMinor: 500_00n, references: ['DEP_1'] }),
  ];
  const { matches, exceptions } = matchStatement(statement, books, strict);
  expect(exceptions).toEqual([]);
  expect(matches.map((m) => [m.lineId, m.expectedId, m.by, m.differenceMinor])).toEqual([
    ['bai:1', 'ACH-20261127-A', 'reference', 0n], ['bai:2', 'dep_1', 'reference', 0n], ['camt:7', 'SCT20261127001', 'reference', 0n],
  ]);
});

test('a payout dropped from the statement, a credit nobody expected, a wire 15.00 short: exactly three exceptions of the right types', () => {
  const books = [expected('payout-1'), expected('payout-2'), expected('wire-9', { direction: 'credit', amountMinor: 2_000_00n })];
  const statement = [line('s1', { references: ['payout-1'] }), line('s2', { direction: 'credit', amountMinor: 77_00n, references: ['NOBODY'] }), line('s3', { direction: 'credit', amountMinor: 1_985_00n, references: ['wire-9'] })];
  const { matches, exceptions } = matchStatement(statement, books, strict);
  expect(matches.map((m) => m.expectedId)).toEqual(['payout-1']);
  expect(exceptions.map((e) => e.type).sort()).toEqual(['amount_mismatch', 'missing_from_statement', 'unexpected_on_statement']);
  expect(exceptions.find((e) => e.type === 'amount_mismatch')).toMatchObject({ differenceMinor: 15_00n, line: { id: 's3' }, expected: { id: 'wire-9' } });
  expect(exceptions.find((e) => e.type === 'missing_from_statement')).toMatchObject({ expected: { id: 'payout-2' } });
});

test("a correspondent's fee within the configured tolerance matches, its difference kept; a debit always matches exactly", () => {
  const books = [expected('wire-9', { direction: 'credit', amountMinor: 2_000_00n }), expected('payout-1')];
  const statement = [line('s3', { direction: 'credit', amountMinor: 1_985_00n, references: ['wire-9'] }), line('s1', { amountMinor: 9_999n, references: ['payout-1'] })];
  const { matches, exceptions } = matchStatement(statement, books, { shortfallMinor: 20_00n, days: 2 });
  expect(matches).toEqual([{ lineId: 's3', expectedId: 'wire-9', by: 'reference', differenceMinor: 15_00n }]);
  expect(exceptions).toEqual([expect.objectContaining({ type: 'amount_mismatch', differenceMinor: 1n })]);
});

test('without a reference: same direction and counterparty, the amount, the nearest date within the tolerance; too far is no match', () => {
  const books = [expected('a', { references: [], date: '2026-11-20', counterparty: 'ACME' }), expected('b', { references: [], date: '2026-11-26', counterparty: 'Acme ' }), expected('c', { references: [], date: '2026-11-27', counterparty: 'Other' })];
  const { matches, exceptions } = matchStatement([line('s', { counterparty: 'acme', date: '2026-11-27' })], books, strict);
  expect(matches).toEqual([{ lineId: 's', expectedId: 'b', by: 'amount_and_date', differenceMinor: 0n }]);
  expect(exceptions.map((e) => e.type === 'missing_from_statement' && e.expected.id)).toEqual(['a', 'c']);
});

test('property: a statement of exactly the books, shuffled, matches whole; one line taken out and one added give exactly those two exceptions', () => {
  const entry = fc.record({
    direction: fc.constantFrom('credit' as const, 'debit' as const), amountMinor: fc.bigInt({ min: 1n, max: 10_000_000n }),
    day: fc.integer({ min: 1, max: 28 }), referenced: fc.boolean(), counterparty: fc.constantFrom('', 'ACME', 'Jane Doe'),
  });
  fc.assert(fc.property(fc.array(entry, { minLength: 1, maxLength: 40 }), fc.nat(), (drawn, seed) => {
    const books = drawn.map((d, i): ExpectedLine => ({
      id: `e${i}`, direction: d.direction, amountMinor: d.amountMinor, date: `2026-11-${String(d.day).padStart(2, '0')}`, references: d.referenced ? [`REF${i}`] : [], counterparty: d.counterparty,
    }));
    const statement = books.map((b, i): StatementLine => ({ id: `l${(i * 7919 + seed) % 100_003}-${i}`, direction: b.direction, amountMinor: b.amountMinor, date: b.date, references: b.references.map((r) => r.toLowerCase()), counterparty: b.counterparty }));
    const whole = matchStatement([...statement].reverse(), books, strict);
    expect([whole.matches.length, whole.exceptions]).toEqual([books.length, []]);
    const dropped = seed % statement.length;
    const extra: StatementLine = { id: 'extra', direction: 'credit', amountMinor: 10_000_001n, date: '2026-11-15', references: ['NOBODY'], counterparty: 'Stranger' };
    const changed = matchStatement([...statement.filter((_, i) => i !== dropped), extra], books, strict);
    expect(changed.exceptions.map((e) => e.type).sort()).toEqual(['missing_from_statement', 'unexpected_on_statement']);
    expect(changed.matches.length).toBe(books.length - 1);
  }), { numRuns: 200 });
});
