import { Aes256Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from '@hpke/core';
import { z } from 'zod';
import { MpcProtocolError, type MpcMessage, type PartyIndex } from './dkls23';

// End-to-end sealing of protocol messages between the parties (docs/MPC.md): HPKE (RFC 9180,
// DHKEM(X25519, HKDF-SHA256), AES-256-GCM) from @hpke/core, in its authenticated mode: each party
// has a key pair for the session, a message opens only with the receiver's private key and only if
// the sender's private key sealed it. The session, round, sender and receiver are the associated
// data, so a message moved to another session, round or party does not open. The API that relays
// the messages, its logs and the workflow histories see ciphertext only.

const suite = new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes256Gcm() });
const INFO = new TextEncoder().encode('financial-platform mpc message v1');
const BACKUP_INFO = new TextEncoder().encode('financial-platform mpc backup share v1');
const b64 = (bytes: ArrayBuffer | Uint8Array) => Buffer.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)).toString('base64');
const unb64 = (text: string) => new Uint8Array(Buffer.from(text, 'base64'));

/** A protocol message as it travels: its header in the clear, its body sealed to the receiver. */
export const SealedMpcMessageSchema = z.strictObject({
  session: z.string().regex(/^[0-9a-f]{64}$/),
  round: z.number().int().min(1).max(3),
  from: z.union([z.literal(1), z.literal(2), z.literal(3)]),
  to: z.union([z.literal(1), z.literal(2), z.literal(3)]),
  enc: z.string().min(1).max(200).describe('HPKE encapsulated key, base64'),
  ciphertext: z.string().min(1).max(2_000_000).describe('The message body sealed to the receiver, base64'),
}).meta({ id: 'MpcSealedMessage' });
export type SealedMpcMessage = z.infer<typeof SealedMpcMessageSchema>;

const aad = (m: { session: string; round: number; from: PartyIndex; to: PartyIndex }) => new TextEncoder().encode(`${m.session}:${m.round}:${m.from}:${m.to}`);

/** A party's key pair for one session: the public half travels (base64), the private half is kept sealed. */
export class MpcChannelKey {
  private constructor(private readonly pair: CryptoKeyPair, readonly publicKey: string) {}

  static async generate(): Promise<MpcChannelKey> {
    const pair = await suite.kem.generateKeyPair();
    return new MpcChannelKey(pair, b64(await suite.kem.serializePublicKey(pair.publicKey)));
  }

  /** From the private key's 32 bytes (as `privateKeyBytes` gave them). */
  static async fromPrivateKey(bytes: Uint8Array): Promise<MpcChannelKey> {
    const privateKey = await suite.kem.deserializePrivateKey(bytes);
    const publicKey = await publicOf(privateKey);
    return new MpcChannelKey({ privateKey, publicKey: await suite.kem.deserializePublicKey(unb64(publicKey)) }, publicKey);
  }

  async privateKeyBytes(): Promise<Buffer> {
    return Buffer.from(new Uint8Array(await suite.kem.serializePrivateKey(this.pair.privateKey)));
  }

  /** Seals a message to its receiver's public key. */
  async seal(message: MpcMessage, receiverPublicKey: string): Promise<SealedMpcMessage> {
    const { ct, enc } = await suite.seal(
      { recipientPublicKey: await publicKeyOf(receiverPublicKey), senderKey: this.pair, info: INFO },
      new TextEncoder().encode(message.body), aad(message),
    );
    return { session: message.session, round: message.round, from: message.from, to: message.to, enc: b64(enc), ciphertext: b64(ct) };
  }

  /** Opens a message sealed to this key by the holder of `senderPublicKey`; anything else is refused. */
  async open(sealed: SealedMpcMessage, senderPublicKey: string): Promise<MpcMessage> {
    try {
      const body = await suite.open(
        { recipientKey: this.pair, senderPublicKey: await publicKeyOf(senderPublicKey), enc: unb64(sealed.enc), info: INFO },
        unb64(sealed.ciphertext), aad(sealed),
      );
      return { session: sealed.session, round: sealed.round, from: sealed.from, to: sealed.to, body: new TextDecoder().decode(body) };
    } catch {
      throw new MpcProtocolError(`the round-${sealed.round} message from party ${sealed.from} to party ${sealed.to} does not open: not sealed by the session's party, or altered`);
    }
  }

  /** Opens what was sealed to this key in HPKE's base mode (no sender key): a backup share. */
  async openAnonymous(enc: Uint8Array, ciphertext: Uint8Array, info: Uint8Array, associated: Uint8Array): Promise<Buffer> {
    return Buffer.from(new Uint8Array(await suite.open({ recipientKey: this.pair, enc, info }, ciphertext, associated)));
  }
}

async function publicKeyOf(text: string): Promise<CryptoKey> {
  const bytes = unb64(text);
  if (bytes.length !== 32) throw new MpcProtocolError('a session public key is 32 bytes (X25519), base64');
  return suite.kem.deserializePublicKey(bytes);
}

/** The public key of an X25519 private key, base64 (through WebCrypto's JWK export, which carries both halves). */
async function publicOf(privateKey: CryptoKey): Promise<string> {
  const jwk = await globalThis.crypto.subtle.exportKey('jwk', privateKey);
  if (!jwk.x) throw new MpcProtocolError('the session key has no public half');
  return Buffer.from(jwk.x, 'base64url').toString('base64');
}

/** A recovery key pair (X25519): the backup share is sealed to its public key; its private key stays offline with the customer. */
export async function newRecoveryKey(): Promise<{ publicKey: string; privateKey: string }> {
  const key = await MpcChannelKey.generate();
  return { publicKey: key.publicKey, privateKey: (await key.privateKeyBytes()).toString('base64') };
}

/** Seals a backup share to the recovery public key (HPKE base mode): only the recovery private key opens it. */
export async function sealBackupShare(share: Uint8Array, recoveryPublicKey: string, walletId: string): Promise<string> {
  const { ct, enc } = await suite.seal({ recipientPublicKey: await publicKeyOf(recoveryPublicKey), info: BACKUP_INFO }, share, new TextEncoder().encode(walletId));
  return JSON.stringify({ format: 'mpc-backup-share-1', wallet_id: walletId, enc: b64(enc), ciphertext: b64(ct) });
}

export async function openBackupShare(sealed: string, recoveryPrivateKey: string): Promise<{ walletId: string; share: Buffer }> {
  const parsed = JSON.parse(sealed) as { format?: string; wallet_id?: string; enc?: string; ciphertext?: string };
  if (parsed.format !== 'mpc-backup-share-1' || !parsed.wallet_id || !parsed.enc || !parsed.ciphertext) throw new MpcProtocolError('not a backup share file');
  const key = await MpcChannelKey.fromPrivateKey(unb64(recoveryPrivateKey));
  try {
    const share = await key.openAnonymous(unb64(parsed.enc), unb64(parsed.ciphertext), BACKUP_INFO, new TextEncoder().encode(parsed.wallet_id));
    return { walletId: parsed.wallet_id, share };
  } catch {
    throw new MpcProtocolError('the backup share does not open with this recovery key');
  }
}
