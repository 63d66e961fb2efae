// `npm run bench:wallets`: wallet reads through the API and the cost of a chain's wallet watcher, on
// the whole production stack on this machine (API and worker processes, PostgreSQL, the Temporal dev
// server, anvil). Prints markdown for docs/BENCHMARKS.md:
// - GET /v0/wallets/{id}/balances (read from the chain) and GET /v0/wallets/{id}/transactions (a page
//   of 100 of 1,000), as ratios to GET /v0/wallets/{id} (one row read) measured in the same run;
// - the watcher reading the same blocks (60 token transfers, 30 of them to wallets) with 10 and with
//   10,000 wallets on the chain: its CPU time and PostgreSQL's, and 10,000 as a ratio to 10. On
//   bitcoin the look includes the output index reading those blocks.
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { getAddress } from 'viem';
import { createChainAdapters } from '../src/chains';
import { loadConfig } from '../src/config';
import { createDb, type Db } from '../src/db';
import { newId } from '../src/ids';
import { followWalletTransfers } from '../src/wallets/watcher';
import { walletAddressKey } from '../src/wallets/address-key';
import { encodeChainAddress } from '../src/domain/bank-validation';
import { documents } from '../test/harness/documents';
import { createUnlimitedKey, startStack } from '../test/harness/stack';
import { outsideAddress } from '../test/harness/bitcoin';
import { BitcoinRpc } from '../src/chains/bitcoin/rpc';
import { cpuSnapshot } from './cpu';
import { percentile } from './stats';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const WATCH_RUNS = 7;
/** The chain whose watcher is measured (BENCH_CHAIN: an EVM chain, solana or bitcoin). */
const CHAIN = (process.env.BENCH_CHAIN ?? 'arbitrum') as 'arbitrum' | 'solana' | 'bitcoin';
const CURRENCY = CHAIN === 'bitcoin' ? 'btc' : 'usdc';
/** What the watcher matches the chain's transfers against (BENCH_WATCH): wallets (10 and 10,000), or liquidation addresses (10 and 1,000). */
const WATCHED = (process.env.BENCH_WATCH ?? 'wallets') as 'wallets' | 'routes';
const SIZES = WATCHED === 'routes' ? [10, 1_000] : [10, 10_000];
/** A fresh address on the chain, nobody's. */
const randomAddress = () => {
  if (CHAIN === 'solana') return encodeChainAddress('solana', randomBytes(32));
  if (CHAIN === 'bitcoin') return outsideAddress();
  return getAddress(`0x${randomBytes(20).toString('hex')}`);
};

async function main() {
  const stack = await startStack({ name: 'benchwal', logDir: path.join(__dirname, '../test-logs/bench-wallets'), extraEnv: { LOG_LEVEL: 'warn' } });
  const db = createDb(stack.info.databaseUrl, 4);
  try {
    const key = await createUnlimitedKey(stack.info.databaseUrl);
    const headers = { 'Api-Key': key, 'Content-Type': 'application/json' };
    const api = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(`${stack.info.apiUrl}${p}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
      return (await res.json()) as any;
    };
    const customer = await api('POST', '/v0/customers', {
      type: 'individual', email: 'bench.wallets@example.com', first_name: 'Bench', last_name: 'Mark', date_of_birth: '1990-04-12',
      address: { line1: '1 Market St', city: 'San Francisco', postal_code: '94105', country: 'US' },
    });
    await api('POST', `/v0/customers/${customer.id}/kyc`, documents());
    for (let i = 0; i < 300 && (await api('GET', `/v0/customers/${customer.id}`)).kyc_status !== 'approved'; i++) await new Promise((r) => setTimeout(r, 100));
    // The API's wallet below is on solana too, and starts solana's watcher: the bench's own look at solana comes first.
    const watchedFirst = CHAIN === 'solana' ? await measureWatcher(db, stack.info.processEnv, customer.id) : undefined;
    const wallet = await api('POST', '/v0/wallets', { customer_id: customer.id, type: 'custodial', chains: ['base', 'solana'] });
    await api('POST', `/v0/sandbox/wallets/${wallet.id}/fund`, { chain: 'base', currency: 'usdc', amount: '100' });
    await insertHistory(db, wallet, 1_000);

    const base = `${stack.info.apiUrl}/v0/wallets/${wallet.id}`;
    await autocannon({ url: base, headers, connections: 8, duration: 2 }); // warm-up
    const reads = [
      ['GET /v0/wallets/{id} (ceiling: one row)', base],
      ['GET /v0/wallets/{id}/balances (base + solana, 6 assets)', `${base}/balances`],
      ['GET /v0/wallets/{id}/transactions?limit=100 (of 1,000)', `${base}/transactions?limit=100`],
    ] as const;
    const rows = [];
    for (const [name, url] of reads) {
      const r = await autocannon({ url, headers, connections: 8, duration: DURATION_S });
      rows.push({ name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors });
    }

    const watch = watchedFirst ?? await measureWatcher(db, stack.info.processEnv, customer.id);

    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    console.log(`\n${new Date().toISOString().slice(0, 10)} — ${os.cpus().length} cores (${cpu}), Node ${process.version}, ${DURATION_S} s per read, 8 connections`);
    console.log('\n| read | requests/s | p50 ms | p99 ms | p50 / ceiling | p99 / ceiling | errors or non-2xx |');
    console.log('|---|---|---|---|---|---|---|');
    for (const r of rows) {
      console.log(`| ${r.name} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${(r.p50 / rows[0]!.p50).toFixed(2)} | ${(r.p99 / rows[0]!.p99).toFixed(2)} | ${r.non2xx} |`);
    }
    console.log(`\nWatcher on ${CHAIN}: one look over the same ${watch.blocks} blocks (60 token transfers, 30 to wallets), median of ${WATCH_RUNS}`);
    console.log(`\n| ${WATCHED === 'routes' ? 'liquidation addresses' : 'wallets'} on the chain | watcher CPU ms | PostgreSQL CPU ms | wall ms | transactions recorded |`);
    console.log('|---|---|---|---|---|');
    for (const w of watch.results) console.log(`| ${w.wallets.toLocaleString('en')} | ${w.cpuMs} | ${w.pgMs} | ${w.wallMs} | ${w.recorded} |`);
    const [small, large] = watch.results;
    console.log(`\n${SIZES[1]!.toLocaleString('en')} / 10: watcher CPU ${(large!.cpuMs / small!.cpuMs).toFixed(2)} ×, PostgreSQL CPU ${(large!.pgMs / Math.max(1, small!.pgMs)).toFixed(2)} ×, wall ${(large!.wallMs / small!.wallMs).toFixed(2)} ×`);
  } finally {
    await db.destroy();
    await stack.stop();
  }
}

/** `count` history rows for the wallet, as the watcher writes them. */
async function insertHistory(db: Db, wallet: { id: string; addresses: Record<string, string> }, count: number) {
  const owner = await db.selectFrom('wallets').select(['developer_id', 'environment']).where('id', '=', wallet.id).executeTakeFirstOrThrow();
  const rows = Array.from({ length: count }, (_, i) => {
    const at = new Date(Date.now() - (count - i) * 1000);
    const hash = `0x${randomBytes(32).toString('hex')}`;
    return {
      id: newId('walletTransaction', at.getTime()), ...owner, wallet_id: wallet.id, chain: 'base', currency: 'usdc', direction: i % 3 ? 'incoming' as const : 'outgoing' as const,
      amount_minor: String(1_000_000 + i), tx_hash: hash, transfer_ref: `${hash}:0`, counterparty: getAddress(`0x${randomBytes(20).toString('hex')}`),
      position: String(i), confirmations: 10, state: 'confirmed' as const, transfer_id: null, created_at: at, updated_at: at,
    };
  });
  for (let i = 0; i < rows.length; i += 500) await db.insertInto('wallet_transactions').values(rows.slice(i, i + 500)).execute();
}

/**
 * The wallets (rows as the API writes them, with a placeholder where the sealed key goes: these never
 * sign) and the traffic, then one look of the watcher over the same blocks, with 10 and 10,000 wallets.
 */
async function measureWatcher(db: Db, env: Record<string, string>, customerId: string) {
  // Each bitcoin look reads the node afresh (a process may otherwise answer a look of the last 250 ms again).
  const config = loadConfig({ ...env, BITCOIN_INDEX_REUSE_MS: '0' });
  const chains = createChainAdapters(config, db);
  const owner = await db.selectFrom('customers').select(['developer_id', 'environment']).where('id', '=', customerId).executeTakeFirstOrThrow();
  const addRoutes = async (n: number) => {
    const rows = Array.from({ length: n }, () => {
      const address = randomAddress();
      const now = new Date();
      return {
        id: newId('liquidationAddress', now.getTime()), ...owner, customer_id: customerId, kind: 'liquidation_address' as const, status: 'active' as const,
        source_rail: CHAIN, source_currency: CURRENCY, address: walletAddressKey(CHAIN, address), display_address: address, deposit_index: null, deposit_reference: null,
        destination: JSON.stringify({ payment_rail: CHAIN, currency: CURRENCY, to_address: randomAddress() }), developer_fee_percent: '0', return_address: null, created_at: now, updated_at: now,
      };
    });
    for (let i = 0; i < n; i += 1_000) await db.insertInto('payment_routes').values(rows.slice(i, i + 1_000)).execute();
    return rows.map((r) => r.display_address);
  };
  const addWallets = async (n: number) => {
    if (WATCHED === 'routes') return addRoutes(n);
    const made: string[] = [];
    for (let i = 0; i < n; i += 1_000) {
      const batch = Array.from({ length: Math.min(1_000, n - i) }, () => {
        const address = randomAddress();
        const now = new Date();
        return {
          id: newId('wallet', now.getTime()), ...owner, customer_id: customerId, type: 'custodial' as const, label: null, chains: JSON.stringify([CHAIN]),
          addresses: JSON.stringify({ [CHAIN]: address }), key_sealed: 'bench-placeholder', kek_id: 'bench', status: 'active' as const, created_at: now, updated_at: now,
        };
      });
      await db.insertInto('wallets').values(batch).execute();
      await db.insertInto('wallet_addresses').values(batch.map((w) => ({ chain: CHAIN, address: walletAddressKey(CHAIN, JSON.parse(w.addresses)[CHAIN]), wallet_id: w.id }))).execute();
      made.push(...batch.map((w) => JSON.parse(w.addresses)[CHAIN] as string));
    }
    return made;
  };

  const adapter = chains[CHAIN];
  const start = await adapter.currentPosition();
  const first = await addWallets(10);
  for (let i = 0; i < 60; i++) {
    const to = i % 2 === 0 ? first[(i / 2) % 10]! : randomAddress();
    await (chains[CHAIN] as unknown as { sandboxDeposit(q: object): Promise<unknown> }).sandboxDeposit({ currency: CURRENCY, address: to, amountMinor: 1_000_000n + BigInt(i) });
    // The test stack's btcd mines when asked: six payments a block, as the other chains' blocks hold a few.
    if (CHAIN === 'bitcoin' && i % 6 === 5) await new BitcoinRpc(env.BITCOIN_RPC_URL!).call('generate', [1]);
  }
  if (CHAIN === 'bitcoin') await new BitcoinRpc(env.BITCOIN_RPC_URL!).call('generate', [6]);
  await new Promise((r) => setTimeout(r, 3_000)); // every block deep enough
  const end = await adapter.currentPosition();
  await db.insertInto('chain_watch_cursors').values({ chain: CHAIN, position: start, updated_at: new Date() })
    .onConflict((oc) => oc.column('chain').doUpdateSet({ position: start, updated_at: new Date() })).execute();

  const results = [];
  // One look unmeasured first, so that neither size pays for the code's warm-up.
  await followWalletTransfers({ db, chains }, CHAIN, () => undefined);
  for (const wallets of SIZES) {
    if (wallets > 10) await addWallets(wallets - 10);
    const runs: { cpuMs: number; pgMs: number; wallMs: number; recorded: number }[] = [];
    for (let run = 0; run < WATCH_RUNS; run++) {
      await db.deleteFrom('wallet_transactions').where('chain', '=', CHAIN).execute();
      await db.deleteFrom('route_deposits').where('rail', '=', CHAIN).execute();
      await db.updateTable('chain_watch_cursors').set({ position: start }).where('chain', '=', CHAIN).execute();
      if (CHAIN === 'bitcoin') await unreadBitcoinBlocks(db, Number(start));
      const pgBefore = cpuSnapshot();
      const cpuBefore = process.cpuUsage();
      const t0 = performance.now();
      const { recorded } = await followWalletTransfers({ db, chains }, CHAIN, () => undefined);
      const wallMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpuBefore);
      const pgAfter = cpuSnapshot();
      runs.push({ cpuMs: (cpu.user + cpu.system) / 1000, pgMs: postgresCpuMs(pgBefore, pgAfter), wallMs, recorded });
    }
    const median = (f: (r: { cpuMs: number; pgMs: number; wallMs: number }) => number) => percentile(runs.map(f).sort((a, b) => a - b), 50);
    results.push({ wallets, cpuMs: Math.round(median((r) => r.cpuMs)), pgMs: Math.round(median((r) => r.pgMs)), wallMs: Math.round(median((r) => r.wallMs)), recorded: runs[0]!.recorded });
  }
  return { results, blocks: Number(end) - Number(start) };
}

/**
 * Bitcoin's watcher reads the platform's output index, which reads the blocks once: each look starts
 * with the index's blocks from `height` unread, so that it reads them again (as a reorganisation would
 * have it), with the wallets of the run.
 */
async function unreadBitcoinBlocks(db: Db, height: number) {
  await db.deleteFrom('bitcoin_outputs').where('height', '>=', height).execute();
  await db.updateTable('bitcoin_outputs').set({ spent_txid: null, spent_height: null }).where('spent_height', '>=', height).execute();
  await db.deleteFrom('bitcoin_blocks').where('height', '>=', height).execute();
}

/** CPU the PostgreSQL server processes used between two snapshots, in ms. */
function postgresCpuMs(before: ReturnType<typeof cpuSnapshot>, after: ReturnType<typeof cpuSnapshot>): number {
  let seconds = 0;
  for (const [pid, p] of after.processes) {
    if (!/^postgres/.test(p.command)) continue;
    seconds += p.cpuSeconds - (before.processes.get(pid)?.cpuSeconds ?? 0);
  }
  return seconds * 1000;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
