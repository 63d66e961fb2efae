// `npm run bench:chain-transfers`: onramp transfers (ACH in, USDC out) carried to payment_processed on
// solana (the sandbox's LiteSVM node, a slot every 0.4 s) and on base (anvil, four blocks a second),
// on one stack in the same run (issue 49). Each round runs BENCH_TRANSFERS transfers (default 300,
// BENCH_CONCURRENCY clients creating and funding them) to base, then as many to solana; the run
// prints each round's transfers/s (first created → last processed), created→processed latency and
// CPU per transfer, and the median of the rounds' solana/base ratios.
import os from 'node:os';
import path from 'node:path';
import { generateKeyPairSigner } from '@solana/kit';
import { createDb, type Db } from '../src/db';
import { apiClient, type ApiClient } from '../test/harness';
import { STACK_ENV } from '../test/harness/stack-file';
import { createUnlimitedKey, startStack } from '../test/harness/stack';
import { approvedCustomer, RECEIVER } from '../test/harness/transfers';
import { cpuSnapshot } from './cpu';
import { processedPhase, type ProcessedPhase } from './processed-phase';
import { median } from './stats';

const TRANSFERS = Number(process.env.BENCH_TRANSFERS ?? 300);
const CLIENTS = Number(process.env.BENCH_CONCURRENCY ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CPU_KINDS = {
  API: /src\/main\/api\.ts/, worker: /workers\/main\.ts/, 'Temporal dev server': /temporal server start-dev/, PostgreSQL: /^postgres/,
  'solana node': /main\/solana-node\.ts/, anvil: /anvil/,
};

type PhaseResult = ProcessedPhase;

async function main() {
  const stack = await startStack({
    name: 'benchchain', logDir: path.join(__dirname, '../test-logs/bench-chain-transfers'),
    extraEnv: { LOG_LEVEL: 'warn', TRANSFER_DAILY_LIMIT_USD: '1000000000', SANDBOX_TIME_SCALE: '1000000' },
  });
  process.env[STACK_ENV] = JSON.stringify(stack.info);
  const db = createDb(stack.info.databaseUrl, 2);
  try {
    const api = apiClient(await createUnlimitedKey(stack.info.databaseUrl));
    const customer = await approvedCustomer(api, 'US');
    const onramp = (chain: string, to: string) => ({
      amount: '10.00', on_behalf_of: customer.id, source: { payment_rail: 'ach', currency: 'usd' }, destination: { payment_rail: chain, currency: 'usdc', to_address: to },
    });
    const solanaReceiver = (await generateKeyPairSigner()).address;
    const rounds: { base: PhaseResult; solana: PhaseResult }[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const base = await phase(db, api, onramp('base', RECEIVER));
      const solana = await phase(db, api, onramp('solana', solanaReceiver));
      console.log(`round ${round}: base ${base.perSecond.toFixed(1)} transfers/s, solana ${solana.perSecond.toFixed(1)} transfers/s`);
      rounds.push({ base, solana });
    }
    report(rounds);
  } finally {
    await db.destroy();
    await stack.stop();
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

function report(rounds: { base: PhaseResult; solana: PhaseResult }[]) {
  console.log(`\n${new Date().toISOString().slice(0, 10)} — ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}; `
    + `${TRANSFERS} ACH→USDC transfers per phase, ${CLIENTS} clients`);
  console.log(`\n| round | chain | processed | transfers/s | created→processed p50 ms | p99 ms | CPU ms per transfer (${Object.keys(CPU_KINDS).join(', ')}) |`);
  console.log('|---|---|---|---|---|---|---|');
  rounds.forEach((r, i) => {
    for (const [chain, p] of [['base', r.base], ['solana', r.solana]] as const) {
      console.log(`| ${i + 1} | ${chain} | ${p.processed} | ${p.perSecond.toFixed(1)} | ${p.p50} | ${p.p99} | ${p.cpuMs.toFixed(1)} |`);
    }
  });
  const rate = median(rounds.map((r) => r.solana.perSecond / r.base.perSecond));
  const cpu = median(rounds.map((r) => r.solana.cpuMs / r.base.cpuMs));
  console.log(`\nsolana, median of ${rounds.length} rounds: ${rate.toFixed(2)} × base's transfers/s, ${cpu.toFixed(2)} × its CPU per transfer`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
