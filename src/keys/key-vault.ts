import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes, createHash } from 'node:crypto';
import {
  buildClient, CommitmentPolicy, MultiKeyringNode, RawAesKeyringNode, RawAesWrappingSuiteIdentifier, type KeyringNode,
} from '@aws-crypto/client-node';

// Private keys at rest (docs/WALLETS.md): each is encrypted under a data key of its own, which is
// wrapped by a key-encryption key (KEK) held by a key-management system. The envelope format and its
// cryptography are the AWS Encryption SDK's (committing AES-256-GCM with an ECDSA-signed message);
// nothing of it is written here.

const { encrypt, decrypt } = buildClient(CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT);

/** What a sealed value is bound to: opening it under another context fails. */
export type SealContext = Record<string, string>;

/** Seals and opens secrets under the current KEK; opens those sealed under earlier KEKs too, until rewrapped. */
export interface KeyVault {
  /** The KEK new secrets are sealed under (a name: the local key's fingerprint, or the KMS key's id). */
  readonly currentKekId: string;
  seal(plaintext: Uint8Array, context: SealContext): Promise<string>;
  open(sealed: string, context: SealContext): Promise<Buffer>;
}

const NAMESPACE = 'financial-platform';

/** A raw AES-256 KEK as a keyring, named by its fingerprint so that a sealed value says which KEK wrapped it. */
function localKeyring(kek: Buffer): { id: string; keyring: RawAesKeyringNode } {
  const id = `local-${createHash('sha256').update(kek).digest('hex').slice(0, 12)}`;
  return {
    id,
    keyring: new RawAesKeyringNode({
      keyName: id, keyNamespace: NAMESPACE, unencryptedMasterKey: new Uint8Array(kek),
      wrappingSuite: RawAesWrappingSuiteIdentifier.AES256_GCM_IV12_TAG16_NO_PADDING,
    }),
  };
}

/** Envelope encryption under keyrings: the first seals (and opens), the others only open. */
export class EnvelopeKeyVault implements KeyVault {
  private readonly opener: KeyringNode;

  constructor(readonly currentKekId: string, private readonly sealer: KeyringNode, openers: KeyringNode[] = []) {
    this.opener = openers.length === 0 ? sealer : new MultiKeyringNode({ generator: sealer as never, children: openers as never[] });
  }

  async seal(plaintext: Uint8Array, context: SealContext): Promise<string> {
    const { result } = await encrypt(this.sealer, plaintext, { encryptionContext: context });
    return result.toString('base64');
  }

  async open(sealed: string, context: SealContext): Promise<Buffer> {
    const { plaintext, messageHeader } = await decrypt(this.opener, Buffer.from(sealed, 'base64'));
    for (const [key, value] of Object.entries(context)) {
      if (messageHeader.encryptionContext[key] !== value) throw new Error(`the sealed value is not bound to ${key}=${value}`);
    }
    return plaintext;
  }
}

/**
 * The local KEK: WALLET_KEK (32 bytes, base64). Only the embedded developer stack (`npm start`) may
 * fall back to a key made once and kept at DATA_DIR/keys/wallet-kek (mode 0600); production processes
 * refuse to start without one. Earlier KEKs (WALLET_KEK_PREVIOUS) still open.
 */
export function localKeyVault(opts: { kek?: Buffer; previous?: Buffer[]; dataDir: string; allowGenerated: boolean }): EnvelopeKeyVault {
  if (!opts.kek && !opts.allowGenerated) throw new Error('WALLET_KEK is required (32 bytes, base64: openssl rand -base64 32)');
  const kek = opts.kek ?? readOrCreateKek(path.join(opts.dataDir, 'keys', 'wallet-kek'));
  const current = localKeyring(kek);
  return new EnvelopeKeyVault(current.id, current.keyring, (opts.previous ?? []).map((k) => localKeyring(k).keyring));
}

function readOrCreateKek(file: string): Buffer {
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const kek = randomBytes(32);
  // 'wx': two processes starting at once keep the first one's key.
  try {
    writeFileSync(file, kek.toString('base64'), { mode: 0o600, flag: 'wx' });
    return kek;
  } catch {
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  }
}

/** The key vault of a process, from its configuration (see localKeyVault for `allowGenerated`). */
export function createKeyVault(
  config: { WALLET_KEK?: Buffer; WALLET_KEK_PREVIOUS: Buffer[]; dataDir: string }, opts: { allowGenerated: boolean },
): KeyVault {
  return localKeyVault({ kek: config.WALLET_KEK, previous: config.WALLET_KEK_PREVIOUS, dataDir: config.dataDir, allowGenerated: opts.allowGenerated });
}
