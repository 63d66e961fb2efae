import { randomBytes } from 'node:crypto';
import { recoverAddress, type Hex } from 'viem';
import { KeygenParty, KeyShare, MpcProtocolError, newMpcSessionId, PARTIES, SignParty, type MpcMessage, type PartyIndex } from '../../src/mpc/dkls23';

// The DKLs23 backend on its own, all parties in one process (the library computes for real; only
// the transport is in-memory): key generation, signing by any two of the three, a share alone
// cannot sign, and every misplaced message is refused without changing anything.

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const inboxOf = (messages: MpcMessage[], to: PartyIndex) => messages.filter((m) => m.to === to);

function keygen(): KeyShare[] {
  const session = newMpcSessionId();
  const parties = PARTIES.map((i) => new KeygenParty(session, i));
  const r1 = parties.flatMap((p) => p.round1());
  const r2 = parties.flatMap((p) => p.round2(inboxOf(r1, p.index)));
  const r3 = parties.flatMap((p) => p.round3(inboxOf(r2, p.index)));
  return parties.map((p) => p.finish(inboxOf(r3, p.index)));
}

async function sign(a: KeyShare, b: KeyShare, hash: Hex) {
  const session = newMpcSessionId();
  const parties = [new SignParty(a, session, [a.index, b.index], hash), new SignParty(b, session, [a.index, b.index], hash)];
  const r1 = parties.flatMap((p) => p.round1());
  const r2 = parties.flatMap((p, i) => p.round2(inboxOf(r1, [a, b][i]!.index)));
  const r3 = parties.flatMap((p, i) => p.round3(inboxOf(r2, [a, b][i]!.index)));
  return Promise.all(parties.map((p, i) => p.finish(inboxOf(r3, [a, b][i]!.index))));
}

let shares: KeyShare[];
beforeAll(() => {
  shares = keygen();
}, 60_000);

test('2-of-3 key generation: three shares of one key, one address', () => {
  expect(shares.map((s) => s.index)).toEqual([1, 2, 3]);
  expect(new Set(shares.map((s) => s.address)).size).toBe(1);
  expect(new Set(shares.map((s) => s.publicKey)).size).toBe(1);
  expect(shares[0]!.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
});

test('any two parties sign: a low-S ECDSA signature that recovers to the address, the same from both sides', async () => {
  for (const [a, b] of [[0, 1], [0, 2], [1, 2]] as const) {
    const hash = `0x${randomBytes(32).toString('hex')}` as Hex;
    const [mine, theirs] = await sign(shares[a]!, shares[b]!, hash);
    expect(mine).toEqual(theirs);
    expect(await recoverAddress({ hash, signature: mine! })).toBe(shares[0]!.address);
    expect(BigInt(mine!.s) <= SECP256K1_N / 2n).toBe(true);
  }
}, 60_000);

test('a share survives storage (its bytes) and signs after; other bytes are refused', async () => {
  const restored = KeyShare.fromBytes(shares[1]!.toBytes());
  expect(restored.address).toBe(shares[1]!.address);
  const hash = `0x${randomBytes(32).toString('hex')}` as Hex;
  const [signature] = await sign(restored, shares[2]!, hash);
  expect(await recoverAddress({ hash, signature: signature! })).toBe(shares[0]!.address);
  expect(() => KeyShare.fromBytes(Buffer.from('{"format":"other"}'))).toThrow(MpcProtocolError);
});

test('one share alone cannot sign: not by itself, and not with a share of another key', async () => {
  const hash = `0x${randomBytes(32).toString('hex')}` as Hex;
  expect(() => new SignParty(shares[0]!, newMpcSessionId(), [1, 1], hash)).toThrow(/two distinct parties/);
  expect(() => new SignParty(shares[0]!, newMpcSessionId(), [2, 3], hash)).toThrow(/this one \(1\) among them/);
  const stranger = keygen()[1]!;
  await expect(sign(shares[0]!, stranger, hash)).rejects.toThrow(MpcProtocolError);
}, 60_000);

test('a message of another session, another round, for another party, a repeat or a missing one is refused, and the round can run again', () => {
  const session = newMpcSessionId();
  const parties = PARTIES.map((i) => new KeygenParty(session, i));
  const r1 = parties.flatMap((p) => p.round1());
  const mine = inboxOf(r1, 1);
  const refused: [MpcMessage[], RegExp][] = [
    [mine.map((m) => ({ ...m, session: newMpcSessionId() })), /another session/],
    [mine.map((m) => ({ ...m, round: 2 })), /round-2 message where round 1 is due/],
    [[...mine.slice(0, 1), inboxOf(r1, 2)[0]!], /for party 2 given to party 1/],
    [[mine[0]!, mine[0]!], /two round-1 messages from party/],
    [mine.slice(0, 1), /lacks the messages of party/],
    [mine.map((m) => ({ ...m, from: 1 as PartyIndex })), /from party 1, not one of 2, 3/],
  ];
  for (const [inbox, message] of refused) expect(() => parties[0]!.round2(inbox)).toThrow(message);
  expect(() => parties[0]!.round3([])).toThrow(/round 3 cannot run now/);
  // Nothing changed: the right messages still go through.
  expect(parties[0]!.round2(mine)).toHaveLength(2);
  expect(() => parties[0]!.round2(mine)).toThrow(/round 2 cannot run now/);
});
