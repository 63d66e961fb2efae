import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Encryption of secrets and PII at rest (tax ids, identity documents, account numbers):
 * AES-256-GCM with a random 96-bit nonce. Stored as `v1:<nonce>:<tag>:<ciphertext>` in base64,
 * so the format can change (key rotation) without touching old rows.
 */
export class DataCipher {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('encryption key must be 32 bytes');
  }

  encrypt(plain: string | Buffer): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return ['v1', nonce.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join(':');
  }

  decrypt(stored: string): Buffer {
    const [version, nonce, tag, body] = stored.split(':');
    if (version !== 'v1' || !nonce || !tag || body === undefined) throw new Error('unknown ciphertext format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(nonce, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]);
  }

  /**
   * A keyed fingerprint (HMAC-SHA256) for finding equal secrets without storing them: account
   * numbers have too little entropy for a plain hash.
   */
  fingerprint(value: string): string {
    return createHmac('sha256', this.fingerprintKey).update(value).digest('hex');
  }

  private get fingerprintKey() {
    return createHash('sha256').update('fingerprint:').update(this.key).digest();
  }

  decryptText(stored: string): string {
    return this.decrypt(stored).toString('utf8');
  }
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
  const file = path.join(opts.dataDir, 'encryption.key');
  if (fs.existsSync(file)) return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const key = randomBytes(32);
  fs.writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600 });
  return key;
}
