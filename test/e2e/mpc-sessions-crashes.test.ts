import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPublicClient, getAddress, http } from 'viem';
import { testDb, waitFor } from '../harness';
import { apiAndWorkerOfTheirOwn } from '../harness/own-processes';
import { replayWalletHistories } from '../harness/mpc';
import { chainUrl, RECEIVER, transferTestParties, waitForTransferState } from '../harness/transfers';
import { newRecoveryKey } from '../../src/mpc/channel';
import { PlatformApi } from '../../src/signer/client';
import { ShareStore } from '../../src/signer/share-store';
import { MpcSigner } from '../../src/signer/signer';
import { apiClient } from '../harness';

// MPC sessions when things go wrong: a worker SIGKILLed mid key generation or mid signing (the
// session goes on, nothing twice), a signer that never comes (the session expires: the wallet fails,
// the transfer is canceled, its nonce handed back), and a transfer canceled while it waits.

// A killed worker's workflows move to the restarted one after 2 s, not the default 10 s. The crash
// tests go through an API whose sessions last ten minutes, so a slow restart on a loaded machine never
// meets an expiry; the tests that wait for an expiry go through a second API (same queue and worker)
// whose sessions are short. A cancel answers once the signing session has ended (a child workflow
// and an activity): the API waits up to a minute for that answer, not 10 s, on a loaded machine, and
// the test sends the cancel again on a 503, as a client is told to.
const own = apiAndWorkerOfTheirOwn('mpc', {
  MPC_SIGNATURE_EXPIRY_MS: '600000', MPC_KEYGEN_EXPIRY_MS: '600000', WORKER_STICKY_QUEUE_TIMEOUT_SECONDS: '2', WORKFLOW_ANSWER_TIMEOUT_SECONDS: '60',
});
const SHORT_EXPIRIES = { MPC_SIGNATURE_EXPIRY_MS: '40000', MPC_KEYGEN_EXPIRY_MS: '20000' };
const { parties: p } = transferTestParties();
const startedAt = new Date();
let signer: MpcSigner;
/** Through the API of long expiries (crash tests), and through the API of short ones (expiry tests). */
let api: ReturnType<typeof apiClient>;
let shortApi: ReturnType<typeof apiClient>;

beforeAll(async () => {
  await own.startFirstWorker();
  const shortUrl = await own.startAnotherApi('short', SHORT_EXPIRIES);
  api = apiClient(p.t.secret, own.url());
  shortApi = apiClient(p.t.secret, shortUrl);
  signer = new MpcSigner(new PlatformApi(own.url(), p.t.secret), new ShareStore(mkdtempSync(path.join(tmpdir(), 'mpc-signer-'))));
}, 300_000);

const sessionsOf = (walletId: string) => testDb().selectFrom('mpc_sessions').selectAll().where('wallet_id', '=', walletId).orderBy('id').execute();

/** Kills the worker once a session of `kind` has answered round `round`, and starts it again a moment later. */
async function crashWorkerAfterRound(kind: 'key_generation' | 'signing', round: number, since: Date) {
  await waitFor(async () => (await testDb().selectFrom('mpc_sessions').select('id').where('kind', '=', kind).where('created_at', '>=', since)
    .where('rounds_done', '>=', round).executeTakeFirst()), { timeoutMs: 60_000, intervalMs: 20 });
  own.killWorker();
  await new Promise((r) => setTimeout(r, 500));
  own.startWorker();
}

let wallet: { id: string; addresses: Record<string, string> };

test('a worker killed mid key generation: the signer sends the round again, the key generation completes once, one share on each side', async () => {
  const since = new Date(Date.now() - 1000);
  const recovery = await newRecoveryKey();
  const created = signer.createWallet({ customerId: p.us.id, chains: ['base'], recoveryPublicKey: recovery.publicKey });
  await crashWorkerAfterRound('key_generation', 1, since);
  ({ wallet } = await created);
  expect(wallet).toMatchObject({ status: 'active' });
  const [session] = await sessionsOf(wallet.id);
  expect(session).toMatchObject({ status: 'completed', rounds_done: 3 });
  const rounds = await testDb().selectFrom('mpc_platform_rounds').select('round').where('session_id', '=', session!.id).orderBy('round').execute();
  expect(rounds.map((r) => r.round)).toEqual([0, 1, 2, 3]);
  expect(await signer.addressOf(wallet.id)).toBe(getAddress(wallet.addresses.base!));
}, 180_000);

async function fundAndPay(amount: string, through = api) {
  expect((await api.post(`/v0/sandbox/wallets/${wallet.id}/fund`, { chain: 'base', currency: 'usdc', amount })).status).toBe(200);
  await waitFor(async () => (await api.get(`/v0/wallets/${wallet.id}/balances`)).body.data.find((b: any) => b.currency === 'usdc' && b.pending === '0.000000' && b.balance !== '0.000000'));
  const created = await through.post('/v0/transfers', {
    amount, on_behalf_of: p.us.id, source: { payment_rail: 'base', currency: 'usdc', wallet_id: wallet.id }, destination: { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER },
  });
  expect(created.status).toBe(201);
  const request = await waitFor(async () => (await signer.pendingRequests([wallet.id])).find((s) => s.transfer_id === created.body.id), { timeoutMs: 60_000 });
  return { transfer: created.body, request };
}

const nonceOf = (address: string) => createPublicClient({ transport: http(chainUrl('base')) }).getTransactionCount({ address: getAddress(address) });

test('a worker killed mid signing: the signing completes once, one transaction is broadcast, the transfer is processed', async () => {
  const before = await nonceOf(wallet.addresses.base!);
  const since = new Date(Date.now() - 1000);
  const { transfer, request } = await fundAndPay('4.00');
  const cosigned = signer.cosign(wallet.id, request.id);
  await crashWorkerAfterRound('signing', 1, since);
  await cosigned;
  await waitForTransferState(api, transfer.id, 'payment_processed', 120_000);
  const signed = await testDb().selectFrom('wallet_signed_transactions').select('tx_hash').where('transfer_id', '=', transfer.id).execute();
  expect(signed).toHaveLength(1);
  expect(await nonceOf(wallet.addresses.base!)).toBe(before + 1);
}, 240_000);

test('a signature that never comes: the session expires, the transfer is canceled, the nonce is handed back', async () => {
  const { transfer, request } = await fundAndPay('2.00', shortApi);
  const canceled = await waitForTransferState(api, transfer.id, 'canceled', 90_000);
  expect(canceled.state_reason).toMatch(/signature_expired/);
  expect((await api.get(`/v0/wallets/${wallet.id}/mpc_sessions/${request.id}`)).body).toMatchObject({ status: 'expired', next_round: null });
  const message = { session: request.protocol_session, round: 1, from: 2, to: 1, enc: 'AAAA', ciphertext: 'AAAA' };
  const late = await api.post(`/v0/wallets/${wallet.id}/mpc_sessions/${request.id}/messages`, { round: 1, public_key: Buffer.alloc(32, 9).toString('base64'), party: 2, messages: [message] });
  expect([late.status, late.body.error.code]).toEqual([409, 'invalid_state']);
  // The next transfer takes the nonce the expired one did not use, and goes through.
  const next = await fundAndPay('1.00', shortApi);
  expect(next.request.transaction!.nonce).toBe(request.transaction!.nonce);
  await signer.cosign(wallet.id, next.request.id);
  await waitForTransferState(api, next.transfer.id, 'payment_processed', 120_000);
}, 240_000);

/**
 * DELETE as the API tells a client to: a 503 "did not answer" means the cancellation may still be
 * acted on, and sending the same again is the same cancellation (one Update id per transfer).
 */
async function cancelTransfer(id: string) {
  for (let attempt = 1; ; attempt++) {
    const res = await api.delete(`/v0/transfers/${id}`);
    if (res.status !== 503 || attempt === 3) return [res.status, res.status === 200 ? 'canceled' : res.body];
    expect(res.body.error.message).toMatch(/did not answer/);
  }
}

test('a transfer canceled while it waits for the signature: the session ends canceled and can no longer be signed', async () => {
  const { transfer, request } = await fundAndPay('1.50');
  expect(await cancelTransfer(transfer.id)).toEqual([200, 'canceled']);
  await waitForTransferState(api, transfer.id, 'canceled', 60_000);
  await waitFor(async () => (await api.get(`/v0/wallets/${wallet.id}/mpc_sessions/${request.id}`)).body.status === 'canceled');
  await expect(signer.cosign(wallet.id, request.id)).rejects.toThrow(/canceled/);

  // Canceled at once, perhaps before its signing session opened: no session is left to sign.
  const quick = await api.post('/v0/transfers', {
    amount: '1.25', on_behalf_of: p.us.id, source: { payment_rail: 'base', currency: 'usdc', wallet_id: wallet.id }, destination: { payment_rail: 'base', currency: 'usdc', to_address: RECEIVER },
  });
  expect(await cancelTransfer(quick.body.id)).toEqual([200, 'canceled']);
  await waitForTransferState(api, quick.body.id, 'canceled', 60_000);
  await waitFor(async () => {
    const open = await testDb().selectFrom('mpc_sessions').select('id').where('transfer_id', '=', quick.body.id).where('status', '=', 'awaiting_customer').execute();
    return open.length === 0;
  });
}, 300_000);

test('a key generation nobody finishes expires: the wallet is failed, with no key and no address', async () => {
  const res = await shortApi.post('/v0/wallets', { customer_id: p.us.id, type: 'mpc', chains: ['base'] });
  expect(res.body).toMatchObject({ status: 'key_generation', addresses: {} });
  const failed = await waitFor(async () => {
    const w = (await api.get(`/v0/wallets/${res.body.id}`)).body;
    return w.status === 'failed' && w;
  }, { timeoutMs: 60_000 });
  expect(failed.addresses).toEqual({});
  const [session] = await sessionsOf(res.body.id);
  expect(session).toMatchObject({ status: 'expired' });
  const row = await testDb().selectFrom('wallets').select('key_sealed').where('id', '=', res.body.id).executeTakeFirstOrThrow();
  expect(row.key_sealed).toBeNull();
}, 90_000);

test('the histories of crashed, expired and canceled sessions, and of their transfers, replay on the current code', async () => {
  const sessions = await testDb().selectFrom('mpc_sessions').select(['id', 'wallet_id', 'kind', 'status', 'transfer_id']).where('created_at', '>=', startedAt).execute();
  const replayed: string[] = [];
  const withoutHistory: string[] = [];
  for (const walletId of new Set(sessions.map((s) => s.wallet_id))) {
    const histories = await replayWalletHistories(walletId);
    replayed.push(...histories.replayed);
    withoutHistory.push(...histories.withoutHistory);
  }
  // Two key generations; four signings, five if the quick cancel came after its session was recorded.
  expect(sessions.filter((s) => s.kind === 'key_generation')).toHaveLength(2);
  expect(sessions.filter((s) => s.kind === 'signing').length).toBeGreaterThanOrEqual(4);
  // Every transfer and every session has a history that replays, but a signing canceled before its
  // session's workflow started (either cancel of the last test may come that early).
  const mayHaveNone = new Set(sessions.filter((s) => s.kind === 'signing' && s.status === 'canceled').map((s) => `mpc-session:${s.id}`));
  const all = [...sessions.map((s) => `mpc-session:${s.id}`), ...sessions.flatMap((s) => (s.transfer_id ? [`transfer:${s.transfer_id}`] : []))];
  expect(replayed).toEqual(expect.arrayContaining(all.filter((id) => !mayHaveNone.has(id))));
  expect(withoutHistory.filter((id) => !mayHaveNone.has(id))).toEqual([]);
}, 60_000);
