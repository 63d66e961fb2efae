import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createPublicClient, erc20Abi, getAddress, http } from 'viem';
import { createApiKey, createDeveloper } from '../../src/admin/accounts';
import { ChainKeys, sandboxTokenAddress } from '../../src/chains/evm';
import { createDb, type Db } from '../../src/db';
import { verifyLedger } from '../../src/ledger/ledger';
import { TEMPORAL_SERVICES } from '../../src/cluster/layout';
import { apiClient, stack, waitFor, type ApiClient } from '../harness';
import { TEST_MNEMONIC } from '../harness/stack';
import { approvedCustomer, internationalAccount, sandboxDeposit, waitForTransferState } from '../harness/transfers';

// The production layout (`npm run stack:cluster`, docs/DEPLOYMENT.md) for real: the Temporal server's
// services as separate processes on PostgreSQL, two API and two worker processes. Money moves on
// an instant rail and on a local EVM chain; a worker and an API process are killed outright
// mid-transfer and mid-request: nothing is lost, nothing is paid twice, the ledger verifies.

const repoRoot = path.join(__dirname, '../..');
const PORT_OFFSET = 10_000; // beside the suite's own stack and anything on the default ports
const prefix = `fp_cluster_test_${process.pid}`;
const dataDir = () => path.join(stack().logDir, 'cluster');
const clusterDir = () => path.join(dataDir(), prefix);

let cluster: ChildProcess;
let info: { apiUrls: string[]; databaseUrl: string; evmRpcUrls: Record<string, string>; temporalAddress: string };
let db: Db;
let apis: ApiClient[];

beforeAll(async () => {
  // The suite's fast clocks and lists, as the suite's own stack has them.
  const tuning = ['SANDBOX_TIME_SCALE', 'STRAY_DEPOSIT_SCAN_SECONDS', 'WEBHOOK_RETRY_BASE_MS', 'WEBHOOK_TIMEOUT_MS', 'WEBHOOK_POLL_MS', 'WEBHOOK_IDLE_POLL_MS', 'SANCTIONS_DATA_DIR'];
  const env = {
    ...process.env,
    ...Object.fromEntries(tuning.map((k) => [k, stack().processEnv[k]])),
    // A request whose API process died leaves its Idempotency-Key locked this long (production: 60 s).
    IDEMPOTENCY_LOCK_SECONDS: '5',
    DATA_DIR: dataDir(), CLUSTER_PORT_OFFSET: String(PORT_OFFSET), CLUSTER_DB_PREFIX: prefix, CHAIN_TREASURY_MNEMONIC: TEST_MNEMONIC,
  };
  fs.mkdirSync(dataDir(), { recursive: true });
  const out = fs.openSync(path.join(stack().logDir, 'cluster.log'), 'w');
  cluster = spawn(process.execPath, ['--import', 'tsx', 'src/main/cluster.ts'], { cwd: repoRoot, env, stdio: ['ignore', out, out] });
  const log = () => fs.readFileSync(path.join(stack().logDir, 'cluster.log'), 'utf8');
  await waitFor(async () => cluster.exitCode !== null || log().includes('The production layout is running'), { timeoutMs: 240_000, what: 'the cluster stack' });
  if (cluster.exitCode !== null) throw new Error(`stack:cluster exited (${cluster.exitCode}):\n${log()}`);
  info = JSON.parse(fs.readFileSync(path.join(clusterDir(), 'cluster.json'), 'utf8'));
  db = createDb(info.databaseUrl, 2);
  const developer = await createDeveloper(db, { name: 'cluster smoke test', rateLimitPerSecond: 100_000, dailyQuota: 100_000_000 });
  const { key } = await createApiKey(db, { developerId: developer.id, environment: 'sandbox', kind: 'secret', plan: 'enterprise' });
  apis = info.apiUrls.map((url) => apiClient(key, url));
}, 300_000);

afterAll(async () => {
  await db?.destroy();
  if (cluster && cluster.exitCode === null) {
    cluster.kill('SIGINT');
    await waitFor(async () => cluster.exitCode !== null, { timeoutMs: 60_000, what: 'the cluster stack to stop' }).catch(() => cluster.kill('SIGKILL'));
  }
  for (const db of [prefix, `${prefix}_temporal`, `${prefix}_temporal_visibility`]) {
    spawnSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-c', `drop database if exists ${db} with (force)`]);
  }
}, 90_000);

const pidOf = (name: string) => Number(fs.readFileSync(path.join(clusterDir(), `${name}.pid`), 'utf8').split(' ')[0]);
const alive = (pid: number) => spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).stdout.trim().replace(/^Z.*/, '') !== '';

async function expectLedgerVerifies() {
  const result = await verifyLedger(db);
  expect(result.problems).toEqual([]);
}

/** Units of the token `address` holds on the cluster's base node. */
async function usdcOnBase(address: `0x${string}`) {
  const base = createPublicClient({ transport: http(info.evmRpcUrls.base) });
  return base.readContract({ address: sandboxTokenAddress(new ChainKeys(TEST_MNEMONIC), 'base', 'usdc'), abi: erc20Abi, functionName: 'balanceOf', args: [address] });
}

/** A GB customer (faster_payments, an instant rail) with a GBP account to pay. */
async function gbParties(api: ApiClient) {
  const customer = await approvedCustomer(api, 'GB');
  const account = await internationalAccount(api, customer.id, 'GB29NWBK60161331926819', 'NWBKGB2L', 'GB', 'Olivia Bennett');
  return { customer, account };
}

const toBase = (customerId: string, amount: string) => ({
  amount, on_behalf_of: customerId, source: { payment_rail: 'faster_payments', currency: 'gbp' },
  destination: { payment_rail: 'base', currency: 'usdc', to_address: getAddress(`0x${randomBytes(20).toString('hex')}`) },
});

test('every service is its own process; a transfer on an instant rail and one onto a local EVM chain reach payment_processed, through either API', async () => {
  for (const service of TEMPORAL_SERVICES) expect(alive(pidOf(`temporal-${service.name}`))).toBe(true);
  for (const name of ['api-1', 'api-2', 'worker-1', 'worker-2']) expect(alive(pidOf(name))).toBe(true);
  const [api1, api2] = apis;
  const { customer, account } = await gbParties(api1);

  const fps = await api1.post('/v0/transfers', {
    amount: '75.00', on_behalf_of: customer.id, source: { payment_rail: 'faster_payments', currency: 'gbp' },
    destination: { payment_rail: 'faster_payments', currency: 'gbp', external_account_id: account.id },
  });
  expect(fps.status).toBe(201);
  await sandboxDeposit(api2, fps.body.id);
  expect((await waitForTransferState(api2, fps.body.id, 'payment_processed', 120_000)).receipt.final_amount).toBe('75.00');

  const body = toBase(customer.id, '50.00');
  const onChain = await api2.post('/v0/transfers', body);
  expect(onChain.status).toBe(201);
  await sandboxDeposit(api1, onChain.body.id);
  const done = await waitForTransferState(api1, onChain.body.id, 'payment_processed', 120_000);
  expect(await usdcOnBase(body.destination.to_address)).toBe(BigInt(Math.round(Number(done.receipt.final_amount) * 1e6)));
  await expectLedgerVerifies();
});

test('a worker killed outright mid-transfer: the other finishes every transfer, each paid once; the killed worker is started again', async () => {
  const api = apis[0];
  const { customer } = await gbParties(api);
  const bodies = Array.from({ length: 6 }, () => toBase(customer.id, '20.00'));
  const transfers = await Promise.all(bodies.map(async (b) => (await api.post('/v0/transfers', b)).body));
  const killed = pidOf('worker-1');
  await Promise.all(transfers.map((t) => sandboxDeposit(api, t.id)));
  process.kill(killed, 'SIGKILL');

  for (const [i, t] of transfers.entries()) {
    const done = await waitForTransferState(api, t.id, 'payment_processed', 180_000);
    expect(await usdcOnBase(bodies[i].destination.to_address)).toBe(BigInt(Math.round(Number(done.receipt.final_amount) * 1e6)));
    const payouts = (await api.get(`/v0/payments?transfer_id=${t.id}&kind=payout`)).body.data;
    expect(payouts).toHaveLength(1);
  }
  await waitFor(async () => alive(pidOf('worker-1')) && pidOf('worker-1') !== killed, { timeoutMs: 30_000, what: 'worker-1 started again' });
  await expectLedgerVerifies();
});

test('an API process killed outright mid-request: the same request with its Idempotency-Key on the other API makes one transfer, which completes', async () => {
  const [api1, api2] = apis;
  const { customer } = await gbParties(api2);
  const body = toBase(customer.id, '30.00');
  const idempotencyKey = randomUUID();
  const killed = pidOf('api-1');
  const first = api1.post('/v0/transfers', body, { idempotencyKey }).then((r) => r.status, () => 'connection lost');
  await new Promise((r) => setTimeout(r, 15));
  process.kill(killed, 'SIGKILL');
  const firstOutcome = await first;
  expect([201, 'connection lost']).toContain(firstOutcome);

  // Until the dead request's lock goes stale the key is in use (409, as for a request still running);
  // then the other API replays the stored reply, or runs the request if the first changed nothing.
  const retried = await waitFor(async () => {
    const res = await api2.post('/v0/transfers', body, { idempotencyKey });
    if (res.status === 409) expect(res.body.error.code).toBe('idempotency_key_in_use');
    return res.status === 409 ? undefined : res;
  }, { timeoutMs: 30_000, intervalMs: 1000, what: 'the retried request' });
  expect([200, 201]).toContain(retried.status);
  const listed = (await api2.get(`/v0/transfers?on_behalf_of=${customer.id}`)).body.data;
  expect(listed.map((t: { id: string }) => t.id)).toEqual([retried.body.id]);
  await sandboxDeposit(api2, retried.body.id);
  const done = await waitForTransferState(api2, retried.body.id, 'payment_processed', 120_000);
  expect(await usdcOnBase(body.destination.to_address)).toBe(BigInt(Math.round(Number(done.receipt.final_amount) * 1e6)));

  await waitFor(async () => alive(pidOf('api-1')) && pidOf('api-1') !== killed
    && (await fetch(`${info.apiUrls[0]}/readyz`).then((r) => r.ok, () => false)), { timeoutMs: 150_000, what: 'api-1 started again' });
  await expectLedgerVerifies();
}, 300_000);

test('Ctrl-C stops every process of the layout, the platform first and the servers last', async () => {
  const names = ['api-1', 'api-2', 'worker-1', 'worker-2', 'temporal-ui', ...TEMPORAL_SERVICES.map((s) => `temporal-${s.name}`)];
  const pids = names.map(pidOf);
  expect(pids.every(alive)).toBe(true);
  cluster.kill('SIGINT');
  await waitFor(async () => cluster.exitCode !== null, { timeoutMs: 60_000, what: 'the cluster stack to stop' });
  expect(cluster.exitCode).toBe(0);
  expect(pids.filter(alive)).toEqual([]);
  const log = fs.readFileSync(path.join(stack().logDir, 'cluster.log'), 'utf8');
  expect(log).not.toMatch(/stop failed/);
});
