import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Encryption of secrets and PII at rest (tax ids, identity documents, account numbers):
 * AES-256-GCM with a random 96-bit nonce, stored as `v2:<key id>:<nonce>:<tag>:<ciphertext>`
 * (base64 parts; the key id is the first 8 hex digits of the key's SHA-256, which reveals nothing).
 * Rows of the first format, `v1:<nonce>:<tag>:<ciphertext>`, name no key: the keys are tried in turn.
 *
 * Rotation: the current key encrypts; previous keys (DATA_ENCRYPTION_PREVIOUS_KEYS) still decrypt,
 * and `npm run cli -- data rotate-key` re-encrypts every row under the current key, after which the
 * previous keys can be dropped.
 */
export class DataCipher {
  private readonly keys: { id: string; key: Buffer }[];

  constructor(current: Buffer, previous: Buffer[] = []) {
    for (const key of [current, ...previous]) if (key.length !== 32) throw new Error('encryption key must be 32 bytes');
    this.keys = [current, ...previous].map((key) => ({ id: keyId(key), key }));
  }

  /** The id of the key that encrypts now. */
  get currentKeyId(): string {
    return this.keys[0]!.id;
  }

  encrypt(plain: string | Buffer): string {
    const { id, key } = this.keys[0]!;
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return ['v2', id, nonce.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join(':');
  }

  decrypt(stored: string): Buffer {
    const parts = stored.split(':');
    if (parts[0] === 'v2' && parts.length === 5) {
      const [, id, nonce, tag, body] = parts as [string, string, string, string, string];
      const entry = this.keys.find((k) => k.id === id);
      if (!entry) throw new Error(`data encrypted with key ${id}, which is neither DATA_ENCRYPTION_KEY nor in DATA_ENCRYPTION_PREVIOUS_KEYS`);
      return open(entry.key, nonce, tag, body);
    }
    if (parts[0] === 'v1' && parts.length === 4) {
      const [, nonce, tag, body] = parts as [string, string, string, string];
      for (const { key } of this.keys) {
        try {
          return open(key, nonce, tag, body);
        } catch {
          // not this key: GCM's tag does not verify
        }
      }
      throw new Error('data encrypted with a key that is neither DATA_ENCRYPTION_KEY nor in DATA_ENCRYPTION_PREVIOUS_KEYS');
    }
    throw new Error('unknown ciphertext format');
  }

  /**
   * A keyed fingerprint (HMAC-SHA256) for finding equal secrets without storing them: account
   * numbers have too little entropy for a plain hash. Stored as `<key id>:<hex>`.
   */
  fingerprint(value: string): string {
    return `${this.currentKeyId}:${hmac(this.keys[0]!.key, value)}`;
  }

  /** Every fingerprint the value may be stored under: each key's, and the bare hex of the first format. */
  fingerprints(value: string): string[] {
    return this.keys.flatMap(({ id, key }) => {
      const hex = hmac(key, value);
      return [`${id}:${hex}`, hex];
    });
  }

  decryptText(stored: string): string {
    return this.decrypt(stored).toString('utf8');
  }
}

function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

function open(key: Buffer, nonce: string, tag: string, body: string): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64'));
  decipher.setAuthTag(Buffer.from(tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]);
}

function hmac(key: Buffer, value: string): string {
  const fingerprintKey = createHash('sha256').update('fingerprint:').update(key).digest();
  return createHmac('sha256', fingerprintKey).update(value).digest('hex');
}

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * The key comes from DATA_ENCRYPTION_KEY. Only the embedded developer stack may fall back to a
 * key file generated once in DATA_DIR (mode 0600); production processes refuse to start without it.
 */
export function resolveEncryptionKey(opts: { envKey?: string; dataDir: string; allowGenerated: boolean }): Buffer {
  if (opts.envKey) return Buffer.from(opts.envKey, 'base64');
  if (!opts.allowGenerated) {
    throw new Error('DATA_ENCRYPTION_KEY is required (32 bytes, base64: openssl rand -base64 32)');
  }
  return readOrCreateKeyFile(path.join(opts.dataDir, 'encryption.key'));
}

/** A 32-byte key kept in a file (base64, mode 0600), made the first time; of two processes starting at once, the first one's. */
export function readOrCreateKeyFile(file: string): Buffer {
  if (fs.existsSync(file)) return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  try {
    fs.writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    return key;
  } catch {
    return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  }
}

/** The cipher of a process: the current key (see resolveEncryptionKey) and the previous ones, which only decrypt. */
export function createDataCipher(
  config: { DATA_ENCRYPTION_KEY?: string; DATA_ENCRYPTION_PREVIOUS_KEYS: Buffer[]; dataDir: string }, opts: { allowGenerated: boolean },
): DataCipher {
  const current = resolveEncryptionKey({ envKey: config.DATA_ENCRYPTION_KEY, dataDir: config.dataDir, allowGenerated: opts.allowGenerated });
  return new DataCipher(current, config.DATA_ENCRYPTION_PREVIOUS_KEYS);
}
