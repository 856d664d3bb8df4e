// AES-256-GCM payload encryption, so Temporal's history (stored in clear by the server) holds no
// email content. Each encrypted payload names its key id, which allows key rotation: the first key
// encrypts, every listed key decrypts.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
// @temporalio/proto is CommonJS without named-export hints: under ESM only its default export exists.
import proto from '@temporalio/proto';

export const ENCODING_ENCRYPTED = 'binary/encrypted';
export const METADATA_ENCODING_KEY = 'encoding';
export const METADATA_ENCRYPTION_KEY_ID = 'encryption-key-id';

const CIPHER = 'aes-256-gcm';
const IV_LENGTH = 12;
const TAG_LENGTH = 16;

export interface PayloadKey {
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

export class PayloadCodecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PayloadCodecError';
  }
}

export class AesGcmPayloadCodec implements PayloadCodec {
  private readonly encryptionKey: PayloadKey;
  private readonly keysById: Map<string, Buffer>;

  constructor(keys: readonly PayloadKey[]) {
    const [first] = keys;
    if (!first) throw new PayloadCodecError('AesGcmPayloadCodec needs at least one key');
    this.keysById = new Map();
    for (const { id, key } of keys) {
      if (!id) throw new PayloadCodecError('payload key with an empty id');
      if (key.length !== 32) throw new PayloadCodecError(`payload key "${id}" must be 32 bytes, got ${key.length}`);
      if (this.keysById.has(id)) throw new PayloadCodecError(`payload key id "${id}" is listed twice`);
      this.keysById.set(id, key);
    }
    this.encryptionKey = first;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => (isEncrypted(payload) ? payload : this.encrypt(payload)));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => (isEncrypted(payload) ? this.decrypt(payload) : payload));
  }

  private encrypt(payload: Payload): Payload {
    const plaintext = proto.temporal.api.common.v1.Payload.encode(payload).finish();
    const iv = randomBytes(IV_LENGTH);
    const cipher = createCipheriv(CIPHER, this.encryptionKey.key, iv, { authTagLength: TAG_LENGTH });
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return {
      metadata: {
        [METADATA_ENCODING_KEY]: Buffer.from(ENCODING_ENCRYPTED),
        [METADATA_ENCRYPTION_KEY_ID]: Buffer.from(this.encryptionKey.id),
      },
      data: Buffer.concat([iv, ciphertext, cipher.getAuthTag()]),
    };
  }

  private decrypt(payload: Payload): Payload {
    const rawKeyId = payload.metadata?.[METADATA_ENCRYPTION_KEY_ID];
    if (!rawKeyId) throw new PayloadCodecError(`encrypted payload has no "${METADATA_ENCRYPTION_KEY_ID}" metadata`);
    const keyId = Buffer.from(rawKeyId).toString('utf8');
    const key = this.keysById.get(keyId);
    if (!key) {
      throw new PayloadCodecError(
        `payload was encrypted with key "${keyId}", which is not among the configured keys ` +
          `(${[...this.keysById.keys()].join(', ')}); add it back to PAYLOAD_ENCRYPTION_KEYS to read old data`,
      );
    }
    const data = Buffer.from(payload.data ?? new Uint8Array());
    if (data.length < IV_LENGTH + TAG_LENGTH) {
      throw new PayloadCodecError(`encrypted payload (key "${keyId}") is too short to be valid`);
    }
    const decipher = createDecipheriv(CIPHER, key, data.subarray(0, IV_LENGTH), { authTagLength: TAG_LENGTH });
    decipher.setAuthTag(data.subarray(data.length - TAG_LENGTH));
    let plaintext: Buffer;
    try {
      plaintext = Buffer.concat([
        decipher.update(data.subarray(IV_LENGTH, data.length - TAG_LENGTH)),
        decipher.final(),
      ]);
    } catch {
      throw new PayloadCodecError(
        `encrypted payload (key "${keyId}") failed authentication: it was altered, or the key with this id is not the one that wrote it`,
      );
    }
    return proto.temporal.api.common.v1.Payload.decode(plaintext);
  }
}

function isEncrypted(payload: Payload): boolean {
  const encoding = payload.metadata?.[METADATA_ENCODING_KEY];
  return encoding !== undefined && encoding !== null && Buffer.from(encoding).toString('utf8') === ENCODING_ENCRYPTED;
}
