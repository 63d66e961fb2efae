import { randomBytes } from 'node:crypto';
import { getAddress, recoverAddress, type Hex } from 'viem';
import { dkls23 } from './dkls23-wasm';

// 2-of-3 threshold ECDSA (DKLs23) for MPC wallets (docs/MPC.md): key generation and signing as
// round-based state machines, one per party, exchanging messages that any transport can carry (JSON).
// The library computes; this file adds what it leaves to its caller: every message is bound to its
// session, round, sender and receiver, and refused otherwise; a party's rounds run once, in order;
// commitments are taken in the round before their openings; signatures come out low-S and are checked
// against the key's address before they are returned.

export type PartyIndex = 1 | 2 | 3;
export const PARTIES: readonly PartyIndex[] = [1, 2, 3];
const PARAMETERS = { threshold: 2, share_count: 3 };

/** One protocol message from one party to another: `body` is the library's JSON. */
export interface MpcMessage {
  /** The key generation's or signing's session id (64 hex characters). */
  session: string;
  round: number;
  from: PartyIndex;
  to: PartyIndex;
  body: string;
}

/** A message that does not belong where it was given, a round out of order, or the library refusing: nothing changes. */
export class MpcProtocolError extends Error {
  override name = 'MpcProtocolError';
}

/** A fresh session id: never reuse one (the library accepts a reused signing id silently). */
export const newMpcSessionId = () => randomBytes(32).toString('hex');

// The library's structures hold Maps (Rust BTreeMaps) and byte arrays: JSON keeps them as
// {"__map": [[k, v], …]} and {"__bytes": base64}.
const encode = (value: unknown) => JSON.stringify(value, (_k, v) => {
  if (v instanceof Map) return { __map: [...v.entries()] };
  if (v instanceof Uint8Array) return { __bytes: Buffer.from(v).toString('base64') };
  return v;
});
const decode = (text: string): any => JSON.parse(text, (_k, v) => {
  if (v && typeof v === 'object' && Array.isArray(v.__map)) return new Map(v.__map);
  if (v && typeof v === 'object' && typeof v.__bytes === 'string') return new Uint8Array(Buffer.from(v.__bytes, 'base64'));
  return v;
});

const sessionBytes = (session: string) => {
  if (!/^[0-9a-f]{64}$/.test(session)) throw new MpcProtocolError('a session id is 64 lower-case hex characters');
  return [...Buffer.from(session, 'hex')];
};

/** Runs a library call; its failures (an `Err`, or a panic of the WebAssembly) become MpcProtocolError. */
function call<T>(what: string, fn: () => any): T {
  let out: any;
  try {
    out = fn();
  } catch (err) {
    throw new MpcProtocolError(`${what} failed in the DKLs23 library: ${(err as Error).message}`);
  }
  if (out && typeof out === 'object' && !Array.isArray(out) && ('Ok' in out || 'Err' in out)) {
    if ('Err' in out) throw new MpcProtocolError(`${what} refused: ${encode(out.Err)}`);
    return out.Ok as T;
  }
  return out as T;
}

/** What rounds a party has run, and the messages of one round from the parties it expects. */
class Rounds {
  constructor(readonly session: string, readonly me: PartyIndex, readonly peers: PartyIndex[], public done = 0) {}

  /** Runs round `n` (once, after round n - 1); a round that fails (a refused message) changes nothing and may run again. */
  run<T>(n: number, round: () => T): T {
    if (this.done !== n - 1) throw new MpcProtocolError(`round ${n} cannot run now (${this.done} done)`);
    const out = round();
    this.done = n;
    return out;
  }

  /** Exactly one message of `round` from each peer, addressed to this party in this session. */
  take(inbox: MpcMessage[], round: number): Map<PartyIndex, any> {
    const got = new Map<PartyIndex, any>();
    for (const m of inbox) {
      if (m.session !== this.session) throw new MpcProtocolError(`a message of another session (${m.session})`);
      if (m.round !== round) throw new MpcProtocolError(`a round-${m.round} message where round ${round} is due`);
      if (m.to !== this.me) throw new MpcProtocolError(`a message for party ${m.to} given to party ${this.me}`);
      if (!this.peers.includes(m.from)) throw new MpcProtocolError(`a message from party ${m.from}, not one of ${this.peers.join(', ')}`);
      if (got.has(m.from)) throw new MpcProtocolError(`two round-${round} messages from party ${m.from}`);
      got.set(m.from, decode(m.body));
    }
    const missing = this.peers.filter((p) => !got.has(p));
    if (missing.length > 0) throw new MpcProtocolError(`round ${round} lacks the messages of party ${missing.join(', ')}`);
    return got;
  }

  /** This party's messages of `round`, one to each peer. */
  send(round: number, bodyFor: (to: PartyIndex) => unknown): MpcMessage[] {
    return this.peers.map((to) => ({ session: this.session, round, from: this.me, to, body: encode(bodyFor(to)) }));
  }
}

/** A library message addressed from `from` to `to` (its `parties` field), checked against who sent it. */
function addressed(message: any, from: PartyIndex, to: PartyIndex) {
  if (message?.parties?.sender !== from || message?.parties?.receiver !== to) {
    throw new MpcProtocolError(`party ${from} sent a message addressed ${message?.parties?.sender} → ${message?.parties?.receiver}`);
  }
  return message;
}

/**
 * One party's key generation (DKG, 4 phases): `round1()`, then `round2(inbox)` and `round3(inbox)`
 * with the previous round's messages to it, then `finish(inbox)` for its key share. Round-1 fragments
 * and round-3 seeds are secrets: the transport must encrypt messages between parties end to end.
 */
export class KeygenParty {
  private readonly rounds: Rounds;
  private readonly kept: Record<string, any> = {};

  constructor(readonly session: string, readonly index: PartyIndex) {
    sessionBytes(session);
    this.rounds = new Rounds(session, index, PARTIES.filter((p) => p !== index));
  }

  private get data() {
    return { parameters: PARAMETERS, party_index: this.index, session_id: sessionBytes(this.session) };
  }

  /** The rounds run so far: the state between two rounds. */
  get roundsDone(): number {
    return this.rounds.done;
  }

  /** The party's state between rounds, to be sealed before it is stored (it holds secrets). */
  snapshot(): Buffer {
    return Buffer.from(encode({ format: 'dkls23-keygen-1', session: this.session, index: this.index, done: this.rounds.done, kept: this.kept }));
  }

  static restore(bytes: Uint8Array): KeygenParty {
    const state = decode(Buffer.from(bytes).toString('utf8'));
    if (state?.format !== 'dkls23-keygen-1') throw new MpcProtocolError('not a key generation state of this backend');
    const party = new KeygenParty(state.session, state.index);
    party.rounds.done = state.done;
    Object.assign(party.kept, state.kept);
    return party;
  }

  round1(): MpcMessage[] {
    return this.rounds.run(1, () => {
      const fragments = call<string[]>('key generation phase 1', () => dkls23().phase1_wasm_binding(this.data));
      this.kept.ownFragment = fragments[this.index - 1];
      return this.rounds.send(1, (to) => ({ fragment: fragments[to - 1] }));
    });
  }

  /** Takes the fragments; sends the commitment to its proof (the proof itself follows in round 3). */
  round2(inbox: MpcMessage[]): MpcMessage[] {
    return this.rounds.run(2, () => {
      const got = this.rounds.take(inbox, 1);
      const fragments = PARTIES.map((p) => (p === this.index ? this.kept.ownFragment : got.get(p).fragment));
      const [polyPoint, proofCommitment, zeroKeep, zeroTransmit, bipKeep, bipBroadcast] = call<any[]>('key generation phase 2', () => dkls23().phase2_wasm_binding(this.data, fragments));
      Object.assign(this.kept, { polyPoint, proofCommitment, zeroKeep, bipKeep, bipBroadcast, ownFragment: undefined });
      return this.rounds.send(2, (to) => ({
        commitment: proofCommitment.commitment, zero: zeroTransmit.find((m: any) => m.parties.receiver === to), bip: bipBroadcast,
      }));
    });
  }

  round3(inbox: MpcMessage[]): MpcMessage[] {
    return this.rounds.run(3, () => {
      const got = this.rounds.take(inbox, 2);
      this.kept.commitments = new Map([...got].map(([p, body]) => [p, body.commitment]));
      this.kept.zeroReceived2 = [...got].map(([p, body]) => addressed(body.zero, p, this.index));
      this.kept.bip2 = this.bipBroadcasts(got, this.kept.bipBroadcast);
      const [zeroKeep3, zeroTransmit3, mulKeep, mulTransmit, bipBroadcast3] = call<any[]>('key generation phase 3', () => dkls23().phase3_wasm_binding(this.data, this.kept.zeroKeep, this.kept.bipKeep));
      Object.assign(this.kept, { zeroKeep3, mulKeep, bipBroadcast3, zeroKeep: undefined, bipKeep: undefined });
      return this.rounds.send(3, (to) => ({
        proof: this.kept.proofCommitment.proof, zero: zeroTransmit3.find((m: any) => m.parties.receiver === to),
        mul: mulTransmit.find((m: any) => m.parties.receiver === to), bip: bipBroadcast3,
      }));
    });
  }

  finish(inbox: MpcMessage[]): KeyShare {
    return this.rounds.run(4, () => {
      const got = this.rounds.take(inbox, 3);
      // Each proof with the commitment its sender made a round earlier.
      const proofs = PARTIES.map((p) => (p === this.index ? this.kept.proofCommitment : { index: p, proof: got.get(p).proof, commitment: this.kept.commitments.get(p) }));
      const zeroReceived3 = [...got].map(([p, body]) => addressed(body.zero, p, this.index));
      const mulReceived = [...got].map(([p, body]) => addressed(body.mul, p, this.index));
      const party = call<any>('key generation phase 4', () => dkls23().phase4_wasm_binding(
        this.data, this.kept.polyPoint, proofs, this.kept.zeroKeep3, this.kept.zeroReceived2, zeroReceived3, this.kept.mulKeep, mulReceived,
        this.kept.bip2, this.bipBroadcasts(got, this.kept.bipBroadcast3),
      ));
      for (const key of Object.keys(this.kept)) delete this.kept[key];
      return KeyShare.fromParty(party);
    });
  }

  /** The derivation broadcasts of every party (ours too), by sender, each checked to name its sender. */
  private bipBroadcasts(got: Map<PartyIndex, any>, own: any): Map<number, any> {
    const all = new Map<number, any>([[this.index, own]]);
    for (const [p, body] of got) {
      if (body.bip?.sender_index !== p) throw new MpcProtocolError(`party ${p} sent a derivation message of party ${body.bip?.sender_index}`);
      all.set(p, body.bip);
    }
    return all;
  }
}

/** One party's share of the key: its index, the key's public key and Ethereum address, and the secret material. */
export class KeyShare {
  private constructor(private readonly party: any) {}

  static fromParty(party: any): KeyShare {
    if (!PARTIES.includes(party?.party_index) || typeof party?.pk !== 'string' || typeof party?.eth_address !== 'string') {
      throw new MpcProtocolError('not a DKLs23 key share');
    }
    return new KeyShare(party);
  }

  get index(): PartyIndex {
    return this.party.party_index;
  }

  /** The compressed secp256k1 public key, hex. */
  get publicKey(): string {
    return this.party.pk.toLowerCase();
  }

  get address(): Hex {
    return getAddress(this.party.eth_address);
  }

  /** The share for storage (sealed by the key vault before it is stored): versioned JSON. */
  toBytes(): Buffer {
    return Buffer.from(encode({ format: 'dkls23-wasm-1', party: this.party }));
  }

  static fromBytes(bytes: Uint8Array): KeyShare {
    const parsed = decode(Buffer.from(bytes).toString('utf8'));
    if (parsed?.format !== 'dkls23-wasm-1') throw new MpcProtocolError('not a key share of this backend (format dkls23-wasm-1)');
    return KeyShare.fromParty(parsed.party);
  }

  /** For the signing rounds only. */
  libraryParty(): any {
    return this.party;
  }
}

export interface EcdsaSignature {
  r: Hex;
  s: Hex;
  yParity: 0 | 1;
}

/**
 * One party's part in signing a 32-byte hash with another party (DKLs23 signing, 4 phases):
 * `round1()`, `round2(inbox)`, `round3(inbox)`, then `finish(inbox)` for the signature, which is
 * low-S and checked to recover to the key's address.
 */
export class SignParty {
  private readonly rounds: Rounds;
  private readonly kept: Record<string, any> = {};
  private readonly peer: PartyIndex;

  constructor(private readonly share: KeyShare, readonly session: string, signers: readonly PartyIndex[], private readonly hash: Hex) {
    if (!/^0x[0-9a-fA-F]{64}$/.test(hash)) throw new MpcProtocolError('the hash to sign is 32 bytes, hex');
    const distinct = [...new Set(signers)];
    if (distinct.length !== 2 || !distinct.includes(share.index) || !distinct.every((p) => PARTIES.includes(p))) {
      throw new MpcProtocolError(`two distinct parties sign, this one (${share.index}) among them`);
    }
    this.peer = distinct.find((p) => p !== share.index)!;
    this.rounds = new Rounds(session, share.index, [this.peer]);
    sessionBytes(session);
  }

  private get data() {
    return { sign_id: sessionBytes(this.session), counterparties: [this.peer], message_hash: [...Buffer.from(this.hash.slice(2), 'hex')] };
  }

  get roundsDone(): number {
    return this.rounds.done;
  }

  /** Which share signs (1 platform, 2 device, 3 backup). */
  get index(): PartyIndex {
    return this.share.index;
  }

  /** The party's state between rounds (without its share), to be sealed before it is stored. */
  snapshot(): Buffer {
    return Buffer.from(encode({ format: 'dkls23-sign-1', session: this.session, peer: this.peer, hash: this.hash, done: this.rounds.done, kept: this.kept }));
  }

  /** A signing party from its snapshot and its share (the same share, and the same signature asked for). */
  static restore(share: KeyShare, bytes: Uint8Array): SignParty {
    const state = decode(Buffer.from(bytes).toString('utf8'));
    if (state?.format !== 'dkls23-sign-1') throw new MpcProtocolError('not a signing state of this backend');
    const party = new SignParty(share, state.session, [share.index, state.peer], state.hash);
    party.rounds.done = state.done;
    Object.assign(party.kept, state.kept);
    return party;
  }

  round1(): MpcMessage[] {
    return this.rounds.run(1, () => {
      const [unique, keep, transmit] = call<any[]>('signing phase 1', () => dkls23().sign_phase1(this.share.libraryParty(), this.data));
      Object.assign(this.kept, { unique, keep });
      return this.rounds.send(1, (to) => ({ transmit: transmit.find((m: any) => m.parties.receiver === to) }));
    });
  }

  round2(inbox: MpcMessage[]): MpcMessage[] {
    return this.rounds.run(2, () => {
      const received = [addressed(this.rounds.take(inbox, 1).get(this.peer).transmit, this.peer, this.share.index)];
      const [unique, keep, transmit] = call<any[]>('signing phase 2', () => dkls23().sign_phase2(this.share.libraryParty(), this.data, this.kept.unique, this.kept.keep, received));
      Object.assign(this.kept, { unique, keep });
      return this.rounds.send(2, (to) => ({ transmit: transmit.find((m: any) => m.parties.receiver === to) }));
    });
  }

  round3(inbox: MpcMessage[]): MpcMessage[] {
    return this.rounds.run(3, () => {
      const received = [addressed(this.rounds.take(inbox, 2).get(this.peer).transmit, this.peer, this.share.index)];
      const [xCoord, broadcast] = call<[string, any]>('signing phase 3', () => dkls23().sign_phase3(this.share.libraryParty(), this.data, this.kept.unique, this.kept.keep, received));
      Object.assign(this.kept, { xCoord, broadcast, unique: undefined, keep: undefined });
      return this.rounds.send(3, () => ({ broadcast }));
    });
  }

  async finish(inbox: MpcMessage[]): Promise<EcdsaSignature> {
    const signature = this.rounds.run(4, () => {
      const theirs = this.rounds.take(inbox, 3).get(this.peer).broadcast;
      // normalize = true: a low-S signature, as Ethereum requires.
      const [s, recoveryId] = call<[string, number]>('signing phase 4', () => dkls23().sign_phase4(this.share.libraryParty(), this.data, this.kept.xCoord, [this.kept.broadcast, theirs], true));
      return { r: `0x${this.kept.xCoord.padStart(64, '0')}`, s: `0x${s.padStart(64, '0')}`, yParity: recoveryId === 1 ? 1 : 0 } as EcdsaSignature;
    });
    if ((await recoverAddress({ hash: this.hash, signature })) !== this.share.address) {
      throw new MpcProtocolError('the joint signature does not recover to the key\'s address');
    }
    return signature;
  }
}

/** Two shares sign a hash with both parties in this process (recovery without the platform): a fresh session, every round in order. */
export async function signLocally(a: KeyShare, b: KeyShare, hash: Hex): Promise<EcdsaSignature> {
  const session = newMpcSessionId();
  const parties = [new SignParty(a, session, [a.index, b.index], hash), new SignParty(b, session, [a.index, b.index], hash)];
  const to = (messages: MpcMessage[], party: SignParty) => messages.filter((m) => m.to === party.index);
  const r1 = parties.flatMap((p) => p.round1());
  const r2 = parties.flatMap((p) => p.round2(to(r1, p)));
  const r3 = parties.flatMap((p) => p.round3(to(r2, p)));
  const [signature] = await Promise.all(parties.map((p) => p.finish(to(r3, p))));
  return signature!;
}
