import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import Redis from 'ioredis';
import { apiClient, createTenant, documents, individual, runCli, stack, testDb, waitFor, waitForKycStatus } from '../harness';
import { TcpProxy } from '../harness/tcp-proxy';
import { approvedCustomer, chainUrl } from '../harness/transfers';
import { freePort, startProcess, waitUntilReady } from '../harness/stack';

const root = path.join(__dirname, '../..');

/**
 * Runs a TypeScript entry point in a process of its own, collecting what it prints (`output`: both
 * streams as they came). `exited` resolves once the process has ended and its streams are read.
 */
function spawnTsx(entry: string, args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], { env });
  const proc = { child, stdout: '', stderr: '', output: '', exited: new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code))) };
  child.stdout.on('data', (d) => {
    proc.stdout += d;
    proc.output += d;
  });
  child.stderr.on('data', (d) => {
    proc.stderr += d;
    proc.output += d;
  });
  return proc;
}

describe('admin CLI', () => {
  test('creates a developer and a key that works; revokes it', async () => {
    const dev = runCli(['developers', 'create', '--name', 'CLI test']);
    expect(dev.status).toBe(0);
    const developerId = dev.stdout.trim();
    expect(developerId).toMatch(/^dev_/);
    const created = runCli(['keys', 'create', '--developer', developerId, '--environment', 'sandbox', '--kind', 'secret', '--permissions', 'customers:read']);
    expect(created.status).toBe(0);
    const lines = created.stdout.trim().split('\n');
    const key = lines[lines.length - 1];
    expect(key).toMatch(/^sk_test_[0-9A-Za-z]{40}$/);
    const keyId = /key id: (key_\w+)/.exec(created.stdout)![1];
    const api = apiClient(key);
    expect((await api.get('/v0/customers')).status).toBe(200);
    expect((await api.post('/v0/customers', individual())).status).toBe(403);
    expect(runCli(['keys', 'revoke', keyId]).status).toBe(0);
    await waitFor(async () => (await api.get('/v0/customers')).status === 401, { timeoutMs: 10_000, what: 'revocation' });
  });

  test('refuses bad arguments with a clear message', async () => {
    const bad = runCli(['keys', 'create', '--developer', 'dev_x', '--environment', 'staging', '--kind', 'secret']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('--environment must be sandbox or production');
    const perm = runCli(['keys', 'create', '--developer', 'dev_x', '--environment', 'sandbox', '--kind', 'secret', '--permissions', 'everything']);
    expect(perm.stderr).toMatch(/unknown developer|unknown permission/);
  });

  test('the production operator path decides a manual review', async () => {
    const t = await createTenant();
    const c = (await t.api.post('/v0/customers', individual({ email: `kyc_manual.cli.${Date.now()}@example.com` }))).body;
    await t.api.post(`/v0/customers/${c.id}/kyc`, documents());
    await waitForKycStatus(t.api, c.id, 'manual_review');
    const decided = runCli(['kyc', 'decide', c.id, '--decision', 'approve', '--operator', 'alice']);
    expect(decided.stderr).toBe('');
    expect(decided.stdout).toContain(`${c.id}: kyc_status approved`);
    const approved = await waitForKycStatus(t.api, c.id, 'approved');
    // Who decided is kept for audit in the database, and never in the API's answer.
    const row = await testDb().selectFrom('customers').select('kyc_decision').where('id', '=', c.id).executeTakeFirstOrThrow();
    expect(row.kyc_decision).toEqual({ decision: 'approve', reasons: null, operator: 'alice', decided_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(JSON.stringify(approved)).not.toContain('alice');
  });
});

describe('dependencies down', () => {
  let api: ChildProcess;
  let pgProxy: TcpProxy;
  let temporalProxy: TcpProxy;
  let chainProxy: TcpProxy;
  let redisProxy: TcpProxy;
  let url: string;

  beforeAll(async () => {
    const s = stack();
    const db = new URL(s.databaseUrl);
    pgProxy = new TcpProxy({ host: db.hostname, port: Number(db.port || 5432) });
    await pgProxy.start();
    const [tHost, tPort] = s.temporalAddress.split(':');
    temporalProxy = new TcpProxy({ host: tHost, port: Number(tPort) });
    await temporalProxy.start();
    const base = new URL(chainUrl('base'));
    chainProxy = new TcpProxy({ host: base.hostname, port: Number(base.port) });
    await chainProxy.start();
    const redis = new URL(s.redisUrl);
    redisProxy = new TcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
    await redisProxy.start();
    redis.port = String(redisProxy.port);
    db.port = String(pgProxy.port);
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    api = startProcess('api-dependencies', path.join(root, 'src/main/api.ts'), {
      ...s.processEnv, PORT: String(port), DATABASE_URL: db.toString(), TEMPORAL_ADDRESS: `127.0.0.1:${temporalProxy.port}`, REDIS_URL: redis.toString(),
      EVM_RPC_URLS: s.processEnv.EVM_RPC_URLS.replace(/base=[^,]+/, `base=http://127.0.0.1:${chainProxy.port}`),
    }, s.logDir);
    await waitUntilReady(`${url}/readyz`, api, 60_000);
  });

  afterAll(async () => {
    api?.kill('SIGTERM');
    await pgProxy?.cut();
    await temporalProxy?.cut();
    await chainProxy?.cut();
    await redisProxy?.cut();
  });

  const post = (key: string, body: unknown) =>
    fetch(`${url}/v0/customers`, { method: 'POST', headers: { 'Api-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  test('Temporal down: readiness 503; a customer is still created (PostgreSQL only); a transfer answers 503 having done nothing', async () => {
    const t = await createTenant();
    const customer = await approvedCustomer(t.api, 'US');
    const transfer = () => fetch(`${url}/v0/transfers`, {
      method: 'POST', headers: { 'Api-Key': t.secret, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        amount: '10.00', on_behalf_of: customer.id, source: { payment_rail: 'ach', currency: 'usd' },
        destination: { payment_rail: 'base', currency: 'usdc', to_address: '0x8ba1f109551bD432803012645Ac136ddd64DBA72' },
      }),
    });
    await temporalProxy.cut();
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect((await ready.json()).status).toMatchObject({ database: 'ok', temporal: 'unavailable', sanctions: 'ok' });
    const body = individual();
    expect((await post(t.secret, body)).status).toBe(201);
    const res = await transfer();
    expect(res.status).toBe(503);
    expect((await res.json()).error.code).toBe('service_unavailable');
    expect(await testDb().selectFrom('transfers').select('id').where('customer_id', '=', customer.id).execute()).toEqual([]);
    await temporalProxy.restore();
    await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, { timeoutMs: 30_000, what: 'Temporal back' });
    await waitFor(async () => (await transfer()).status === 201, { timeoutMs: 30_000, what: 'a transfer after recovery' });
  });

  test('a chain node down: a transfer paying out on it answers 503 having done nothing; fiat transfers go on', async () => {
    const t = await createTenant();
    const customer = await approvedCustomer(t.api, 'US');
    const send = (destination: Record<string, unknown>, amount = '10.00') => fetch(`${url}/v0/transfers`, {
      method: 'POST', headers: { 'Api-Key': t.secret, 'Content-Type': 'application/json' },
      body: JSON.stringify({ amount, on_behalf_of: customer.id, source: { payment_rail: 'ach', currency: 'usd' }, destination }),
    });
    const toBase = { payment_rail: 'base', currency: 'usdc', to_address: '0x8ba1f109551bD432803012645Ac136ddd64DBA72' };
    expect((await send(toBase)).status).toBe(201);
    await chainProxy.cut();
    const res = await send(toBase);
    expect(res.status).toBe(503);
    expect((await res.json()).error.code).toBe('service_unavailable');
    expect(await testDb().selectFrom('transfers').select('id').where('customer_id', '=', customer.id).execute()).toHaveLength(1);
    const intl = (await t.api.post('/v0/external-accounts', {
      customer_id: customer.id, type: 'international_bank_account', account_name: 'Erika Mustermann', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX', bank_name: 'Bank', bank_country: 'DE',
    })).body;
    // Enough to survive the SWIFT fees (docs/TRANSFERS.md, "SWIFT charges").
    expect((await send({ payment_rail: 'swift', currency: 'usd', external_account_id: intl.id }, '100.00')).status).toBe(201);
    await chainProxy.restore();
    await waitFor(async () => (await send(toBase)).status === 201, { timeoutMs: 30_000, what: 'chain back' });
  });

  test('PostgreSQL down: readiness 503 and requests 503', async () => {
    const t = await createTenant();
    await pgProxy.cut();
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect((await ready.json()).status.database).toBe('unavailable');
    const res = await fetch(`${url}/v0/customers`, { headers: { 'Api-Key': t.secret } });
    expect(res.status).toBe(503);
    expect((await res.json()).error.code).toBe('service_unavailable');
    await pgProxy.restore();
    await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, { timeoutMs: 30_000, what: 'PostgreSQL back' });
  });

  test('Redis down: the rate limiter fails open (requests served without limit headers), and recovers', async () => {
    const t = await createTenant();
    const list = () => fetch(`${url}/v0/customers?limit=1`, { headers: { 'Api-Key': t.secret } });
    expect((await list()).headers.get('ratelimit-limit')).toMatch(/^\d+$/);
    await redisProxy.cut();
    const during = await list();
    expect(during.status).toBe(200);
    expect(during.headers.get('ratelimit-limit')).toBeNull();
    await redisProxy.restore();
    await waitFor(async () => (await list()).headers.get('ratelimit-limit') !== null, { timeoutMs: 30_000, what: 'the limiter back on Redis' });
  });

  test('rate limits hold across API processes (shared Redis)', async () => {
    const t = await createTenant();
    const { key } = await t.key({ plan: 'sandbox' });
    const hit = (base: string) => fetch(`${base}/v0/customers?limit=1`, { headers: { 'Api-Key': key } });
    // A burst counts only when all of it was answered inside the one-second window it started in (on
    // a loaded machine it may spill into the next, whose allowance is fresh): such a burst is tried again.
    let ok: number | undefined;
    for (let attempt = 0; attempt < 5 && ok === undefined; attempt++) {
      await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000)));
      const windowEnds = Date.now() - (Date.now() % 1000) + 1000;
      const replies = await Promise.all([
        ...Array.from({ length: 12 }, () => hit(stack().apiUrl)),
        ...Array.from({ length: 12 }, () => hit(url)),
      ]);
      if (Date.now() < windowEnds) ok = replies.filter((r) => r.status === 200).length;
    }
    if (ok === undefined) throw new Error('no burst of 24 requests was answered within one second in 5 tries: the machine is too loaded to measure');
    // Separate in-process limits would let 20 through (10 per process).
    expect(ok).toBeGreaterThanOrEqual(10);
    expect(ok).toBeLessThanOrEqual(12);
  });

  test('rate-limit counters in Redis expire: a second window after 2 s, a day quota after 25 h', async () => {
    const t = await createTenant();
    const { id, key } = await t.key({ plan: 'sandbox' });
    expect((await fetch(`${url}/v0/customers?limit=1`, { headers: { 'Api-Key': key } })).status).toBe(200);
    const redis = new Redis(stack().redisUrl);
    try {
      const [secondKey] = await redis.keys(`rl:s:${id}:*`);
      const [dayKey] = await redis.keys(`rl:d:${id}:*`);
      expect(Number(await redis.get(secondKey!))).toBe(1);
      expect(Number(await redis.get(dayKey!))).toBe(1);
      const secondTtl = await redis.ttl(secondKey!);
      expect(secondTtl).toBeGreaterThan(0);
      expect(secondTtl).toBeLessThanOrEqual(2);
      expect(await redis.ttl(dayKey!)).toBeGreaterThan(89_000);
    } finally {
      redis.disconnect();
    }
  });
});

describe('shutdown', () => {
  // Ctrl-C reaches a process twice when a parent (npm, tsx) relays the terminal's SIGINT: that must
  // still be one clean shutdown. Only a later second Ctrl-C forces the exit.
  const slowStopProcess = (env: { START_MS?: string; STOP_MS: string }) =>
    spawnTsx(path.join(__dirname, '../fixtures/slow-stop-process.ts'), [], { ...process.env, ...env });

  async function signalTwice(opts: { gapMs: number; stopMs: string }) {
    const proc = slowStopProcess({ STOP_MS: opts.stopMs });
    await waitFor(async () => proc.output.includes('ready'), { timeoutMs: 30_000, what: 'process ready' });
    proc.child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, opts.gapMs));
    proc.child.kill('SIGINT');
    return { code: await proc.exited, output: proc.output };
  }

  /** Sends SIGINT the moment the process prints `line`, without waiting for the next poll. */
  async function signalOn(proc: ReturnType<typeof slowStopProcess>, line: string) {
    await new Promise<void>((resolve) => proc.child.stdout.on('data', () => {
      if (proc.output.includes(line)) resolve();
    }));
    proc.child.kill('SIGINT');
  }

  test('two SIGINTs 100 ms apart: one clean shutdown, exit code 0', async () => {
    const { code, output } = await signalTwice({ gapMs: 100, stopMs: '600' });
    expect(code).toBe(0);
    expect(output).toContain('stopped');
    expect(output).not.toContain('forced exit');
  });

  test('a SIGINT the moment a process says it is up, or while it still starts, is a clean stop once started', async () => {
    // The handlers listen from before the start: neither signal meets the default (kill, no exit code).
    for (let i = 0; i < 10; i++) {
      const proc = slowStopProcess({ STOP_MS: '0' });
      await signalOn(proc, 'ready');
      expect({ code: await proc.exited, output: proc.output }).toEqual({ code: 0, output: expect.stringContaining('stopped') });
    }
    const starting = slowStopProcess({ START_MS: '1500', STOP_MS: '0' });
    await signalOn(starting, 'starting');
    expect(await starting.exited).toBe(0);
    expect(starting.output).toMatch(/starting\n[^]*slow-stop: SIGINT received, shutting down…\n[^]*ready\n[^]*stopped\n/);
  });

  test('a second SIGINT 2.5 s later, while the stop still runs, forces the exit', async () => {
    const { code, output } = await signalTwice({ gapMs: 2500, stopMs: 'never' });
    expect(code).toBe(130);
    expect(output).toContain('forced exit on second SIGINT');
  });

  test('the API stopped with a request in flight answers it, then closes its keep-alive connection and exits at once', async () => {
    const t = await createTenant();
    const port = await freePort();
    const api = startProcess('api-shutdown', path.join(root, 'src/main/api.ts'), { ...stack().processEnv, PORT: String(port) }, stack().logDir);
    const exited = new Promise<number | null>((resolve) => api.once('exit', (code) => resolve(code)));
    await waitUntilReady(`http://127.0.0.1:${port}/readyz`, api, 60_000);
    // A client on a keep-alive connection, its request body half sent when SIGTERM arrives.
    const body = JSON.stringify(individual());
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (d) => { answer += d; });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(`POST /v0/customers HTTP/1.1\r\nHost: 127.0.0.1\r\nApi-Key: ${t.secret}\r\nContent-Type: application/json\r\n`
      + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: keep-alive\r\n\r\n${body.slice(0, 20)}`);
    await new Promise((r) => setTimeout(r, 300));
    api.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    socket.write(body.slice(20));
    // Answered in full, telling the client not to send more on this connection, which the server then
    // closes itself (the keep-alive timeout is 65 s).
    await closed;
    const headEnd = answer.indexOf('\r\n\r\n');
    const [head, rest] = [answer.slice(0, headEnd), answer.slice(headEnd + 4)];
    expect(head).toMatch(/^HTTP\/1\.1 201 Created\r\n/);
    expect(head).toMatch(/\r\nConnection: close(\r\n|$)/i);
    const created = JSON.parse(rest);
    expect(created).toMatchObject({ object: 'customer', email: JSON.parse(body).email });
    expect(await exited).toBe(0);
  }, 120_000); // its API starting takes up to a minute on a loaded machine
});

describe('worker start', () => {
  // The worker process, and `npm start`'s, which would otherwise start its servers first.
  test.each([
    ['the worker', 'workers/main.ts', 'worker started'],
    ['npm start', 'src/main/dev.ts', 'Financial platform is running'],
  ])('a WORKFLOW_BUNDLE_PATH with no file stops %s at start, before anything else, saying how to build it', async (_name, entry, started) => {
    const missing = path.join(stack().logDir, 'no-such-workflow-bundle.js');
    const dataDir = path.join(stack().logDir, `bundle-missing-data-${process.pid}`);
    const proc = spawnTsx(path.join(root, entry), [],
      { ...stack().processEnv, TEMPORAL_TASK_QUEUE: `bundle-missing-${process.pid}`, WORKFLOW_BUNDLE_PATH: missing, DATA_DIR: dataDir });
    expect(await proc.exited).not.toBe(0);
    expect(proc.output).toContain(`WORKFLOW_BUNDLE_PATH: no workflow bundle at ${missing} (build it with \`npm run build:workflows -- ${missing}\`)`);
    expect(proc.output).not.toContain(started);
    expect(proc.output).not.toContain('sanctions lists loaded');
    expect(fs.existsSync(dataDir)).toBe(false);
  });

  test('a SIGHUP while the worker loads its lists reloads them once loaded, instead of ending the worker', async () => {
    const proc = spawnTsx(path.join(root, 'workers/main.ts'), [], { ...stack().processEnv, TEMPORAL_TASK_QUEUE: `sighup-${process.pid}` });
    await new Promise<void>((resolve) => proc.child.stdout.on('data', () => {
      if (proc.output.includes('loading sanctions lists')) resolve();
    }));
    proc.child.kill('SIGHUP');
    await waitFor(async () => proc.output.includes('worker started') && proc.output.split('sanctions lists loaded').length === 3,
      { timeoutMs: 60_000, what: 'the worker up, its lists loaded twice' });
    expect(proc.output.split('loading sanctions lists').length).toBe(3);
    proc.child.kill('SIGINT');
    expect(await proc.exited).toBe(0);
  });
});
