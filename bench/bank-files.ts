// `npm run bench:bank-files`: one ACH window of 10,000 payments — the file built, checked and
// recorded with its payments in PostgreSQL, then uploaded over SFTP (src/bank-files/ach-window.ts,
// outbound-files.ts) — against the transport's ceiling: the same bytes written to the same SFTP
// server by the SFTP client alone over a connection opened as the channel opens its own (Nagle's
// algorithm off), in the same run; the client's defaults are timed too, for the earlier entries.
// Target of issue 48: ≤ 2 × the ceiling's time. Time and peak memory (RSS above the process's level
// before the round) per round, the ratio of the medians, and the same for the upload step alone.
// Needs PostgreSQL (TEST_DATABASE_ADMIN_URL) and sshd (scripts/install-sftp-server.sh).
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import SftpClient from 'ssh2-sftp-client';
import { fileAchWindow } from '../src/bank-files/ach-window';
import { uploadRecordedFile } from '../src/bank-files/outbound-files';
import { DataCipher } from '../src/crypto';
import { createDeveloper } from '../src/admin/accounts';
import { createDb, migrateToLatest, type Db } from '../src/db';
import { newId } from '../src/ids';
import { SftpChannel, connectWithoutDelay } from '../src/providers/bank-files/sftp-channel';
import { startSftpServer } from '../test/harness/sftp-server';
import { TEST_ODFI, adminQuery, adminUrl } from '../test/harness/stack';

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

/** ENTRIES queued payouts to as many US accounts (not timed). */
async function seed(db: Db, cipher: DataCipher, round: number, developerId: string) {
  const now = new Date();
  const customer = newId('customer');
  await db.insertInto('customers').values({
    id: customer, developer_id: developerId, environment: 'production', type: 'individual', email: 'bench@example.com', first_name: 'Bench', last_name: 'Mark',
    status: 'active', kyc_status: 'approved', created_at: now, updated_at: now,
  } as never).execute();
  for (let at = 0; at < ENTRIES; at += 1000) {
    const accounts = Array.from({ length: Math.min(1000, ENTRIES - at) }, (_, i) => {
      const number = String(100_000_000 + round * ENTRIES + at + i);
      return {
        id: newId('externalAccount'), developer_id: developerId, environment: 'production' as const, customer_id: customer, type: 'us_bank_account' as const,
        status: 'verified' as const, account_name: 'BENCH MARK', account_type: 'checking', routing_number: '021000021', number_encrypted: cipher.encrypt(number),
        last4: number.slice(-4), fingerprint: `bench:${number}`, created_at: now, updated_at: now,
      };
    });
    await db.insertInto('external_accounts').values(accounts as never).execute();
    await db.insertInto('bank_payments').values(accounts.map((a, i) => ({
      id: newId('bankPayment'), developer_id: developerId, environment: 'production' as const, rail: 'ach', direction: 'credit' as const,
      amount_minor: String(1000 + ((at + i) % 9000)), currency: 'usd', external_account_id: a.id, purpose: 'payout',
      idempotency_key: `bench:${round}:${at + i}`, reference: null, status: 'queued' as const, code: null, created_at: now,
    }))).execute();
  }
}

/** Runs `fn`, answering its wall time and the peak RSS above the level before it (sampled every 5 ms). */
async function measured<T>(fn: () => Promise<T>): Promise<{ ms: number; peakMb: number; value: T }> {
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const started = performance.now();
  const value = await fn();
  const ms = performance.now() - started;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  return { ms, peakMb: (peak - base) / 2 ** 20, value };
}

/** The transport alone: connect, put `bytes`, close; `withoutDelay` opens the socket as the channel does. */
async function putAlone(settings: { host: string; port: number; username: string; privateKey: string }, bytes: Buffer, target: string, withoutDelay: boolean) {
  const client = new SftpClient();
  const sock = withoutDelay ? await connectWithoutDelay(settings.host, settings.port) : undefined;
  await client.connect({ ...(sock ? { sock } : {}), host: settings.host, port: settings.port, username: settings.username, privateKey: settings.privateKey });
  try {
    await client.put(bytes, target);
  } finally {
    await client.end();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const server = await startSftpServer();
  const dbName = `fp_bench_bank_${process.pid}`;
  await adminQuery(`create database ${dbName}`);
  const db = createDb(adminUrl().replace(/\/[^/]*$/, `/${dbName}`), 4);
  try {
    await migrateToLatest(db);
    const developer = await createDeveloper(db, { name: 'bench' });
    const cipher = new DataCipher(randomBytes(32));
    const settings = { host: server.host, port: server.port, username: server.username, privateKey: server.privateKey, hostKey: server.hostKey, inbox: 'inbox', outbox: 'outbox' };
    const channel = new SftpChannel(settings);
    const window = {
      originator: { odfiRouting: TEST_ODFI.routing, odfiName: TEST_ODFI.name, companyId: TEST_ODFI.companyId, companyName: TEST_ODFI.companyName },
      environment: 'production' as const, rails: ['ach'] as const, settlementSeconds: 0,
    };
    const rows: { platformMs: number; fileMs: number; platformMb: number; ceilingMs: number; ceilingMb: number; defaultsMs: number; bytes: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await seed(db, cipher, round, developer.id);
      // The window as production runs it: file built and recorded with its payments, then uploaded.
      let fileMs = 0;
      const platform = await measured(async () => {
        const started = performance.now();
        const filed = await fileAchWindow(db, cipher, { ...window, rails: [...window.rails] }, { id: `bench-window-${round}`, kind: 'ach_standard' });
        fileMs = performance.now() - started;
        if (!filed || filed.entryCount !== ENTRIES) throw new Error(`the window filed ${filed?.entryCount ?? 0} payments, not ${ENTRIES}`);
        await uploadRecordedFile(db, cipher, channel, filed.fileId);
        return filed;
      });
      const stored = await db.selectFrom('bank_files').select('contents_encrypted').where('id', '=', platform.value.fileId).executeTakeFirstOrThrow();
      const bytes = cipher.decrypt(stored.contents_encrypted);
      // The ceiling: the same bytes, one connection (opened as the channel opens its own), one put.
      const ceiling = await measured(() => putAlone(settings, bytes, `inbox/ceiling-${round}.ach`, true));
      // The same with the client's own socket (Nagle's algorithm on), as this bench measured before.
      const defaults = await measured(() => putAlone(settings, bytes, `inbox/defaults-${round}.ach`, false));
      rows.push({ platformMs: platform.ms, fileMs, platformMb: platform.peakMb, ceilingMs: ceiling.ms, ceilingMb: ceiling.peakMb, defaultsMs: defaults.ms, bytes: bytes.length });
    }
    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    console.log(`\n${new Date().toISOString().slice(0, 10)} — ${os.cpus().length} cores (${cpu}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}; ${ENTRIES} entries, ${ROUNDS} rounds`);
    console.log('\n| round | file bytes | window ms (of which build and record; upload) | its peak RSS MB | SFTP put alone ms | its peak RSS MB | time ratio | upload ÷ put alone | put alone, client defaults ms |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    rows.forEach((r, i) => console.log(`| ${i + 1} | ${r.bytes} | ${r.platformMs.toFixed(0)} (${r.fileMs.toFixed(0)}; ${(r.platformMs - r.fileMs).toFixed(0)}) | ${r.platformMb.toFixed(1)} `
      + `| ${r.ceilingMs.toFixed(0)} | ${r.ceilingMb.toFixed(1)} | ${(r.platformMs / r.ceilingMs).toFixed(2)} | ${((r.platformMs - r.fileMs) / r.ceilingMs).toFixed(2)} | ${r.defaultsMs.toFixed(0)} |`));
    const [windowMs, ceilingMs, upload] = [median(rows.map((r) => r.platformMs)), median(rows.map((r) => r.ceilingMs)), median(rows.map((r) => r.platformMs - r.fileMs))];
    console.log(`\nmedian window ${windowMs.toFixed(0)} ms vs ceiling ${ceilingMs.toFixed(0)} ms: ${(windowMs / ceilingMs).toFixed(2)} × (target ≤ 2 ×); `
      + `the upload step ${upload.toFixed(0)} ms: ${(upload / ceilingMs).toFixed(2)} ×; put alone with the client's defaults ${median(rows.map((r) => r.defaultsMs)).toFixed(0)} ms`);
  } finally {
    await db.destroy();
    await adminQuery(`drop database if exists ${dbName} with (force)`);
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
