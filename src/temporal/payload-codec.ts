import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { DataCipher } from '../crypto';

// Workflow histories hold no secrets in the clear (docs/OPERATIONS.md, "Encrypted payloads"): every
// payload the platform's clients and workers send to Temporal — workflow inputs and results, activity
// arguments, signals, updates, queries, memos — is encrypted (AES-256-GCM under the data-encryption
// key, as the database's secrets are). Payloads written before this codec existed have no encryption
// encoding and pass through untouched, so older histories still replay.

/** The metadata encoding of an encrypted payload; `encryption-key-id` names the key. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';

const utf8 = (text: string) => Buffer.from(text, 'utf8');
const fromUtf8 = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly cipher: DataCipher) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => ({
      metadata: { encoding: utf8(ENCRYPTED_ENCODING), 'encryption-key-id': utf8(this.cipher.currentKeyId) },
      data: utf8(this.cipher.encrypt(Buffer.from(temporal.api.common.v1.Payload.encode(payload).finish()))),
    }));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const encoding = payload.metadata?.encoding ? fromUtf8(payload.metadata.encoding) : undefined;
      if (encoding !== ENCRYPTED_ENCODING || !payload.data) return payload;
      const plain = this.cipher.decrypt(fromUtf8(payload.data));
      return temporal.api.common.v1.Payload.decode(plain) as Payload;
    });
  }
}

/** The data converter of every client and worker of the platform. */
export const encryptedDataConverter = (cipher: DataCipher): DataConverter => ({ payloadCodecs: [new EncryptionCodec(cipher)] });
