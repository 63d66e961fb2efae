// `npm run bench:mpc`: MPC wallets through the API on the whole stack on this machine (API and worker
// processes, PostgreSQL, the Temporal dev server, anvil), beside the DKLs23 library's own figures
// measured in the same run with all parties in this process. Prints markdown for docs/BENCHMARKS.md:
// - key generation: the shipped signer's createWallet (POST to an active wallet: three rounds, parties
//   2 and 3 here, the platform's party in the worker) against an in-process 2-of-3 DKG;
// - signing: the signer's co-signature of a transfer's request (its three rounds) against an
//   in-process two-party signing.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Hex } from 'viem';
import { newRecoveryKey } from '../src/mpc/channel';
import { KeygenParty, newMpcSessionId, PARTIES, signLocally, type KeyShare, type MpcMessage, type PartyIndex } from '../src/mpc/dkls23';
import { PlatformApi } from '../src/signer/client';
import { ShareStore } from '../src/signer/share-store';
import { MpcSigner } from '../src/signer/signer';
import { documents } from '../test/harness/documents';
import { createUnlimitedKey, startStack } from '../test/harness/stack';
import { percentile as percentileOfSorted } from './stats';

const KEYGENS = Number(process.env.BENCH_KEYGENS ?? 3);
const SIGNINGS = Number(process.env.BENCH_SIGNINGS ?? 20);
const RECEIVER = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';

const to = (messages: MpcMessage[], party: PartyIndex) => messages.filter((m) => m.to === party);
const percentile = (xs: number[], p: number) => percentileOfSorted([...xs].sort((a, b) => a - b), p);
const median = (xs: number[]) => percentile(xs, 50);

function inProcessKeygen(): KeyShare[] {
  const session = newMpcSessionId();
  const parties = PARTIES.map((i) => new KeygenParty(session, i));
  const r1 = parties.flatMap((p) => p.round1());
  const r2 = parties.flatMap((p) => p.round2(to(r1, p.index)));
  const r3 = parties.flatMap((p) => p.round3(to(r2, p.index)));
  return parties.map((p) => p.finish(to(r3, p.index)));
}

const inProcessSign = (a: KeyShare, b: KeyShare) => signLocally(a, b, `0x${randomBytes(32).toString('hex')}` as Hex);

async function timed<T>(fn: () => Promise<T> | T): Promise<[number, T]> {
  const start = performance.now();
  const out = await fn();
  return [performance.now() - start, out];
}

async function main() {
  const stack = await startStack({ name: 'benchmpc', logDir: path.join(__dirname, '../test-logs/bench-mpc'), extraEnv: { LOG_LEVEL: 'warn' } });
  try {
    const key = await createUnlimitedKey(stack.info.databaseUrl);
    const headers = { 'Api-Key': key, 'Content-Type': 'application/json' };
    const api = async (method: string, p: string, body?: unknown) => (await (await fetch(`${stack.info.apiUrl}${p}`, { method, headers, body: body ? JSON.stringify(body) : undefined })).json()) as any;
    const customer = await api('POST', '/v0/customers', {
      type: 'individual', email: 'bench.mpc@example.com', first_name: 'Bench', last_name: 'Mark', date_of_birth: '1990-04-12',
      address: { line1: '1 Market St', city: 'San Francisco', postal_code: '94105', country: 'US' },
    });
    await api('POST', `/v0/customers/${customer.id}/kyc`, documents());
    for (let i = 0; i < 300 && (await api('GET', `/v0/customers/${customer.id}`)).kyc_status !== 'approved'; i++) await new Promise((r) => setTimeout(r, 100));
    const signer = new MpcSigner(new PlatformApi(stack.info.apiUrl, key), new ShareStore(mkdtempSync(path.join(os.tmpdir(), 'bench-mpc-'))));
    const recovery = await newRecoveryKey();

    // Key generation: in process, then through the API, alternating so that both see the same machine.
    const local: number[] = [];
    const viaApi: number[] = [];
    let walletId = '';
    for (let i = 0; i < KEYGENS; i++) {
      local.push((await timed(inProcessKeygen))[0]);
      const [ms, created] = await timed(() => signer.createWallet({ customerId: customer.id, chains: ['base'], recoveryPublicKey: recovery.publicKey }));
      viaApi.push(ms);
      walletId = created.wallet.id;
    }

    // Signing: the same number of in-process signings, then co-signatures of transfers' requests.
    const shares = inProcessKeygen();
    const localSign: number[] = [];
    for (let i = 0; i < SIGNINGS; i++) localSign.push((await timed(() => inProcessSign(shares[0]!, shares[1]!)))[0]);
    await api('POST', `/v0/sandbox/wallets/${walletId}/fund`, { chain: 'base', currency: 'usdc', amount: String(SIGNINGS + 10) });
    for (let i = 0; i < 600; i++) {
      const balance = (await api('GET', `/v0/wallets/${walletId}/balances`)).data.find((b: any) => b.currency === 'usdc');
      if (balance?.pending === '0.000000' && balance.balance !== '0.000000') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const cosign: number[] = [];
    for (let i = 0; i < SIGNINGS; i++) {
      const transfer = await api('POST', '/v0/transfers', {
        amount: '1.00', on_behalf_of: customer.id, source: { payment_rail: 'base', currency: 'usdc', wallet_id: walletId }, destination: { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER },
      });
      if (!transfer.id) throw new Error(`transfer refused: ${JSON.stringify(transfer)}`);
      let request;
      for (let j = 0; j < 600 && !request; j++) {
        request = (await signer.pendingRequests([walletId])).find((s) => s.transfer_id === transfer.id && s.platform_public_key);
        if (!request) await new Promise((r) => setTimeout(r, 50));
      }
      cosign.push((await timed(() => signer.cosign(walletId, request!.id)))[0]);
    }

    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    const f = (ms: number) => Math.round(ms).toLocaleString('en');
    console.log(`\n${new Date().toISOString().slice(0, 10)} — ${os.cpus().length} cores (${cpu}), Node ${process.version}, ${KEYGENS} key generations, ${SIGNINGS} signings each way`);
    console.log('\n| | in process (all parties here) | through the API (signer ↔ API ↔ Temporal ↔ worker) | ratio |');
    console.log('|---|---|---|---|');
    console.log(`| key generation, median ms | ${f(median(local))} | ${f(median(viaApi))} | ${(median(viaApi) / median(local)).toFixed(2)} |`);
    console.log(`| signing p50 ms | ${f(percentile(localSign, 50))} | ${f(percentile(cosign, 50))} | ${(percentile(cosign, 50) / percentile(localSign, 50)).toFixed(2)} |`);
    console.log(`| signing p99 ms | ${f(percentile(localSign, 99))} | ${f(percentile(cosign, 99))} | ${(percentile(cosign, 99) / percentile(localSign, 99)).toFixed(2)} |`);
    console.log(`\nKey generation through the API / in process: ${(median(viaApi) / median(local)).toFixed(2)} (target ≤ 1.5); signing p50 through the API: ${f(percentile(cosign, 50))} ms (target ≤ 500)`);
  } finally {
    await stack.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
