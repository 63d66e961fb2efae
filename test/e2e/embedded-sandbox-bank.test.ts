import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EVM_CHAINS } from '../../src/domain/rails';
import { apiClient, waitFor } from '../harness';
import { alive, signalGroup, startNpm, untilRunning } from '../harness/npm-start';
import { freePort, freePortRange } from '../harness/stack';
import { approvedCustomer, internationalAccount, sandboxDeposit, verifiedUsAccount, waitForTransferState } from '../harness/transfers';

// `npm start` with one setting, SANDBOX_BANK=on (docs/BANK_FILES.md, "In the sandbox"): a real
// OpenSSH server and the sandbox bank behind it. The sandbox's ACH and SEPA payments go out in
// files the developer can read under DATA_DIR, and the bank answers them as a bank does: a
// pain.002 for every SEPA message, returns and rejections for the magic amounts; sandbox deposits
// arrive as its credit files; its statements state all of it.

let dataDir: string;
let env: NodeJS.ProcessEnv;
let run: ReturnType<typeof startNpm> | undefined;
const POLL_MS = 250;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fp-sandbox-bank-'));
  const port = await freePort();
  env = {
    PATH: process.env.PATH, HOME: process.env.HOME, TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH,
    DATA_DIR: dataDir, PORT: String(port), PGLITE_PORT: String(await freePort()), TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()), ANVIL_BASE_PORT: String(await freePortRange(EVM_CHAINS.length)),
    SOLANA_NODE_PORT: String(await freePort()), BITCOIN_NODE_PORT: String(await freePort()),
    SANDBOX_BANK: 'on', SANDBOX_BANK_SFTP_PORT: String(await freePort()), SANDBOX_BANK_POLL_SECONDS: '1',
    BANK_FILE_WINDOW_SECONDS: '2', BANK_FILE_SETTLEMENT_SECONDS: '3', SANDBOX_BANK_STATEMENT_SECONDS: '5',
  };
});

afterAll(() => {
  if (run) signalGroup(run.child, 'SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('SANDBOX_BANK=on: sandbox ACH and SEPA payouts go out in files the sandbox bank answers over SFTP (a return R01, a pain.002 acceptance and an AC04 rejection) and states in BAI2 and camt.053 statements the platform keeps; the developer reads them under DATA_DIR and in bank-files list; Ctrl-C stops the SFTP server too', async () => {
  run = startNpm(env, 'sandbox-bank');
  await untilRunning(run);
  expect(run.log()).toMatch(new RegExp(`Sandbox bank: sftp://\\S+@127\\.0\\.0\\.1:${env.SANDBOX_BANK_SFTP_PORT} \\(folders in ${dataDir}/bank/bank\\)`));
  const api = apiClient(fs.readFileSync(path.join(dataDir, 'default-sandbox-key'), 'utf8').trim(), `http://127.0.0.1:${env.PORT}`, { waitOutRateLimits: true });

  // ACH: the micro-deposits went out in a file; two payouts, the one of .14 returned by the bank.
  const us = await approvedCustomer(api, 'US');
  const account = await verifiedUsAccount(api, us.id, '40005550001');
  const achPayout = (amount: string) => api.post('/v0/transfers', {
    amount, on_behalf_of: us.id, source: { payment_rail: 'ach', currency: 'usd' },
    destination: { payment_rail: 'ach', currency: 'usd', external_account_id: account.id },
  });
  const paid = (await achPayout('25.00')).body;
  const returned = (await achPayout('25.14')).body;
  // SEPA: a payout the bank accepts, and one of .13 it rejects (AC04).
  const de = await approvedCustomer(api, 'DE');
  const iban = await internationalAccount(api, de.id, 'FR1420041010050500013M02606', 'PSSTFRPPXXX', 'FR');
  const sepaPayout = (amount: string) => api.post('/v0/transfers', {
    amount, on_behalf_of: de.id, source: { payment_rail: 'sepa', currency: 'eur' },
    destination: { payment_rail: 'sepa', currency: 'eur', external_account_id: iban.id },
  });
  const accepted = (await sepaPayout('40.00')).body;
  for (const t of [paid, returned, accepted]) await sandboxDeposit(api, t.id);
  await waitForTransferState(api, accepted.id, 'payment_processed', 120_000, POLL_MS);
  // In a message of its own: the bank rejects only that one.
  const rejected = (await sepaPayout('40.13')).body;
  await sandboxDeposit(api, rejected.id);

  await waitForTransferState(api, paid.id, 'payment_processed', 120_000, POLL_MS);
  await waitFor(async () => (await api.get(`/v0/transfers/${returned.id}`)).body.state === 'returned', { what: 'the ACH payout of .14 returned', timeoutMs: 120_000, intervalMs: POLL_MS });
  const undeliverable = await waitFor(async () => (await api.get('/v0/events?type=transfer.undeliverable')).body.data.find((e: any) => e.data.id === rejected.id),
    { what: 'the SEPA payout of .13 rejected', timeoutMs: 120_000, intervalMs: POLL_MS });
  expect(undeliverable.data.state_reason).toContain('AC04');

  // What went each way, on disk where the developer looks.
  const bankDir = path.join(dataDir, 'bank', 'bank');
  const taken = fs.readdirSync(path.join(bankDir, 'taken'));
  const outbox = fs.readdirSync(path.join(bankDir, 'outbox'));
  expect(taken.some((n) => /^ACH-\d{8}-[A-Z0-9]\.ach$/.test(n))).toBe(true);
  expect(taken.some((n) => /^SCT-\d{8}-\d+\.xml$/.test(n))).toBe(true);
  expect(outbox.some((n) => n.startsWith('RET-ACH-'))).toBe(true);
  // The deposits came as the bank sends them: NACHA credits and camt.054 credit notifications.
  expect(outbox.filter((n) => /^CRD-.*\.ach$/.test(n)).length).toBe(2);
  expect(outbox.filter((n) => /^NTF-CRD-.*\.xml$/.test(n)).length).toBe(2);
  const reports = outbox.filter((n) => n.startsWith('STS-SCT-')).map((n) => fs.readFileSync(path.join(bankDir, 'outbox', n), 'utf8'));
  expect(reports.filter((r) => r.includes('<GrpSts>ACCP</GrpSts>')).length).toBeGreaterThanOrEqual(1);
  expect(reports.filter((r) => r.includes('<TxSts>RJCT</TxSts>') && r.includes('<Cd>AC04</Cd>'))).toHaveLength(1);
  expect(fs.readdirSync(path.join(bankDir, 'inbox')).filter((n) => !n.endsWith('.part'))).toEqual([]);

  // The bank's end-of-day statements (every 5 s here) state what it booked: the ACH batches out and
  // the return back, the SEPA batch out; the platform keeps them for the reconciliation.
  const statements = await waitFor(async () => {
    const names = fs.readdirSync(path.join(bankDir, 'outbox')).filter((n) => /^(BAI|STM)-/.test(n) && !n.endsWith('.part'));
    const texts = names.map((n) => fs.readFileSync(path.join(bankDir, 'outbox', n), 'utf8'));
    return texts.some((t) => t.includes(',261,2514,')) && texts.some((t) => t.includes(',142,2514,')) && texts.some((t) => t.includes('<Btch>')) ? names : undefined;
  }, { what: 'statements stating the day\'s movements', timeoutMs: 60_000, intervalMs: 500 });
  expect(statements.some((n) => n.startsWith('BAI-')) && statements.some((n) => n.startsWith('STM-'))).toBe(true);

  // And in the operators' list, on the embedded database npm start serves.
  const listed = spawnSync('npm', ['run', '-s', 'cli', '--', 'bank-files', 'list'], { cwd: path.join(__dirname, '../..'), env, encoding: 'utf8' });
  expect(listed.stdout).toMatch(/ out +SCT-\d{8}-\d+\.xml +uploaded/);
  expect(listed.stdout).toMatch(/ in +RET-ACH-\d{8}-[A-Z0-9]\.ach +processed/);
  expect(listed.stdout).toMatch(/ in +BAI-\d{8}-\d+\.txt +processed .*statement of 9000012345: \d+ entries, closing -?\d+\.\d\d/);

  // Ctrl-C: everything stops, the SFTP server with the rest.
  const sshdPid = Number(fs.readFileSync(path.join(dataDir, 'bank', 'sftp-server.pid'), 'utf8').split(' ')[0]);
  signalGroup(run.child, 'SIGINT');
  await waitFor(async () => !alive(-run!.child.pid!) && !alive(sshdPid), { timeoutMs: 30_000, what: 'npm start and its SFTP server to stop' });
}, 420_000);
