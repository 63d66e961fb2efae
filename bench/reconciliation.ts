// `npm run bench:reconciliation`: one day's BAI2 statement of N credit lines (default 100,000)
// reconciled against N deposits on the books (src/reconciliation/runs.ts: the statement read from
// its stored file, the books' lines read from PostgreSQL, matched, and every match recorded), beside
// a plain parse of the same file (src/providers/bank-files/statements.ts) in the same run: the cost
// per line of each and their ratio. 2 % of the lines carry no reference (matched by amount and date).
// Target of issue 65: under 60 s, within 2 GB. Needs PostgreSQL (TEST_DATABASE_ADMIN_URL).
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { DataCipher } from '../src/crypto';
import { createDb, migrateToLatest, type Db } from '../src/db';
import { newId } from '../src/ids';
import { readStatementFile } from '../src/providers/bank-files/statements';
import { reconcileStatementFile } from '../src/reconciliation/runs';
import { bai2Statement, type BookedLine } from '../src/sandbox-bank/statements';
import { adminQuery, adminUrl } from '../test/harness/stack';

const LINES = Number(process.env.BENCH_LINES ?? 100_000);
const UNREFERENCED_EVERY = 50;
const ACCOUNT = '9000012345';

/** Runs `fn`, answering its wall time and the peak RSS of the process (sampled every 5 ms). */
async function measured<T>(fn: () => Promise<T>): Promise<{ ms: number; peakMb: number; value: T }> {
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const started = performance.now();
  const value = await fn();
  const ms = performance.now() - started;
  clearInterval(sampler);
  return { ms, peakMb: Math.max(peak, process.memoryUsage().rss) / 2 ** 20, value };
}

const amountOf = (i: number) => BigInt(1_000 + ((i * 7_919) % 900_000));
const referenceOf = (i: number) => `DEP${String(i).padStart(9, '0')}`;

/** The books' side: N deposits the bank's files credited (rail events), received an hour ago (not timed). */
async function seedDeposits(db: Db, receivedAt: Date) {
  for (let at = 0; at < LINES; at += 5_000) {
    await db.insertInto('rail_events').values(Array.from({ length: Math.min(5_000, LINES - at) }, (_, k) => {
      const i = at + k;
      return {
        id: `bench-evt-${i}`, type: 'payment.received', provider_payment_id: `ach:BENCH:${i}`, outcome: 'deposit_received', transfer_id: null,
        payload: JSON.stringify({ amount: (Number(amountOf(i)) / 100).toFixed(2), reference: referenceOf(i) }), received_at: receivedAt, handled_at: receivedAt,
        resolved_by: null, resolved_note: null, resolved_at: null, sender_encrypted: null,
      };
    })).execute();
  }
}

/** The bank's statement of the same credits, in another order; every 50th without our reference. */
function statementText(at: Date): string {
  const lines: BookedLine[] = Array.from({ length: LINES }, (_, k) => {
    const i = (k * 48_271) % LINES; // a permutation when LINES and 48,271 share no factor
    return {
      direction: 'credit', amountMinor: amountOf(i), bankReference: `SB${i}`, customerReference: i % UNREFERENCED_EVERY === 0 ? '' : referenceOf(i),
      bai2TypeCode: '165', bankTransactionCode: 'PMNT/RCDT/ESCT', text: 'ACH CREDIT',
    };
  });
  return bai2Statement({ sequence: 1, at, account: ACCOUNT, currency: 'usd', openingMinor: 0n, lines, bankId: '091000019', customerId: '1234567890' });
}

async function main() {
  const dbName = `fp_bench_reconciliation_${process.pid}`;
  await adminQuery(`create database ${dbName}`);
  const db = createDb(adminUrl().replace(/\/[^/]*$/, `/${dbName}`), 4);
  try {
    await migrateToLatest(db);
    const cipher = new DataCipher(randomBytes(32));
    const now = new Date();
    await seedDeposits(db, new Date(now.getTime() - 3_600_000));
    const text = statementText(now);
    const fileId = newId('bankFile');
    await db.insertInto('bank_files').values({
      id: fileId, rail: 'ach', direction: 'inbound', name: 'BAI-BENCH.txt', file_id_modifier: null, sha256: 'bench', contents_encrypted: cipher.encrypt(text),
      entry_count: LINES, total_debit_minor: 0n, total_credit_minor: 0n, status: 'processed', created_at: now, uploaded_at: null,
    }).execute();

    const parse = await measured(async () => readStatementFile(text));
    const parsedLines = parse.value[0]?.entries ?? 0;
    const run = await measured(() => reconcileStatementFile(db, cipher, fileId, { environment: 'production', tolerances: { shortfallMinor: 0n, days: 2 } }, now));
    const outcome = run.value[0]!;
    const recorded = await db.selectFrom('reconciliation_matches').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    if (outcome.matched !== LINES || outcome.exceptions !== 0 || Number(recorded.n) !== LINES) {
      throw new Error(`expected ${LINES} matches and no exception; got ${outcome.matched} matched (${recorded.n} recorded), ${outcome.exceptions} exceptions`);
    }
    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    console.log(`\n${now.toISOString().slice(0, 10)} — ${os.cpus().length} cores (${cpu}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; `
      + `${LINES} statement lines (${parsedLines} parsed) against ${LINES} deposits, ${LINES / UNREFERENCED_EVERY} without a reference; file ${(text.length / 2 ** 20).toFixed(1)} MB`);
    console.log('\n| step | wall ms | µs per line | peak RSS MB |');
    console.log('|---|---|---|---|');
    console.log(`| plain parse of the file | ${parse.ms.toFixed(0)} | ${((parse.ms * 1000) / LINES).toFixed(1)} | ${parse.peakMb.toFixed(0)} |`);
    console.log(`| reconciliation (read, match, record ${outcome.matched} matches) | ${run.ms.toFixed(0)} | ${((run.ms * 1000) / LINES).toFixed(1)} | ${run.peakMb.toFixed(0)} |`);
    console.log(`\nreconciliation ÷ plain parse: ${(run.ms / parse.ms).toFixed(1)} ×; target: under 60 s (${(run.ms / 1000).toFixed(1)} s) within 2 GB (${run.peakMb.toFixed(0)} MB)`);
  } finally {
    await db.destroy();
    await adminQuery(`drop database if exists ${dbName} with (force)`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
