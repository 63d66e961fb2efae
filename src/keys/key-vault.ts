import path from 'node:path';
import { createHash } from 'node:crypto';
import { readOrCreateKeyFile } from '../crypto';
import {
  buildClient, CommitmentPolicy, getClient, KmsKeyringNode, MultiKeyringNode, RawAesKeyringNode, RawAesWrappingSuiteIdentifier, type KeyringNode,
} from '@aws-crypto/client-node';
import { KMS } from '@aws-sdk/client-kms';

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

  constructor(readonly currentKekId: string, readonly sealer: KeyringNode, readonly openers: KeyringNode[] = []) {
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
  if (!opts.kek && !opts.allowGenerated) throw new Error('WALLET_KEK is required (32 bytes, base64: openssl rand -base64 32), or WALLET_KMS_KEY_ID');
  const kek = opts.kek ?? readOrCreateKeyFile(path.join(opts.dataDir, 'keys', 'wallet-kek'));
  const current = localKeyring(kek);
  return new EnvelopeKeyVault(current.id, current.keyring, (opts.previous ?? []).map((k) => localKeyring(k).keyring));
}

/**
 * Data keys wrapped by AWS KMS: `keyId` seals (KMS generates each data key and wraps it; the KEK
 * never leaves KMS); earlier KMS keys and local KEKs only open.
 */
export function kmsKeyVault(opts: { keyId: string; previousKeyIds?: string[]; previousLocal?: Buffer[]; endpoint?: string }): EnvelopeKeyVault {
  const sealer = new KmsKeyringNode({ generatorKeyId: opts.keyId, clientProvider: kmsClients(opts.endpoint) });
  const openers = [...kmsOpeners(opts.previousKeyIds ?? [], opts.endpoint), ...(opts.previousLocal ?? []).map((k) => localKeyring(k).keyring)];
  return new EnvelopeKeyVault(opts.keyId, sealer, openers);
}

const kmsClients = (endpoint?: string) => getClient(KMS, endpoint ? { endpoint } : {});

/** Keyrings that open what these KMS keys wrapped. */
const kmsOpeners = (keyIds: string[], endpoint?: string): KeyringNode[] =>
  keyIds.map((keyId) => new KmsKeyringNode({ keyIds: [keyId], clientProvider: kmsClients(endpoint) }));

type KeyVaultConfig = {
  WALLET_KEK?: Buffer; WALLET_KEK_PREVIOUS: Buffer[]; WALLET_KMS_KEY_ID?: string; WALLET_KMS_KEY_IDS_PREVIOUS: string[]; WALLET_KMS_ENDPOINT?: string;
  dataDir: string;
};

/**
 * The key vault of a process, from its configuration: AWS KMS when WALLET_KMS_KEY_ID is set, else the
 * local KEK (see localKeyVault for `allowGenerated`). Keys of the other kind named in the
 * configuration still open, so `keys rewrap` moves wallets from one to the other either way.
 */
export function createKeyVault(config: KeyVaultConfig, opts: { allowGenerated: boolean }): KeyVault {
  if (config.WALLET_KMS_KEY_ID) {
    return kmsKeyVault({
      keyId: config.WALLET_KMS_KEY_ID, previousKeyIds: config.WALLET_KMS_KEY_IDS_PREVIOUS, endpoint: config.WALLET_KMS_ENDPOINT,
      previousLocal: [...(config.WALLET_KEK ? [config.WALLET_KEK] : []), ...config.WALLET_KEK_PREVIOUS],
    });
  }
  const local = localKeyVault({ kek: config.WALLET_KEK, previous: config.WALLET_KEK_PREVIOUS, dataDir: config.dataDir, allowGenerated: opts.allowGenerated });
  if (config.WALLET_KMS_KEY_IDS_PREVIOUS.length === 0) return local;
  return new EnvelopeKeyVault(local.currentKekId, local.sealer, [...local.openers, ...kmsOpeners(config.WALLET_KMS_KEY_IDS_PREVIOUS, config.WALLET_KMS_ENDPOINT)]);
}
