import { apiClient, createTenant, stack, temporalClient, testDb } from '../harness';
import { apiAndWorkerOfTheirOwn } from '../harness/own-processes';
import { approvedCustomer, internationalAccount, sandboxDeposit } from '../harness/transfers';
import { asRole, countTransferWork, prepareStatementCounting } from '../harness/work-counts';

// The work a PIX → PIX transfer asks for, in counts the code alone decides (docs/BENCHMARKS.md,
// "Transfers": the table at its top): the SQL statements and transactions its API requests and its
// worker run, counted by PostgreSQL (pg_stat_statements, for a database role only this file's API
// and worker use), and its workflow's history as Temporal keeps it. A change that adds a statement,
// a workflow task or a history event to a transfer fails here; one that removes some lowers the
// bounds below with it.
const LIMITS = { statements: 12, transactions: 0, workflowTasks: 2, activitiesAndLocalActivities: 2, historyEvents: 17 };

const ROLE = `fp_counted_${process.pid}`;
beforeAll(() => prepareStatementCounting(testDb(), ROLE));
// The sandbox's clock runs fast so that PIX's return window closes at once, as in bench:transfers.
const own = apiAndWorkerOfTheirOwn('counts', () => ({
  DATABASE_URL: asRole(stack().processEnv.DATABASE_URL, ROLE), SANDBOX_TIME_SCALE: '1000000', LOG_LEVEL: 'warn',
}));
beforeAll(() => own.startFirstWorker(), 180_000);

test('a PIX → PIX transfer: its statements, transactions, workflow tasks, activities and history events', async () => {
  const t = await createTenant();
  const customer = await approvedCustomer(t.api, 'BR');
  const account = await internationalAccount(t.api, customer.id, 'BR1800360305000010009795493C1', 'BRASBRRJ', 'BR', 'Maria Silva');
  const api = apiClient(t.secret, own.url());
  const client = await temporalClient();
  // As a client of bench:transfers does: create it, its deposit arrives; it runs to its workflow's end.
  const create = async () => {
    const created = await api.post('/v0/transfers', {
      amount: '10.00', on_behalf_of: customer.id, source: { payment_rail: 'pix', currency: 'brl' },
      destination: { payment_rail: 'pix', currency: 'brl', external_account_id: account.id },
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const deposit = async (id: string) => { await sandboxDeposit(api, id); };
  const work = await countTransferWork({ db: testDb(), role: ROLE, client, count: 3, create, deposit });
  const states = await testDb().selectFrom('transfers').select('state').where('id', 'in', work.transferIds).execute();
  expect(states.map((s) => s.state)).toEqual(['payment_processed', 'payment_processed', 'payment_processed']);
  const h = work.history;
  console.log(`per PIX → PIX transfer: ${work.statements} statements, ${work.transactions} transactions; history ${JSON.stringify(h)}\n`
    + work.byStatement.map((s) => `${s.calls.toFixed(2)} × ${s.query.slice(0, 160)}`).join('\n'));
  // Every transfer alike: the counts are the code's, not the run's.
  expect(new Set(work.histories.map((x) => x.events))).toEqual(new Set([h.events]));
  expect(work.statements).toBeLessThanOrEqual(LIMITS.statements);
  expect(work.transactions).toBeLessThanOrEqual(LIMITS.transactions);
  expect(h.workflowTasks).toBeLessThanOrEqual(LIMITS.workflowTasks);
  expect(h.activities + h.localActivities).toBeLessThanOrEqual(LIMITS.activitiesAndLocalActivities);
  expect(h.events).toBeLessThanOrEqual(LIMITS.historyEvents);
}, 240_000);
