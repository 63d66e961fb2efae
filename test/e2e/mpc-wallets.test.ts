import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPublicClient, getAddress, http, parseTransaction, type Hex } from 'viem';
import { createTenant, runCli, stack, temporalClient, testDb, waitFor } from '../harness';
import { expectNowhereInClear, stackKeyVault } from '../harness/secrets';
import { chainUrl, freshReceiver, RECEIVER, tokenBalance, transferTestParties, waitForTransferState } from '../harness/transfers';
import { sandboxTokenAddress } from '../../src/chains/evm';
import { KeyShare, MpcProtocolError, newMpcSessionId, SignParty } from '../../src/mpc/dkls23';
import { newRecoveryKey, openBackupShare } from '../../src/mpc/channel';
import { PlatformApi } from '../../src/signer/client';
import { broadcast, unsignedTokenTransfer } from '../../src/signer/recovery';
import { ShareStore } from '../../src/signer/share-store';
import { MpcSigner } from '../../src/signer/signer';
import { chainKeys } from '../harness/transfers';
import { decodedHistoryText, replayWalletHistories } from '../harness/mpc';

// MPC wallets end to end (HTTP → API → PostgreSQL → Temporal → activities → anvil), with the shipped
// customer signer running parties 2 (device) and 3 (backup) against the platform's party 1.

const { parties: p } = transferTestParties();
let signer: MpcSigner;
let signerDir: string;
let recovery: { publicKey: string; privateKey: string };
let wallet: { id: string; addresses: Record<string, string>; status: string; mpc_config: unknown };
let backup: string;

beforeAll(async () => {
  signerDir = mkdtempSync(path.join(tmpdir(), 'mpc-signer-'));
  signer = new MpcSigner(new PlatformApi(stack().apiUrl, p.t.secret), new ShareStore(signerDir));
  recovery = await newRecoveryKey();
  ({ wallet, backup } = await signer.createWallet({ customerId: p.us.id, chains: ['base'], recoveryPublicKey: recovery.publicKey }) as never);
}, 120_000);

async function fund(currency: string, amount: string) {
  expect((await p.t.api.post(`/v0/sandbox/wallets/${wallet.id}/fund`, { chain: 'base', currency, amount })).status).toBe(200);
  await waitFor(async () => (await p.t.api.get(`/v0/wallets/${wallet.id}/balances`)).body.data.find((b: any) => b.currency === currency && b.pending === '0.000000' && b.balance !== '0.000000'));
}

const payOut = (amount: string, to = RECEIVER) => p.t.api.post('/v0/transfers', {
  amount, on_behalf_of: p.us.id, source: { payment_rail: 'base', currency: 'usdc', wallet_id: wallet.id }, destination: { payment_rail: 'base', currency: 'usdc', to_address: to },
});

async function pendingSigningOf(transferId: string) {
  return waitFor(async () => (await signer.pendingRequests([wallet.id])).find((s) => s.transfer_id === transferId), { timeoutMs: 60_000 });
}

test('key generation through the API: an active 2-of-3 wallet, one address; the platform holds one sealed share, the signer the device share', async () => {
  expect(wallet).toMatchObject({ status: 'active', mpc_config: { threshold: 2, total_shares: 3, key_type: 'ecdsa' } });
  const address = getAddress(wallet.addresses.base!);
  expect(await signer.addressOf(wallet.id)).toBe(address);
  const [session] = (await p.t.api.get(`/v0/wallets/${wallet.id}/mpc_sessions?kind=key_generation`)).body.data;
  expect(session).toMatchObject({ status: 'completed', next_round: null, address });
  // Lists leave the messages out (about a megabyte for a key generation); the session itself has them.
  expect(session).not.toHaveProperty('messages');
  expect((await p.t.api.get(`/v0/wallets/${wallet.id}/mpc_sessions/${session.id}`)).body.messages.length).toBeGreaterThan(0);
  const row = await testDb().selectFrom('wallets').selectAll().where('id', '=', wallet.id).executeTakeFirstOrThrow();
  const platform = KeyShare.fromBytes(await stackKeyVault().open(row.key_sealed!, { purpose: 'mpc-platform-share', wallet_id: wallet.id }));
  expect([platform.index, platform.address]).toEqual([1, address]);
  // The platform's state between rounds is gone once the protocol ended.
  const states = await testDb().selectFrom('mpc_platform_rounds').select('state_sealed').where('session_id', '=', session.id).orderBy('round').execute();
  expect(states.map((s) => s.state_sealed)).toEqual([null, null, null, null]);
}, 60_000);

test('bad wallet bodies are 400s naming the field: another threshold, a chain without ECDSA keys', async () => {
  const bad = await p.t.api.post('/v0/wallets', { customer_id: p.us.id, type: 'mpc', chains: ['base'], mpc_config: { threshold: 3, total_shares: 3, key_type: 'ecdsa' } });
  expect([bad.status, bad.body.error.source]).toEqual([400, { location: 'body', key: 'mpc_config.threshold' }]);
  const solana = await p.t.api.post('/v0/wallets', { customer_id: p.us.id, type: 'mpc', chains: ['base', 'solana'] });
  expect([solana.status, solana.body.error.source]).toEqual([400, { location: 'body', key: 'chains[1]' }]);
});

test('a transfer from the MPC wallet waits for the co-signature; the signer co-signs; the deposit is sent from the wallet and the payout arrives', async () => {
  await fund('usdc', '40');
  const receiver = freshReceiver();
  const created = await payOut('15.00', receiver);
  expect(created.status).toBe(201);
  const request = await pendingSigningOf(created.body.id);
  expect(request.transaction).toMatchObject({ currency: 'usdc', amount: '15.000000', to: getAddress(created.body.source_deposit_instructions.to_address) });
  const status = await (await temporalClient()).workflow.getHandle(`transfer:${created.body.id}`).query<{ state: string; step: string }>('transferStatus');
  expect(status).toMatchObject({ state: 'awaiting_funds', step: "Waiting for the customer's signature" });

  await signer.cosign(wallet.id, request.id);
  const done = await waitForTransferState(p.t.api, created.body.id, 'payment_processed', 90_000);
  const deposit = await createPublicClient({ transport: http(chainUrl('base')) }).getTransaction({ hash: done.receipt.source_tx_hash });
  expect(getAddress(deposit.from)).toBe(getAddress(wallet.addresses.base!));
  expect(await tokenBalance('base', 'usdc', receiver)).toBe(BigInt(Math.round(Number(done.receipt.final_amount) * 1e6)));
}, 150_000);

test('a lost device: the backup share signs with the platform (parties 1 + 3)', async () => {
  await fund('usdc', '10');
  const created = await payOut('5.00');
  const request = await pendingSigningOf(created.body.id);
  await signer.cosign(wallet.id, request.id, { backup: { sealed: backup, recoveryPrivateKey: recovery.privateKey } });
  expect((await p.t.api.get(`/v0/wallets/${wallet.id}/mpc_sessions/${request.id}`)).body).toMatchObject({ status: 'completed', customer_party: 3 });
  await waitForTransferState(p.t.api, created.body.id, 'payment_processed', 90_000);
}, 150_000);

test('without the platform: the device and backup shares sign a transaction the chain accepts, from the wallet', async () => {
  await fund('usdc', '3');
  const token = sandboxTokenAddress(chainKeys, 'base', 'usdc');
  const from = await signer.addressOf(wallet.id);
  const unsigned = await unsignedTokenTransfer({ rpcUrl: chainUrl('base'), from, token, currency: 'usdc', to: RECEIVER, amount: '1.5' });
  const { signed } = await signer.signWithoutPlatform(wallet.id, unsigned, { sealed: backup, recoveryPrivateKey: recovery.privateKey });
  const hash = await broadcast(chainUrl('base'), signed);
  const receipt = await createPublicClient({ transport: http(chainUrl('base')) }).waitForTransactionReceipt({ hash });
  expect([receipt.status, getAddress(receipt.from)]).toEqual(['success', getAddress(from)]);
}, 90_000);

test("a recovery that takes a pending co-signature's nonce ends that session at once: canceled with why, its transfer canceled, the wallet's funds as the chain holds them", async () => {
  await fund('usdc', '6');
  const created = await payOut('4.00');
  const request = await pendingSigningOf(created.body.id);
  const { nonce } = request.transaction!;
  // The customer, without the platform, sends from the wallet with its two shares: the chain's next nonce is the session's.
  const token = sandboxTokenAddress(chainKeys, 'base', 'usdc');
  const from = await signer.addressOf(wallet.id);
  const unsigned = await unsignedTokenTransfer({ rpcUrl: chainUrl('base'), from, token, currency: 'usdc', to: RECEIVER, amount: '1' });
  expect(parseTransaction(unsigned).nonce).toBe(nonce);
  const { signed } = await signer.signWithoutPlatform(wallet.id, unsigned, { sealed: backup, recoveryPrivateKey: recovery.privateKey });
  await createPublicClient({ transport: http(chainUrl('base')) }).waitForTransactionReceipt({ hash: await broadcast(chainUrl('base'), signed) });

  const ended = await waitFor(async () => {
    const s = (await p.t.api.get(`/v0/wallets/${wallet.id}/mpc_sessions/${request.id}`)).body;
    return s.status !== 'awaiting_customer' && s;
  }, { timeoutMs: 60_000, what: 'the signing session to end' });
  expect(ended).toMatchObject({ status: 'canceled', failure_reason: expect.stringMatching(new RegExp(`^nonce ${nonce} of the wallet's base address was used by a transaction the platform did not co-sign`)) });
  const canceled = await waitForTransferState(p.t.api, created.body.id, 'canceled', 60_000);
  expect(canceled.state_reason).toMatch(/^signature_canceled: nonce \d+ of the wallet's base address was used/);
  const events = (await p.t.api.get(`/v0/events?object_id=${created.body.id}&type=transfer.canceled`)).body.data;
  expect(events).toHaveLength(1);
  // Nothing left the wallet for the transfer: the API's balance is the chain's.
  await waitFor(async () => {
    const usdc = (await p.t.api.get(`/v0/wallets/${wallet.id}/balances`)).body.data.find((b: any) => b.currency === 'usdc');
    return usdc.balance === (Number(await tokenBalance('base', 'usdc', from)) / 1e6).toFixed(6) && usdc.pending === '0.000000';
  }, { timeoutMs: 60_000, what: "the wallet's balance to be the chain's" });
}, 150_000);

test('the signer CLI: a recovery key, the pending requests, cosign --all', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mpc-cli-'));
  const made = runCli(['recovery-key', '--out', path.join(dir, 'recovery.key')], {}, 'signer');
  expect([made.status, made.stdout.trim()]).toEqual([0, expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/)]);
  await fund('usdc', '3');
  const created = await payOut('2.00');
  await pendingSigningOf(created.body.id);
  const env = { PLATFORM_API_URL: stack().apiUrl, PLATFORM_API_KEY: p.t.secret, MPC_SIGNER_DIR: signerDir };
  const pending = runCli(['pending'], env, 'signer');
  expect(pending.status).toBe(0);
  expect(JSON.parse(pending.stdout)).toContainEqual(expect.objectContaining({ wallet_id: wallet.id, transfer_id: created.body.id }));
  const cosigned = runCli(['cosign', '--all'], env, 'signer');
  expect([cosigned.status, cosigned.stderr]).toEqual([0, '']);
  expect(cosigned.stdout).toMatch(/mpcs_\w+: signed/);
  await waitForTransferState(p.t.api, created.body.id, 'payment_processed', 90_000);
}, 150_000);

test("a replayed, foreign or altered message is refused and changes nothing; another tenant's session is a 404", async () => {
  await fund('usdc', '2');
  const created = await payOut('1.00');
  const request = await pendingSigningOf(created.body.id);
  const url = `/v0/wallets/${wallet.id}/mpc_sessions/${request.id}/messages`;
  const foreign = { session: newMpcSessionId(), round: 1, from: 2, to: 1, enc: 'AAAA', ciphertext: 'AAAA' };
  const refused = await p.t.api.post(url, { round: 1, public_key: Buffer.alloc(32, 7).toString('base64'), party: 2, messages: [foreign] });
  expect([refused.status, refused.body.error.source?.key]).toEqual([400, 'messages']);
  const altered = await p.t.api.post(url, { round: 1, public_key: Buffer.alloc(32, 7).toString('base64'), party: 2, messages: [{ ...foreign, session: request.protocol_session }] });
  expect(altered.status).toBe(400);
  expect(altered.body.error.message).toMatch(/does not open/);
  const outOfOrder = await p.t.api.post(url, { round: 2, messages: [{ ...foreign, session: request.protocol_session, round: 2 }] });
  expect(outOfOrder.status).toBe(409);
  expect((await p.t.api.get(`/v0/wallets/${wallet.id}/mpc_sessions/${request.id}`)).body).toMatchObject({ status: 'awaiting_customer', next_round: 1, messages: [] });

  const other = await createTenant();
  expect((await other.api.get(`/v0/wallets/${wallet.id}/mpc_sessions/${request.id}`)).status).toBe(404);
  expect((await other.api.post(url, { round: 1, messages: [foreign] })).status).toBe(404);
  // After all that, the real signer still co-signs it.
  await signer.cosign(wallet.id, request.id);
  await waitForTransferState(p.t.api, created.body.id, 'payment_processed', 90_000);
}, 150_000);

test("the platform's share alone cannot sign; no share's secret is anywhere on the platform's side in the clear", async () => {
  const row = await testDb().selectFrom('wallets').select('key_sealed').where('id', '=', wallet.id).executeTakeFirstOrThrow();
  const platform = KeyShare.fromBytes(await stackKeyVault().open(row.key_sealed!, { purpose: 'mpc-platform-share', wallet_id: wallet.id }));
  const hash = `0x${'11'.repeat(32)}` as Hex;
  expect(() => new SignParty(platform, newMpcSessionId(), [1], hash)).toThrow(MpcProtocolError);
  const alone = new SignParty(platform, newMpcSessionId(), [1, 2], hash);
  alone.round1();
  expect(() => alone.round2([])).toThrow(/lacks the messages of party 2/);

  // No share's secret (the platform's, the device's, the backup's) is in any table, log or workflow
  // history in the clear: the platform holds its own sealed, and never receives the other two.
  const secretOf = (share: KeyShare) => JSON.parse(share.toBytes().toString('utf8')).party.poly_point as string;
  const device = await (signer as unknown as { store: ShareStore }).store.load(wallet.id);
  const spare = KeyShare.fromBytes((await openBackupShare(backup, recovery.privateKey)).share);
  const secrets = [platform, device, spare].map(secretOf);
  expect(new Set(secrets).size).toBe(3);
  const sessions = await testDb().selectFrom('mpc_sessions').select(['id', 'transfer_id']).where('wallet_id', '=', wallet.id).execute();
  const histories = await Promise.all([...sessions.map((s) => `mpc-session:${s.id}`), ...sessions.flatMap((s) => (s.transfer_id ? [`transfer:${s.transfer_id}`] : []))]
    .map(decodedHistoryText));
  expect(histories.join('').includes(wallet.id)).toBe(true); // decoded: the payloads are readable here
  for (const secret of secrets) {
    expect(secret).toMatch(/^[0-9A-F]{64}$/);
    await expectNowhereInClear(secret);
    for (const history of histories) expect(history.toUpperCase().includes(secret)).toBe(false);
  }
}, 60_000);

test('the histories of these sessions and of the transfers that waited for them replay on the current code', async () => {
  const { replayed, withoutHistory } = await replayWalletHistories(wallet.id);
  // The key generation, five signings (one canceled by a recovery's nonce, on the nonce-watching branch) and their five transfers.
  expect([replayed.length, withoutHistory]).toEqual([11, []]);
}, 60_000);
