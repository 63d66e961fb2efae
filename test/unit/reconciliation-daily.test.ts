import { breaksOf, reportJson, ReconciliationReportSchema, type AccountDay } from '../../src/reconciliation/daily';

// The daily reconciliation's report (src/reconciliation/daily.ts): which days are breaks, and the
// report as the API and the reconciliation.break event show it.

const day = (over: Partial<AccountDay>): AccountDay =>
  ({ account: '9000012345', rail: 'ach', statements: ['bfile_1'], matched: 12, exceptionsOpened: 0, exceptionsOpen: 0, statementMissing: false, ...over });

test('a day whose statements came and opened no exception is no break, whatever is still open from earlier days', () => {
  expect(breaksOf([day({ exceptionsOpen: 4 }), day({ account: 'DE89370400440532013000', rail: 'sepa' })])).toEqual([]);
});

test('a statement that never came and exceptions opened are each a break, named with their account', () => {
  expect(breaksOf([
    day({ statements: [], matched: 0, statementMissing: true }),
    day({ account: 'DE89370400440532013000', rail: 'sepa', exceptionsOpened: 2, exceptionsOpen: 2 }),
  ])).toEqual(['statement_missing:9000012345', 'exceptions:DE89370400440532013000']);
});

test('a chain whose payouts opened exceptions is a break, named with its chain; a chain checked clean is none', () => {
  expect(breaksOf([day({})], [{ chain: 'base', checked: 3, exceptionsOpened: 0 }, { chain: 'solana', checked: 2, exceptionsOpened: 1 }])).toEqual(['chain_exceptions:solana']);
});

test('the report as shown by the API is what its schema documents, a report never changing after its run', () => {
  const shown = reportJson({
    id: 'rday_1', environment: 'production', since: '2026-11-28T13:00:00.000Z', ranAt: '2026-11-29T13:00:00.000Z',
    accounts: [day({ statementMissing: true, statements: [] })], chains: [{ chain: 'base', checked: 2, exceptionsOpened: 0 }], breaks: ['statement_missing:9000012345'],
  });
  expect(ReconciliationReportSchema.parse(shown)).toEqual(shown);
  expect([shown.created_at, shown.updated_at, shown.ran_at]).toEqual(['2026-11-29T13:00:00.000Z', '2026-11-29T13:00:00.000Z', '2026-11-29T13:00:00.000Z']);
  expect(shown.accounts[0]).toMatchObject({ statement_missing: true, exceptions_opened: 0 });
  expect(shown.chains).toEqual([{ chain: 'base', checked: 2, exceptions_opened: 0 }]);
});

test('a closing balance the books do not explain is a break, named with its account; one that agrees is none', () => {
  expect(breaksOf([day({ balanceDifferenceMinor: '0' }), day({ account: 'DE89370400440532013000', rail: 'sepa', balanceDifferenceMinor: '-1000' }), day({ account: '1', balanceDifferenceMinor: null })]))
    .toEqual(['closing_balance:DE89370400440532013000']);
  const shown = reportJson({
    id: 'rday_2', environment: 'production', since: '2026-11-28T13:00:00.000Z', ranAt: '2026-11-29T13:00:00.000Z',
    accounts: [day({ balanceDifferenceMinor: '-1000' }), day({ account: '2', balanceDifferenceMinor: null })], chains: [], breaks: ['closing_balance:9000012345'],
  });
  expect(ReconciliationReportSchema.parse(shown)).toEqual(shown);
  expect(shown.accounts.map((a) => a.closing_balance_difference)).toEqual(['-10.00', null]);
});
