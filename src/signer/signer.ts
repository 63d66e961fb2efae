import { randomUUID } from 'node:crypto';
import { decodeFunctionData, erc20Abi, getAddress, keccak256, parseTransaction, serializeTransaction, type Hex } from 'viem';
import { ASSET_SCALE, parseAmount } from '../domain/money';
import { MpcChannelKey, openBackupShare, sealBackupShare, type SealedMpcMessage } from '../mpc/channel';
import { KeygenParty, KeyShare, MpcProtocolError, signLocally, SignParty, type EcdsaSignature, type MpcMessage, type PartyIndex } from '../mpc/dkls23';
import { PlatformApi, type MpcSessionSummaryView, type MpcSessionView, type WalletView } from './client';
import type { ShareStore } from './share-store';

// The customer's side of MPC wallets (docs/MPC.md): runs parties 2 (the device share, kept in the
// signer's store) and 3 (the backup share, sealed to the customer's recovery key and handed out)
// against the platform's party 1 through the API. Every message to the platform is sealed to its
// session key; every message from it is opened with the signer's. The signer checks what it signs.

const POLL_MS = 100;
const POLL_LIMIT_MS = 30_000;

/** Waits until the session's platform party is open (its session key published). */
async function openedSession(api: PlatformApi, walletId: string, sessionId: string): Promise<MpcSessionView> {
  const until = Date.now() + POLL_LIMIT_MS;
  for (;;) {
    const session = await api.session(walletId, sessionId);
    if (session.status !== 'awaiting_customer') throw new MpcProtocolError(`session ${sessionId} is ${session.status}${session.failure_reason ? `: ${session.failure_reason}` : ''}`);
    if (session.platform_public_key) return session;
    if (Date.now() > until) throw new Error(`the platform did not open session ${sessionId} within ${POLL_LIMIT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** The platform's messages of `round` to `to`, opened. */
async function fromPlatform(key: MpcChannelKey, session: MpcSessionView, round: number, to: PartyIndex): Promise<MpcMessage[]> {
  const mine = session.messages.filter((m) => m.round === round && m.to === to && m.from === 1);
  return Promise.all(mine.map((m) => key.open(m, session.platform_public_key!)));
}

const toPlatform = (key: MpcChannelKey, session: MpcSessionView, messages: MpcMessage[]): Promise<SealedMpcMessage[]> =>
  Promise.all(messages.filter((m) => m.to === 1).map((m) => key.seal(m, session.platform_public_key!)));
const to = (messages: MpcMessage[], party: PartyIndex) => messages.filter((m) => m.to === party);

export interface CreatedMpcWallet {
  wallet: WalletView;
  /** The backup share, sealed to the recovery public key: store it apart from the device (offline). */
  backup: string;
}

export class MpcSigner {
  constructor(private readonly api: PlatformApi, private readonly store: ShareStore) {}

  /**
   * Creates an MPC wallet and runs its key generation: the device share goes to the store, the
   * backup share comes back sealed to `recoveryPublicKey`. The wallet is active once both sides
   * found the same address.
   */
  async createWallet(input: { customerId: string; chains: string[]; label?: string; recoveryPublicKey: string }): Promise<CreatedMpcWallet> {
    const created = await this.api.createMpcWallet({ customer_id: input.customerId, chains: input.chains, label: input.label }, randomUUID());
    const [keygen] = await this.api.sessions(created.id, { kind: 'key_generation' });
    if (!keygen) throw new Error(`wallet ${created.id} has no key generation session`);
    const [device, backup] = await this.generateKey(created.id, keygen.id);
    await this.store.save(created.id, device);
    const sealedBackup = await sealBackupShare(backup.toBytes(), input.recoveryPublicKey, created.id);
    return { wallet: await this.api.wallet(created.id), backup: sealedBackup };
  }

  /** Parties 2 and 3 of a key generation with the platform's party 1: three rounds through the API. */
  private async generateKey(walletId: string, sessionId: string): Promise<[KeyShare, KeyShare]> {
    let session = await openedSession(this.api, walletId, sessionId);
    const key = await MpcChannelKey.generate();
    const parties = [new KeygenParty(session.protocol_session, 2), new KeygenParty(session.protocol_session, 3)] as const;
    const r1 = parties.flatMap((p) => p.round1());
    session = await this.api.postRound(walletId, sessionId, { round: 1, public_key: key.publicKey, messages: await toPlatform(key, session, r1) });
    const r2: MpcMessage[] = [];
    for (const p of parties) r2.push(...p.round2([...to(r1, p.index), ...(await fromPlatform(key, session, 1, p.index))]));
    session = await this.api.postRound(walletId, sessionId, { round: 2, messages: await toPlatform(key, session, r2) });
    const r3: MpcMessage[] = [];
    for (const p of parties) r3.push(...p.round3([...to(r2, p.index), ...(await fromPlatform(key, session, 2, p.index))]));
    const shares: KeyShare[] = [];
    for (const p of parties) shares.push(p.finish([...to(r3, p.index), ...(await fromPlatform(key, session, 3, p.index))]));
    if (shares[0]!.address !== shares[1]!.address) throw new MpcProtocolError('the device and backup shares disagree on the address');
    session = await this.api.postRound(walletId, sessionId, { round: 3, messages: await toPlatform(key, session, r3), address: shares[0]!.address });
    if (session.status !== 'completed' || !session.address || getAddress(session.address) !== shares[0]!.address) {
      throw new MpcProtocolError(`the key generation did not complete: ${session.status} ${session.failure_reason ?? ''}`);
    }
    return [shares[0]!, shares[1]!];
  }

  /** The wallet's address, from the device share (no call to the platform). */
  async addressOf(walletId: string): Promise<Hex> {
    return (await this.store.load(walletId)).address;
  }

  /** The signing requests waiting for this signer: every awaiting signing session of the wallets it holds a share of. */
  async pendingRequests(walletIds = this.store.wallets()): Promise<MpcSessionSummaryView[]> {
    const all = await Promise.all(walletIds.map((id) => this.api.sessions(id, { kind: 'signing', status: 'awaiting_customer' })));
    return all.flat();
  }

  /**
   * Co-signs a signing request with the platform, after checking what it signs: the transaction
   * hashes to the signing hash and is the token transfer the request says. With `backup` (the sealed
   * backup share and the recovery private key), signs with the backup share instead of the device's
   * (a lost device: platform + backup).
   */
  async cosign(walletId: string, sessionId: string, opts: { backup?: { sealed: string; recoveryPrivateKey: string } } = {}): Promise<EcdsaSignature> {
    let session = await openedSession(this.api, walletId, sessionId);
    if (session.kind !== 'signing' || !session.transaction || !session.signing_hash) throw new MpcProtocolError(`session ${sessionId} is not a signing request`);
    checkTransaction(session);
    const share = opts.backup ? await backupShare(walletId, opts.backup) : await this.store.load(walletId);
    const key = await MpcChannelKey.generate();
    const party = new SignParty(share, session.protocol_session, [1, share.index], session.signing_hash as Hex);
    const s1 = party.round1();
    session = await this.api.postRound(walletId, sessionId, { round: 1, public_key: key.publicKey, party: share.index as 2 | 3, messages: await toPlatform(key, session, s1) });
    const s2 = party.round2(await fromPlatform(key, session, 1, share.index));
    session = await this.api.postRound(walletId, sessionId, { round: 2, messages: await toPlatform(key, session, s2) });
    const s3 = party.round3(await fromPlatform(key, session, 2, share.index));
    const signature = await party.finish(await fromPlatform(key, session, 3, share.index));
    session = await this.api.postRound(walletId, sessionId, { round: 3, messages: await toPlatform(key, session, s3) });
    if (session.status !== 'completed') throw new MpcProtocolError(`the signing did not complete: ${session.status} ${session.failure_reason ?? ''}`);
    return signature;
  }

  /**
   * Without the platform (customer + backup): signs a transaction with the device and backup shares,
   * both in this process, and returns it serialized, ready for any node of the chain.
   */
  async signWithoutPlatform(walletId: string, unsigned: Hex, backup: { sealed: string; recoveryPrivateKey: string }): Promise<{ signed: Hex; txHash: Hex }> {
    const device = await this.store.load(walletId);
    const spare = await backupShare(walletId, backup);
    const signature = await signLocally(device, spare, keccak256(unsigned));
    const signed = serializeTransaction(parseTransaction(unsigned), signature);
    return { signed, txHash: keccak256(signed) };
  }
}

async function backupShare(walletId: string, backup: { sealed: string; recoveryPrivateKey: string }): Promise<KeyShare> {
  const opened = await openBackupShare(backup.sealed, backup.recoveryPrivateKey);
  if (opened.walletId !== walletId) throw new MpcProtocolError(`the backup share is of ${opened.walletId}, not ${walletId}`);
  try {
    return KeyShare.fromBytes(opened.share);
  } finally {
    opened.share.fill(0);
  }
}

/** What the signer signs is what the request says: the hash is the transaction's, and the transaction the token transfer shown. */
function checkTransaction(session: MpcSessionView) {
  const t = session.transaction!;
  if (keccak256(t.serialized as Hex) !== session.signing_hash) throw new MpcProtocolError('the signing hash is not the transaction\'s');
  const tx = parseTransaction(t.serialized as Hex);
  if (tx.chainId !== t.chain_id || tx.nonce !== t.nonce || !tx.to || getAddress(tx.to) !== getAddress(t.token) || (tx.value ?? 0n) !== 0n) {
    throw new MpcProtocolError('the transaction is not the one the request describes (chain, nonce, contract or value)');
  }
  const call = decodeFunctionData({ abi: erc20Abi, data: tx.data! });
  if (call.functionName !== 'transfer' || getAddress(call.args[0] as Hex) !== getAddress(t.to) || call.args[1] !== parseAmount(t.amount, ASSET_SCALE[t.currency] ?? -1)) {
    throw new MpcProtocolError('the transaction does not pay the receiver and amount the request names');
  }
}
