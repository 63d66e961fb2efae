// `npm run bench:bank-file-transfers`: ACH→ACH transfers carried to payment_processed through the
// bank's files (live keys: deposits arrive in the bank's credit files, payouts leave in the window's
// NACHA file over SFTP, settled by the test bank) against the same transfers on the sandbox's ACH
// simulator, on one stack in the same run (issue 48). Each round runs BENCH_TRANSFERS transfers
// (default 1000, BENCH_CONCURRENCY clients creating them) on the sandbox, then as many through files;
// the run prints each round's transfers/s (first created → last processed), created→processed
// latency and CPU per transfer, and the median of the rounds' ratios. The files' clocks are the test
// stack's but for the windows, every 10 s (NACHA allows 36 files a day; the tests' 2-s windows would
// use them up within a round): the outbox read every second, entries settled 4 s after their window;
// BENCH_BANK_ENV='KEY=VALUE,…' changes them. The sandbox's ACH settles in 2 s at its time scale.
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { parseAmount } from '../src/domain/money';
import { createDb, type Db } from '../src/db';
import { apiClient, type ApiClient } from '../test/harness';
import { liveApprovedCustomer, liveVerifiedUsAccount } from '../test/harness/live-ach';
import { STACK_ENV } from '../test/harness/stack-file';
import { createUnlimitedKeys, startStack, TEST_ODFI } from '../test/harness/stack';
import { TestBank } from '../test/harness/test-bank';
import { approvedCustomer, verifiedUsAccount } from '../test/harness/transfers';
import { cpuSnapshot } from './cpu';
import { processedPhase, type ProcessedPhase } from './processed-phase';
import { median } from './stats';

const TRANSFERS = Number(process.env.BENCH_TRANSFERS ?? 1000);
const CLIENTS = Number(process.env.BENCH_CONCURRENCY ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** How often the test bank sends the credits that arrived meanwhile, in one file. */
const CREDIT_FILE_EVERY_MS = 1_000;
const CPU_KINDS = { API: /src\/main\/api\.ts/, worker: /workers\/main\.ts/, 'Temporal dev server': /temporal server start-dev/, PostgreSQL: /^postgres/ };
const bankEnv = {
  BANK_FILE_WINDOW_SECONDS: '10',
  ...Object.fromEntries((process.env.BENCH_BANK_ENV ?? '').split(',').filter(Boolean).map((kv) => kv.split('=') as [string, string])),
};

interface PhaseResult extends ProcessedPhase { createdPerSecond: number }

async function main() {
  const stack = await startStack({
    name: 'benchbf', logDir: path.join(__dirname, '../test-logs/bench-bank-file-transfers'), bank: true, bankEnv,
    extraEnv: { LOG_LEVEL: 'warn', TRANSFER_DAILY_LIMIT_USD: '1000000000' },
  });
  // The harness's helpers (API client, operator CLI) find the stack here, as under jest.
  process.env[STACK_ENV] = JSON.stringify(stack.info);
  const db = createDb(stack.info.databaseUrl, 2);
  const bank = new TestBank(stack.info.bankRoot!, TEST_ODFI, { takes: ['ach'] }).start();
  try {
    const [sandboxKey, liveKey] = await createUnlimitedKeys(stack.info.databaseUrl, ['sandbox', 'production']);
    const [sandbox, live] = [apiClient(sandboxKey), apiClient(liveKey)];
    const liveCustomer = await liveApprovedCustomer(live, 'bench');
    const liveAccount = (await liveVerifiedUsAccount(live, bank, liveCustomer.id, '40001234567')).account;
    const sandboxCustomer = await approvedCustomer(sandbox, 'US');
    const sandboxAccount = await verifiedUsAccount(sandbox, sandboxCustomer.id);
    const achToAch = (customerId: string, accountId: string) => ({
      amount: '10.00', on_behalf_of: customerId, source: { payment_rail: 'ach', currency: 'usd' },
      destination: { payment_rail: 'ach', currency: 'usd', external_account_id: accountId },
    });

    const rounds: { simulator: PhaseResult; files: PhaseResult }[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const simulator = await phase(db, sandbox, achToAch(sandboxCustomer.id, sandboxAccount.id), async (created) => {
        const res = await sandbox.post(`/v0/sandbox/transfers/${created.id}/deposit`);
        if (res.status !== 200) throw new Error(`sandbox deposit: ${res.status} ${JSON.stringify(res.body)}`);
      });
      const files = await phase(db, live, achToAch(liveCustomer.id, liveAccount.id), undefined, bank);
      console.log(`round ${round}: simulator ${simulator.perSecond.toFixed(1)} transfers/s, files ${files.perSecond.toFixed(1)} transfers/s`);
      rounds.push({ simulator, files });
    }
    report(rounds);
  } finally {
    bank.stop();
    await db.destroy();
    await stack.stop();
  }
}

/**
 * TRANSFERS transfers created by CLIENTS clients, each funded by `deposit` (the sandbox) or, when a
 * bank is given, by its credit files (every CREDIT_FILE_EVERY_MS, the deposits that came meanwhile);
 * then every one waited for until processed.
 */
async function phase(db: Db, api: ApiClient, body: unknown, deposit?: (created: any) => Promise<void>, bank?: TestBank): Promise<PhaseResult> {
  const ids: string[] = [];
  const unpaid: { amountMinor: bigint; reference: string; senderName: string }[] = [];
  let creating = true;
  const sendCredits = async () => {
    if (unpaid.length > 0) await bank!.writeCredits(unpaid.splice(0));
  };
  const creditFiles = bank ? (async () => {
    while (creating) {
      await new Promise((r) => setTimeout(r, CREDIT_FILE_EVERY_MS));
      await sendCredits();
    }
  })() : undefined;
  const cpuBefore = cpuSnapshot();
  let toCreate = TRANSFERS;
  const creationStart = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (toCreate-- > 0) {
      const created = await api.post('/v0/transfers', body);
      if (created.status !== 201) throw new Error(`transfer: ${created.status} ${JSON.stringify(created.body)}`);
      ids.push(created.body.id);
      const instructions = created.body.source_deposit_instructions;
      if (deposit) await deposit(created.body);
      else unpaid.push({ amountMinor: parseAmount(instructions.amount, 2)!, reference: instructions.deposit_reference, senderName: 'JANE DOE' });
    }
  }));
  creating = false;
  const createdPerSecond = ids.length / ((performance.now() - creationStart) / 1000);
  await creditFiles;
  if (bank) await sendCredits();
  const measured = await processedPhase(db, ids, cpuBefore, CPU_KINDS);
  // Where the time goes: median time from creation to each named event.
  const steps = (await sql<{ type: string; p50: number }>`
    select e.type, percentile_cont(0.5) within group (order by extract(epoch from e.created_at - t.created_at) * 1000) as p50
    from transfers t join events e on e.object_id = t.id and e.type like 'transfer.%' and e.type <> 'transfer.updated'
    where t.id = any(${ids}) group by e.type order by p50`.execute(db)).rows;
  // The deposits' rail events: when the outbox read found each credit, and when its transfer took it.
  const intake = (await sql<{ received: number; handled: number }>`
    select percentile_cont(0.5) within group (order by extract(epoch from r.received_at - t.created_at) * 1000) as received,
      percentile_cont(0.5) within group (order by extract(epoch from r.handled_at - t.created_at) * 1000) as handled
    from transfers t join rail_events r on r.transfer_id = t.id where t.id = any(${ids})`.execute(db)).rows[0];
  console.log(`${bank ? 'bank files' : 'sandbox simulator'}, median ms from creation: ${steps.map((x) => `${x.type.replace('transfer.', '')} ${Math.round(x.p50)}`).join(', ')}`
    + (intake?.received ? `; deposit read ${Math.round(intake.received)}, handled ${Math.round(intake.handled)}` : ''));
  return { ...measured, createdPerSecond };
}

function report(rounds: { simulator: PhaseResult; files: PhaseResult }[]) {
  console.log(`\n${new Date().toISOString().slice(0, 10)} — ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}; `
    + `${TRANSFERS} ACH→ACH transfers per phase, ${CLIENTS} clients`);
  console.log(`\n| round | rail | processed | created/s (POST and deposit) | transfers/s | created→processed p50 ms | p99 ms | CPU ms per transfer (${Object.keys(CPU_KINDS).join(', ')}) |`);
  console.log('|---|---|---|---|---|---|---|---|');
  rounds.forEach((r, i) => {
    for (const [rail, p] of [['sandbox simulator', r.simulator], ['bank files', r.files]] as const) {
      console.log(`| ${i + 1} | ${rail} | ${p.processed} | ${p.createdPerSecond.toFixed(1)} | ${p.perSecond.toFixed(1)} | ${p.p50} | ${p.p99} | ${p.cpuMs.toFixed(1)} |`);
    }
  });
  const rate = median(rounds.map((r) => r.files.perSecond / r.simulator.perSecond));
  const cpu = median(rounds.map((r) => r.files.cpuMs / r.simulator.cpuMs));
  console.log(`\nbank files, median of ${rounds.length} rounds: ${rate.toFixed(2)} × the simulator's transfers/s, ${cpu.toFixed(2)} × its CPU per transfer`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
