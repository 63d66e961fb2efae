// `npm run bench:chain-transfers`: onramp transfers (ACH in, USDC or BTC out) carried to
// payment_processed on base (anvil, four blocks a second), on solana (the sandbox's LiteSVM node, a
// slot every 0.4 s) and on bitcoin (btcd in regtest, a block every BENCH_BITCOIN_BLOCK_MS, default
// 1 s, six deep to count), on one stack in the same run (issue 49). Each round runs BENCH_TRANSFERS
// transfers (default 300, BENCH_CONCURRENCY clients creating and funding them) to base, then as many
// to each chain of BENCH_CHAINS (default solana,bitcoin); the run prints each round's transfers/s
// (first created → last processed), created→processed latency and CPU per transfer, and the median
// of the rounds' ratios to base.
import os from 'node:os';
import { generateKeyPairSigner } from '@solana/kit';
import type { Db } from '../src/db';
import type { ApiClient } from '../test/harness';
import { RECEIVER } from '../test/harness/transfers';
import { BitcoinRpc } from '../src/chains/bitcoin/rpc';
import { outsideAddress } from '../test/harness/bitcoin';
import { cpuSnapshot } from './cpu';
import { processedPhase, type ProcessedPhase } from './processed-phase';
import { median } from './stats';
import { withTransferStack } from './transfer-stack';

const TRANSFERS = Number(process.env.BENCH_TRANSFERS ?? 300);
const CLIENTS = Number(process.env.BENCH_CONCURRENCY ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CHAINS = (process.env.BENCH_CHAINS ?? 'solana,bitcoin').split(',').map((c) => c.trim()) as ('solana' | 'bitcoin')[];
const BITCOIN_BLOCK_MS = Number(process.env.BENCH_BITCOIN_BLOCK_MS ?? 1000);
const CPU_KINDS = {
  API: /src\/main\/api\.ts/, worker: /workers\/main\.ts/, 'Temporal dev server': /temporal server start-dev/, PostgreSQL: /^postgres/,
  'solana node': /main\/solana-node\.ts/, anvil: /anvil/, btcd: /btcd/,
};

type PhaseResult = ProcessedPhase;

async function main() {
  await withTransferStack('bench-chain-transfers', async ({ db, api, customerId, processEnv }) => {
    const onramp = (chain: string, to: string) => ({
      amount: '10.00', on_behalf_of: customerId, source: { payment_rail: 'ach', currency: 'usd' },
      destination: { payment_rail: chain, currency: chain === 'bitcoin' ? 'btc' : 'usdc', to_address: to },
    });
    const receivers = { base: RECEIVER, solana: (await generateKeyPairSigner()).address, bitcoin: outsideAddress() };
    const bitcoin = new BitcoinRpc(processEnv.BITCOIN_RPC_URL!);
    const rounds: Record<string, PhaseResult>[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const results: Record<string, PhaseResult> = { base: await phase(db, api, onramp('base', RECEIVER)) };
      for (const chain of CHAINS) {
        // The test stack's btcd mines when asked: the bench is its block clock while bitcoin's phase runs.
        results[chain] = chain === 'bitcoin' ? await mining(bitcoin, phase(db, api, onramp(chain, receivers.bitcoin))) : await phase(db, api, onramp(chain, receivers[chain]));
      }
      console.log(`round ${round}: ${Object.entries(results).map(([c, r]) => `${c} ${r.perSecond.toFixed(1)} transfers/s`).join(', ')}`);
      rounds.push(results);
    }
    report(rounds);
  });
}

/** A block every BITCOIN_BLOCK_MS while `work` runs. */
async function mining<T>(rpc: BitcoinRpc, work: Promise<T>): Promise<T> {
  const clock = setInterval(() => void rpc.call('generate', [1]).catch(() => undefined), BITCOIN_BLOCK_MS);
  try {
    return await work;
  } finally {
    clearInterval(clock);
  }
}

/** TRANSFERS transfers created and funded (the sandbox's ACH deposit) by CLIENTS clients, then each waited for until processed. */
async function phase(db: Db, api: ApiClient, body: unknown): Promise<PhaseResult> {
  const ids: string[] = [];
  const cpuBefore = cpuSnapshot();
  let toCreate = TRANSFERS;
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (toCreate-- > 0) {
      const created = await api.post('/v0/transfers', body);
      if (created.status !== 201) throw new Error(`transfer: ${created.status} ${JSON.stringify(created.body)}`);
      ids.push(created.body.id);
      const deposit = await api.post(`/v0/sandbox/transfers/${created.body.id}/deposit`);
      if (deposit.status !== 200) throw new Error(`deposit: ${deposit.status} ${JSON.stringify(deposit.body)}`);
    }
  }));
  return processedPhase(db, ids, cpuBefore, CPU_KINDS);
}

function report(rounds: Record<string, PhaseResult>[]) {
  console.log(`\n${new Date().toISOString().slice(0, 10)} — ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}; `
    + `${TRANSFERS} ACH→USDC (BTC on bitcoin) transfers per phase, ${CLIENTS} clients; bitcoin: a block every ${BITCOIN_BLOCK_MS} ms`);
  console.log(`\n| round | chain | processed | transfers/s | created→processed p50 ms | p99 ms | CPU ms per transfer (${Object.keys(CPU_KINDS).join(', ')}) |`);
  console.log('|---|---|---|---|---|---|---|');
  rounds.forEach((r, i) => {
    for (const [chain, p] of Object.entries(r)) {
      console.log(`| ${i + 1} | ${chain} | ${p.processed} | ${p.perSecond.toFixed(1)} | ${p.p50} | ${p.p99} | ${p.cpuMs.toFixed(1)} |`);
    }
  });
  for (const chain of CHAINS) {
    const rate = median(rounds.map((r) => r[chain]!.perSecond / r.base!.perSecond));
    const cpu = median(rounds.map((r) => r[chain]!.cpuMs / r.base!.cpuMs));
    console.log(`\n${chain}, median of ${rounds.length} rounds: ${rate.toFixed(2)} × base's transfers/s, ${cpu.toFixed(2)} × its CPU per transfer`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
