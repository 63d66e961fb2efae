import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { generateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english';
import { createPublicClient, createTestClient, createWalletClient, erc20Abi, getAddress, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ChainKeys, STABLECOIN_ABI, sandboxTokenAddress } from '../../src/chains/evm';
import { EVM_CHAINS } from '../../src/domain/rails';
import { apiClient, documents, individual, waitFor, waitForKycStatus } from '../harness';
import { freePort, freePortRange } from '../harness/stack';
import { alive, signalGroup, signalPid, startNpm, untilRunning } from '../harness/npm-start';
import { approvedCustomer, internationalAccount, sandboxDeposit, waitForTransferState } from '../harness/transfers';

// `npm start` as README.md tells a user to run it: the embedded stack (PGlite, the Temporal CLI dev
// server, anvil nodes, worker and API in one process), started in its own process group as a
// terminal would, stopped with Ctrl-C (SIGINT to the whole group). The rest of the suite runs on
// PostgreSQL; here transfers also run once on the embedded database.

const repoRoot = path.join(__dirname, '../..');
const logDir = path.join(repoRoot, 'test-logs');
let dataDir: string;
let env: NodeJS.ProcessEnv;
let apiUrl: string;
// The platform's own chain keys, not anvil's well-known ones: a secret that no command line may show.
const treasuryMnemonic = generateMnemonic(wordlist);
const started: ChildProcess[] = [];
/** A webhook endpoint that never answers. */
const hanging = createServer(() => undefined);
/** Four looks a second at most: the default sandbox key allows 10 requests a second (a 429 seen in CI when waits polled faster). */
const POLL_MS = 250;

beforeAll(async () => {
  fs.mkdirSync(logDir, { recursive: true });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fp-embedded-'));
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  // Nothing from the shared test stack: no DATABASE_URL, TEMPORAL_ADDRESS or EVM_RPC_URLS.
  env = {
    PATH: process.env.PATH, HOME: process.env.HOME, TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH,
    DATA_DIR: dataDir, PORT: String(port), PGLITE_PORT: String(await freePort()), TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()), ANVIL_BASE_PORT: String(await freePortRange(EVM_CHAINS.length)),
    SOLANA_NODE_PORT: String(await freePort()), BITCOIN_NODE_PORT: String(await freePort()),
    CHAIN_TREASURY_MNEMONIC: treasuryMnemonic,
    STRAY_DEPOSIT_SCAN_SECONDS: '2',
  };
});

afterAll(() => {
  hanging.closeAllConnections();
  hanging.close();
  // Whatever a failed assertion left running.
  for (const child of started) signalGroup(child, 'SIGKILL');
  for (const pid of serverPids()) signalPid(pid, 'SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

function npmStart(name: string) {
  const run = startNpm(env, name);
  started.push(run.child);
  return run;
}

/** The pids of the Temporal dev server, the anvil nodes, the Solana and the Bitcoin node, from the pid files npm start keeps. */
function serverPids(): number[] {
  const files = [path.join(dataDir, 'temporal.pid'),
    ...(fs.existsSync(path.join(dataDir, 'chains')) ? fs.readdirSync(path.join(dataDir, 'chains')).filter((f) => f.endsWith('.pid')).map((f) => path.join(dataDir, 'chains', f)) : [])];
  return files.filter((f) => fs.existsSync(f)).map((f) => Number(fs.readFileSync(f, 'utf8').split(' ')[0]));
}

/** Ctrl-C in the terminal: SIGINT to the whole process group, then everything (servers included) stops. */
async function stopWithCtrlC(run: ReturnType<typeof npmStart>) {
  signalGroup(run.child, 'SIGINT');
  await waitFor(async () => !alive(-run.child.pid!) && serverPids().length === 0, { timeoutMs: 30_000, what: 'every process to stop' }).catch((err) => {
    // What is left, to tell a hung stop from a server left behind.
    const ps = spawnSync('ps', ['-eo', 'pid,pgid,stat,etime,args'], { encoding: 'utf8' }).stdout.split('\n')
      .filter((line) => line.includes(String(run.child.pid)) || serverPids().some((pid) => line.trim().startsWith(`${pid} `)));
    throw new Error(`${err.message}; npm start ended with ${JSON.stringify(run.ended)}; still running:\n${ps.join('\n')}; pid files: ${serverPids().join(', ')}; its log ends:\n${run.log().slice(-1500)}`);
  });
}

const sandboxKey = () => fs.readFileSync(path.join(dataDir, 'default-sandbox-key'), 'utf8').trim();

/** `npm start` on another DATA_DIR and the same ports as the running one, but for `fresh` settings (and servers it reaches by address: `reuse`); answers how it ended. */
async function otherStartOnPorts(fresh: readonly string[], reuse: Record<string, string> = {}) {
  const otherDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fp-embedded-other-'));
  const ports = Object.fromEntries(await Promise.all(fresh.map(async (k) => [k, String(k === 'ANVIL_BASE_PORT' ? await freePortRange(EVM_CHAINS.length) : await freePort())])));
  const logFile = path.join(logDir, `embedded-other-${fresh.join('-') || 'none'}.log`);
  const out = fs.openSync(logFile, 'w');
  const child = spawn('npm', ['start'], { cwd: repoRoot, env: { ...env, ...ports, ...reuse, DATA_DIR: otherDir }, detached: true, stdio: ['ignore', out, out] });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  fs.rmSync(otherDir, { recursive: true, force: true });
  return { code, log: fs.readFileSync(logFile, 'utf8') };
}

/** The newest block of each embedded chain: each anvil node's, the Solana node's slot, the Bitcoin node's height. */
async function embeddedChainTips() {
  const rpc = async (url: string, method: string, headers: Record<string, string> = {}) => {
    const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify({ jsonrpc: headers.Authorization ? '1.0' : '2.0', id: 1, method, params: [] }) });
    const { result } = await res.json() as { result: unknown };
    if (result === undefined || result === null) throw new Error(`${method} at ${url}: no result`);
    return result;
  };
  const evm = await Promise.all(EVM_CHAINS.map(async (chain, i) => [chain, Number(BigInt(await rpc(`http://127.0.0.1:${Number(env.ANVIL_BASE_PORT) + i}`, 'eth_blockNumber') as string))] as const));
  return {
    ...Object.fromEntries(evm) as Record<(typeof EVM_CHAINS)[number], number>,
    solana: Number(await rpc(`http://127.0.0.1:${env.SOLANA_NODE_PORT}`, 'getSlot')),
    bitcoin: Number(await rpc(`http://127.0.0.1:${env.BITCOIN_NODE_PORT}`, 'getblockcount', { Authorization: `Basic ${Buffer.from('sandbox:sandbox').toString('base64')}` })),
  };
}

test('Ctrl-C right after a request stops the API, the worker, then the servers; a restart keeps the data; a second start on the same DATA_DIR is refused', async () => {
  const first = npmStart('first');
  await untilRunning(first);
  const servers = serverPids();
  expect(servers).toHaveLength(1 + EVM_CHAINS.length + 3); // the Temporal dev server, one anvil node per EVM chain, the Solana node, the Bitcoin node and its btcd
  expect(servers.every(alive)).toBe(true);
  for (const pid of servers) {
    const commandLine = spawnSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' }).stdout;
    expect(commandLine).toMatch(/temporal|anvil|solana-node|bitcoin-node|btcd/);
    expect(commandLine).not.toContain(treasuryMnemonic.split(' ').slice(0, 3).join(' '));
  }

  const second = npmStart('second');
  expect(await second.exit).not.toBe(0);
  expect(second.log()).toContain(`${dataDir} is in use by another start`);
  expect(servers.every(alive)).toBe(true);
  // Another DATA_DIR on the same ports: each embedded server refuses a port another program holds,
  // naming the setting, instead of talking to the first stack's server.
  // The later cases reach their server through the first stack's Temporal and chain nodes (given as
  // addresses, so nothing heavy starts again): each stops at the port it is about.
  const firstStack = {
    TEMPORAL_ADDRESS: `127.0.0.1:${env.TEMPORAL_PORT}`,
    EVM_RPC_URLS: EVM_CHAINS.map((chain, i) => `${chain}=http://127.0.0.1:${Number(env.ANVIL_BASE_PORT) + i}`).join(','),
  };
  for (const [fresh, setting, reuse] of [[[], 'PORT', {}], [['PORT'], 'PGLITE_PORT', {}], [['PORT', 'PGLITE_PORT'], 'SOLANA_NODE_PORT', firstStack],
    [['PORT', 'PGLITE_PORT'], 'BITCOIN_NODE_PORT', { ...firstStack, SOLANA_RPC_URL: `http://127.0.0.1:${env.SOLANA_NODE_PORT}` }]] as const) {
    const other = await otherStartOnPorts(fresh, reuse);
    expect(other.code).not.toBe(0);
    expect(other.log).toMatch(new RegExp(`cannot listen on port ${env[setting]}: another program holds it .* set ${setting} to a free port`));
  }
  expect(servers.every(alive)).toBe(true);
  const chainTips = await embeddedChainTips();

  const api = apiClient(sandboxKey(), apiUrl);
  // A webhook endpoint that never answers: its deliveries are in flight when Ctrl-C comes.
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  const endpoint = await api.post('/v0/webhooks', { url: `http://127.0.0.1:${(hanging.address() as { port: number }).port}/hook`, enabled_events: ['*'] });
  expect(endpoint.status).toBe(201);
  let requestsHanging = 0;
  hanging.on('request', () => requestsHanging++);
  const created = await api.post('/v0/customers', individual());
  expect(created.status).toBe(201);
  expect((await api.post(`/v0/customers/${created.body.id}/kyc`, documents())).status).toBe(202);
  await waitFor(async () => requestsHanging > 0, { timeoutMs: 30_000, intervalMs: 100, what: 'a webhook delivery in flight' });
  // At once, while the worker runs the new customer's KYC (identity check, screening) and waits on the endpoint.
  const stopAsked = Date.now();
  signalGroup(first.child, 'SIGINT');
  expect(await first.exit).toBe(0);
  const stopMs = Date.now() - stopAsked;
  process.stdout.write(`embedded stack: Ctrl-C with a webhook delivery in flight stopped in ${stopMs} ms\n`);
  expect(stopMs).toBeLessThan(10_000);
  await waitFor(async () => !alive(-first.child.pid!) && !servers.some(alive), { timeoutMs: 30_000, what: 'every process to stop' });
  const log = first.log();
  expect(log).toContain('SIGINT received, shutting down');
  // No warning a user cannot act on (the snapshot's age, with its command, is one they can).
  expect(log).not.toMatch(/promiseHooks|No workflows registered|\[WARN\]/);
  // No error line: nothing forced, nothing failed.
  expect(log.split('\n').filter((line) => /"level":(50|60)|\berror\b|Error:/i.test(line))).toEqual([]);
  // The servers outlived the worker: it never had to retry a call against a server already gone.
  expect(log).not.toMatch(/tcp connect error|transport error|stop failed/i);
  expect(serverPids()).toEqual([]);
  expect(fs.existsSync(path.join(dataDir, 'platform.pid'))).toBe(false);

  const restarted = npmStart('restarted');
  await untilRunning(restarted);
  // Every chain kept its blocks across the stop (btcd's own state does not keep those it mined: a journal gives them back).
  const tipsAfter = await embeddedChainTips();
  for (const chain of Object.keys(chainTips) as (keyof typeof chainTips)[]) expect([chain, tipsAfter[chain] >= chainTips[chain]]).toEqual([chain, true]);
  expect((await api.get(`/v0/customers/${created.body.id}`)).status).toBe(200);
  await waitForKycStatus(api, created.body.id, 'approved');

  // A US bank account is verified with the sandbox's test amounts within a minute, on the default clock.
  const bank = (await api.post('/v0/external-accounts', {
    customer_id: created.body.id, type: 'us_bank_account', account_name: 'Jane Doe', routing_number: '021000021', account_number: '000123456789',
  })).body;
  const verified = await waitFor(async () => {
    const res = await api.post(`/v0/external-accounts/${bank.id}/verify`, { amounts: ['0.32', '0.45'] });
    return res.status === 200 ? res.body : undefined;
  }, { timeoutMs: 60_000, intervalMs: 250, what: 'micro-deposit verification' });
  expect(verified).toMatchObject({ status: 'verified', verification: { result: 'verified' } });

  // No SANCTIONS_DATA_DIR and no internet: the shipped snapshot screens at once, and says how old it is.
  expect(restarted.log()).toMatch(/Sanctions: +3 lists from the shipped snapshot — WARNING: its oldest list was published 2024-05-03/);
  const listed = await api.post('/v0/sanctions/screen', { name: 'BANCO NACIONAL DE CUBA', type: 'business' });
  expect(listed.body.status).toBe('potential_match');
  expect(listed.body.list_versions.map((v: any) => [v.source, v.published_on]).sort()).toEqual([
    ['un_sc', '2026-02-27'], ['us_ofac_cons', '2025-12-19'], ['us_ofac_sdn', '2024-05-03'],
  ]);
  expect((await api.post('/v0/sanctions/screen', { name: 'Jane Doe' })).body.status).toBe('clear');
  expect((await (await fetch(`${apiUrl}/readyz`)).json()).status.sanctions).toMatch(/the shipped snapshot is loaded; its oldest list was published 2024-05-03/);
  await stopWithCtrlC(restarted);
}, 300_000); // three starts of the whole stack (seven chain nodes, the Temporal dev server), two Ctrl-C stops, three starts refused on ports in use

test('the servers a killed start left behind are ended by the next start, which keeps the data', async () => {
  const killed = npmStart('killed');
  await untilRunning(killed);
  const api = apiClient(sandboxKey(), apiUrl);
  const created = await api.post('/v0/customers', individual());
  expect(created.status).toBe(201);
  expect((await api.post(`/v0/customers/${created.body.id}/kyc`, documents())).status).toBe(202);
  const leftBehind = serverPids();
  expect(leftBehind).toHaveLength(1 + EVM_CHAINS.length + 3);
  signalGroup(killed.child, 'SIGKILL');
  await killed.exit;
  // Outside the killed process group, the servers are still running.
  expect(leftBehind.every(alive)).toBe(true);

  const next = npmStart('after-kill');
  await untilRunning(next);
  expect(leftBehind.some(alive)).toBe(false);
  expect(serverPids().every((pid) => !leftBehind.includes(pid) && alive(pid))).toBe(true);
  // The customer and its KYC submission were kept (its check, cut off mid-activity, runs again once
  // the activity's timeout has passed).
  const kept = await api.get(`/v0/customers/${created.body.id}`);
  expect([kept.status, ['under_review', 'approved'].includes(kept.body.kyc_status)]).toEqual([200, true]);
  await stopWithCtrlC(next);
}, 150_000); // two starts of the whole stack

test('on the embedded defaults (PGlite, local anvil) money moves end to end: SEPA in and USDC out on base, then base to polygon funded on chain, a late deposit to it sent back by the scheduled scan; the ledger verifies', async () => {
  const run = npmStart('money');
  await untilRunning(run);
  // The sandbox key's default plan allows 10 requests a second: its 429s are waited out, as a client does.
  const api = apiClient(sandboxKey(), apiUrl, { waitOutRateLimits: true });
  const customer = await approvedCustomer(api, 'DE');
  const receiver = getAddress(`0x${randomBytes(20).toString('hex')}`);
  const created = await api.post('/v0/transfers', {
    amount: '100.00', on_behalf_of: customer.id, source: { payment_rail: 'sepa', currency: 'eur' },
    destination: { payment_rail: 'base', currency: 'usdc', to_address: receiver },
  });
  expect(created.status).toBe(201);
  expect(created.body.state).toBe('awaiting_funds');
  await sandboxDeposit(api, created.body.id);
  const done = await waitForTransferState(api, created.body.id, 'payment_processed', 120_000, POLL_MS);
  expect(done.receipt.destination_tx_hash).toMatch(/^0x[0-9a-f]{64}$/);

  // Paid from the treasury of CHAIN_TREASURY_MNEMONIC, on the node npm start runs for base.
  const base = createPublicClient({ transport: http(`http://127.0.0.1:${Number(env.ANVIL_BASE_PORT) + EVM_CHAINS.indexOf('base')}`) });
  const usdc = sandboxTokenAddress(new ChainKeys(treasuryMnemonic), 'base', 'usdc');
  const received = await base.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [receiver] });
  expect(received).toBe(BigInt(Math.round(Number(done.receipt.final_amount) * 1e6)));

  // Funded on chain: the worker watches base for the deposit (sandbox: the issuer mints it to the deposit address).
  const onChain = await api.post('/v0/transfers', {
    amount: '25.00', on_behalf_of: customer.id, source: { payment_rail: 'base', currency: 'usdc', from_address: receiver },
    destination: { payment_rail: 'polygon', currency: 'usdc', to_address: receiver },
  });
  expect(onChain.status).toBe(201);
  await sandboxDeposit(api, onChain.body.id);
  const bridged = await waitForTransferState(api, onChain.body.id, 'payment_processed', 120_000, POLL_MS);
  expect(bridged.receipt.source_tx_hash).toMatch(/^0x[0-9a-f]{64}$/);

  // The quoted amount sent again once the transfer is done: the scheduled scan (every 2 s here) finds
  // it and sends it back to its sender, unscreened as the sandbox does without lists loaded.
  const baseUrl = `http://127.0.0.1:${Number(env.ANVIL_BASE_PORT) + EVM_CHAINS.indexOf('base')}`;
  const chain = { id: await base.getChainId(), name: 'base', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [baseUrl] } } };
  const sender = privateKeyToAccount(generatePrivateKey());
  await createTestClient({ mode: 'anvil', transport: http(baseUrl) }).setBalance({ address: sender.address, value: 10n ** 18n });
  const issuer = createWalletClient({ account: new ChainKeys(treasuryMnemonic).issuer, transport: http(baseUrl), chain });
  await base.waitForTransactionReceipt({ hash: await issuer.writeContract({ address: usdc, abi: STABLECOIN_ABI, functionName: 'mint', args: [sender.address, 25_000_000n] }) });
  const strayHash = await createWalletClient({ account: sender, transport: http(baseUrl), chain })
    .writeContract({ address: usdc, abi: erc20Abi, functionName: 'transfer', args: [getAddress(onChain.body.source_deposit_instructions.to_address), 25_000_000n] });
  const back = await waitFor(async () => {
    const returns = (await api.get(`/v0/payments?transfer_id=${onChain.body.id}&kind=deposit_return`)).body.data;
    return returns.find((p: any) => p.status === 'settled');
  }, { timeoutMs: 60_000, what: 'the stray deposit returned', intervalMs: POLL_MS });
  expect(back).toMatchObject({ amount: '25.000000', to_address: sender.address });
  const stray = (await api.get(`/v0/payments?transfer_id=${onChain.body.id}&kind=deposit&status=failed`)).body.data;
  expect(stray).toMatchObject([{ tx_hash: strayHash, from_address: sender.address, failure_reason: 'arrived after the transfer was funded; not credited, returned to the sender' }]);
  expect(await base.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [sender.address] })).toBe(25_000_000n);

  // An instant rail in and out (PIX): its payout settled and sent once, on the embedded database.
  const br = await approvedCustomer(api, 'BR');
  const brAccount = await internationalAccount(api, br.id, 'BR1800360305000010009795493C1', 'BRASBRRJ', 'BR', 'Maria Silva');
  const pix = await api.post('/v0/transfers', {
    amount: '10.00', on_behalf_of: br.id, source: { payment_rail: 'pix', currency: 'brl' },
    destination: { payment_rail: 'pix', currency: 'brl', external_account_id: brAccount.id },
  });
  expect(pix.status).toBe(201);
  await sandboxDeposit(api, pix.body.id);
  await waitForTransferState(api, pix.body.id, 'payment_processed', 120_000, POLL_MS);
  const pixPayout = (await api.get(`/v0/payments?transfer_id=${pix.body.id}&kind=payout`)).body.data;
  expect(pixPayout).toMatchObject([{ status: 'settled', attempts: 1 }]);

  // The admin CLI reaches the embedded database while npm start serves it.
  const verify = spawnSync('npm', ['run', '-s', 'cli', '--', 'ledger', 'verify'], { cwd: repoRoot, env, encoding: 'utf8' });
  expect(verify.stdout).toContain('ledger verified');
  expect(verify.status).toBe(0);
  // Every connection got its own answers from the one embedded session (pglite-session-queue.ts).
  expect(run.log()).not.toMatch(/bind message supplies|prepared statement/);
  await stopWithCtrlC(run);
}, 240_000); // a start of the whole stack, then money over a bank and two chains, on a loaded machine
