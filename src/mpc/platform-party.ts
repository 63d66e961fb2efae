import type { Transaction } from 'kysely';
import { getAddress, keccak256, parseTransaction, serializeTransaction, type Hex } from 'viem';
import type { Db } from '../db';
import type { Database, MpcSessionRow } from '../db/schema';
import type { KeyVault } from '../keys/key-vault';
import { MpcChannelKey } from './channel';
import { KeygenParty, KeyShare, MpcProtocolError, SignParty, type MpcMessage, type PartyIndex } from './dkls23';
import { activateMpcWallet } from '../wallets/mpc-wallet';
import { walletDepositKey } from '../transfers/wallet-legs';
import { walletKeyContext } from '../wallets/wallet';
import { customerRound, type MpcRoundSubmission, type PlatformAnswer } from './sessions';

// The platform's party (party 1) of an MPC session (docs/MPC.md). It runs inside activities only:
// between two rounds its state (the protocol's secrets and its session key) is sealed under the key
// vault and stored with what it sent, one row per round, written once. A round that is asked again
// (a retried activity, a repeated request) answers the stored row; a refused message changes nothing.

const PLATFORM: PartyIndex = 1;

interface PlatformState {
  /** The platform's session key (X25519 private key, base64). */
  channel: string;
  /** The protocol party's snapshot, base64; absent before a signing's first round. */
  party?: string;
}

export interface PlatformPartyDeps {
  db: Db;
  keys: KeyVault;
}

const stateContext = (sessionId: string, round: number) => ({ purpose: 'mpc-session-state', session_id: sessionId, round: String(round) });
const shareContext = (walletId: string) => walletKeyContext({ id: walletId, type: 'mpc' });

async function loadSession(db: Db | Transaction<Database>, sessionId: string): Promise<MpcSessionRow> {
  return db.selectFrom('mpc_sessions').selectAll().where('id', '=', sessionId).executeTakeFirstOrThrow();
}

async function sealState(deps: PlatformPartyDeps, sessionId: string, round: number, state: PlatformState): Promise<string> {
  return deps.keys.seal(Buffer.from(JSON.stringify(state)), stateContext(sessionId, round));
}

async function openState(deps: PlatformPartyDeps, sessionId: string, round: number): Promise<PlatformState> {
  const row = await deps.db.selectFrom('mpc_platform_rounds').select('state_sealed').where('session_id', '=', sessionId).where('round', '=', round).executeTakeFirstOrThrow();
  if (!row.state_sealed) throw new MpcProtocolError(`session ${sessionId} has ended`);
  const plain = await deps.keys.open(row.state_sealed, stateContext(sessionId, round));
  try {
    return JSON.parse(plain.toString('utf8')) as PlatformState;
  } finally {
    plain.fill(0);
  }
}

/**
 * Opens the platform's side of a session (round 0): a fresh session key, whose public half the
 * customer's signer seals its messages to, and for a key generation a fresh party. Idempotent.
 */
export async function openPlatformParty(deps: PlatformPartyDeps, sessionId: string): Promise<{ publicKey: string }> {
  const session = await loadSession(deps.db, sessionId);
  if (session.platform_public_key) return { publicKey: session.platform_public_key };
  const channel = await MpcChannelKey.generate();
  const party = session.kind === 'key_generation' ? new KeygenParty(session.protocol_session, PLATFORM).snapshot().toString('base64') : undefined;
  const sealed = await sealState(deps, sessionId, 0, { channel: (await channel.privateKeyBytes()).toString('base64'), party });
  await deps.db.transaction().execute(async (trx) => {
    const inserted = await trx.insertInto('mpc_platform_rounds').values({ session_id: sessionId, round: 0, state_sealed: sealed, messages: '[]', created_at: new Date() })
      .onConflict((oc) => oc.columns(['session_id', 'round']).doNothing()).executeTakeFirst();
    if (inserted.numInsertedOrUpdatedRows === 0n) return;
    await trx.updateTable('mpc_sessions').set({ platform_public_key: channel.publicKey, updated_at: new Date() }).where('id', '=', sessionId).execute();
  });
  return { publicKey: (await loadSession(deps.db, sessionId)).platform_public_key! };
}

/** The platform's answer to a customer round, stored once: a repeated round gets the same answer. */
async function storedAnswer(deps: PlatformPartyDeps, session: MpcSessionRow, round: number): Promise<PlatformAnswer | null> {
  const row = await deps.db.selectFrom('mpc_platform_rounds').select('round').where('session_id', '=', session.id).where('round', '=', round).executeTakeFirst();
  return row ? { status: (await loadSession(deps.db, session.id)).status } : null;
}

/** Where a signing's transaction is stored once signed: the key the transfer's wallet send reads. */
const signedTransactionKey = (session: { transfer_id: string | null; id: string }) => (session.transfer_id ? walletDepositKey(session.transfer_id) : `${session.id}:mpc`);

/**
 * The customer's round `submission.round`: its messages opened (sealed by the customer's session key
 * to the platform's, bound to this session and round), the platform's round(s) run, the new state
 * sealed and stored with the platform's messages (sealed to the customer's key) in one transaction.
 */
export async function answerCustomerRound(deps: PlatformPartyDeps, sessionId: string, round: number, beat: () => void = () => undefined): Promise<PlatformAnswer> {
  const session = await loadSession(deps.db, sessionId);
  const stored = await storedAnswer(deps, session, round);
  if (stored) return stored;
  const submission = await customerRound(deps.db, sessionId, round);
  if (session.status !== 'awaiting_customer') throw new MpcProtocolError(`the session is ${session.status}`);
  if (submission.round !== session.rounds_done + 1) throw new MpcProtocolError(`round ${session.rounds_done + 1} is due, not round ${submission.round}`);
  if (session.expires_at.getTime() < Date.now()) throw new MpcProtocolError('the session has expired');
  const customerKey = submission.round === 1 ? submission.public_key : session.customer_public_key;
  if (!customerKey) throw new MpcProtocolError('round 1 carries the customer\'s session key (public_key)');
  const customerParties = customerPartiesOf(session, submission);
  const state = await openState(deps, sessionId, submission.round - 1);
  const channel = await MpcChannelKey.fromPrivateKey(Buffer.from(state.channel, 'base64'));
  const inbox = await openInbox(channel, session, submission, customerParties, customerKey);
  beat();
  const step = session.kind === 'key_generation'
    ? await keygenStep(deps, session, state, inbox, submission)
    : await signStep(deps, session, state, inbox, submission.round, customerParties[0]!);
  beat();
  const sealedOut = await Promise.all(step.out.map((m) => channel.seal(m, customerKey)));
  const nextState = step.party ? await sealState(deps, sessionId, submission.round, { channel: state.channel, party: step.party.toString('base64') }) : null;
  await deps.db.transaction().execute(async (trx) => {
    const inserted = await trx.insertInto('mpc_platform_rounds').values({
      session_id: sessionId, round: submission.round, state_sealed: nextState, messages: JSON.stringify(sealedOut), created_at: new Date(),
    }).onConflict((oc) => oc.columns(['session_id', 'round']).doNothing()).executeTakeFirst();
    if (inserted.numInsertedOrUpdatedRows === 0n) return; // answered meanwhile: that answer stands
    await trx.updateTable('mpc_sessions').set({
      rounds_done: submission.round, updated_at: new Date(),
      ...(submission.round === 1 ? { customer_public_key: customerKey, customer_party: session.kind === 'signing' ? customerParties[0]! : null } : {}),
    }).where('id', '=', sessionId).execute();
    if (step.finished) {
      await step.finished(trx);
      // The protocol's state between rounds is of no use once it ended: none of it is kept, even sealed.
      await trx.updateTable('mpc_platform_rounds').set({ state_sealed: null }).where('session_id', '=', sessionId).execute();
    }
  });
  return (await storedAnswer(deps, session, submission.round))!;
}

function customerPartiesOf(session: MpcSessionRow, submission: MpcRoundSubmission): PartyIndex[] {
  if (session.kind === 'key_generation') return [2, 3];
  const party = submission.round === 1 ? submission.party : session.customer_party;
  if (party !== 2 && party !== 3) throw new MpcProtocolError('round 1 of a signing names the customer\'s share that signs (party 2 or 3)');
  return [party];
}

/** The customer's messages of this round, each from one of its parties to the platform, opened. */
async function openInbox(channel: MpcChannelKey, session: MpcSessionRow, submission: MpcRoundSubmission, parties: PartyIndex[], customerKey: string): Promise<MpcMessage[]> {
  for (const m of submission.messages) {
    if (m.session !== session.protocol_session) throw new MpcProtocolError('a message of another session');
    if (m.round !== submission.round) throw new MpcProtocolError(`a round-${m.round} message in round ${submission.round}`);
    if (m.to !== PLATFORM || !parties.includes(m.from)) throw new MpcProtocolError(`a message from party ${m.from} to party ${m.to}: this round takes messages from party ${parties.join(' and ')} to party 1`);
  }
  return Promise.all(submission.messages.map((m) => channel.open(m, customerKey)));
}

interface Step {
  out: MpcMessage[];
  /** The party's next snapshot; none once the protocol ended. */
  party?: Buffer;
  /** What the end of the protocol writes, in the transaction that stores the round. */
  finished?: (trx: Transaction<Database>) => Promise<void>;
}

/** Key generation: customer round 1 → platform rounds 1 and 2; 2 → 3; 3 → the share, if both sides found one address. */
async function keygenStep(deps: PlatformPartyDeps, session: MpcSessionRow, state: PlatformState, inbox: MpcMessage[], submission: MpcRoundSubmission): Promise<Step> {
  const party = KeygenParty.restore(Buffer.from(state.party!, 'base64'));
  if (submission.round === 1) return { out: [...party.round1(), ...party.round2(inbox)], party: party.snapshot() };
  if (submission.round === 2) return { out: party.round3(inbox), party: party.snapshot() };
  const share = party.finish(inbox);
  if (!submission.address || getAddress(submission.address) !== share.address) {
    throw new MpcProtocolError(`the customer's parties found the address ${submission.address ?? '(none)'}, the platform ${share.address}: `
      + 'a party sent different values to different parties; run a new key generation');
  }
  const bytes = share.toBytes();
  const sealed = await deps.keys.seal(bytes, shareContext(session.wallet_id));
  bytes.fill(0);
  return {
    out: [],
    finished: async (trx) => {
      await trx.updateTable('mpc_sessions').set({ status: 'completed' }).where('id', '=', session.id).execute();
      await activateMpcWallet(trx, session.wallet_id, { address: share.address, keySealed: sealed, kekId: deps.keys.currentKekId });
    },
  };
}

/** Signing: customer round 1 → platform rounds 1 and 2; 2 → 3; 3 → the signature, the transaction signed and stored. */
async function signStep(deps: PlatformPartyDeps, session: MpcSessionRow, state: PlatformState, inbox: MpcMessage[], round: number, peer: PartyIndex): Promise<Step> {
  const share = await platformShare(deps, session.wallet_id);
  const party = state.party ? SignParty.restore(share, Buffer.from(state.party, 'base64')) : new SignParty(share, session.protocol_session, [PLATFORM, peer], session.signing_hash as Hex);
  if (round === 1) return { out: [...party.round1(), ...party.round2(inbox)], party: party.snapshot() };
  if (round === 2) return { out: party.round3(inbox), party: party.snapshot() };
  const signature = await party.finish(inbox);
  const signed = serializeTransaction(parseTransaction(session.transaction!.serialized as Hex), signature);
  return {
    out: [],
    finished: async (trx) => {
      await trx.updateTable('mpc_sessions').set({ status: 'completed', signature: JSON.stringify(signature) }).where('id', '=', session.id).execute();
      await trx.insertInto('wallet_signed_transactions').values({
        idempotency_key: signedTransactionKey(session), wallet_id: session.wallet_id, transfer_id: session.transfer_id, chain: session.chain!,
        signed_transaction: signed, tx_hash: keccak256(signed), created_at: new Date(),
      }).onConflict((oc) => oc.column('idempotency_key').doNothing()).execute();
    },
  };
}

/** The platform's key share of an MPC wallet, opened for one signing. */
async function platformShare(deps: PlatformPartyDeps, walletId: string): Promise<KeyShare> {
  const wallet = await deps.db.selectFrom('wallets').select(['key_sealed']).where('id', '=', walletId).executeTakeFirstOrThrow();
  if (!wallet.key_sealed) throw new MpcProtocolError(`wallet ${walletId} has no key yet`);
  const bytes = await deps.keys.open(wallet.key_sealed, shareContext(walletId));
  try {
    return KeyShare.fromBytes(bytes);
  } finally {
    bytes.fill(0);
  }
}

