// Account secrets at rest (Gmail's OAuth tokens, an IMAP account's app password): AES-256-GCM with
// TOKEN_ENCRYPTION_KEY. Layout: version(1) | iv(12) | tag(16) | ciphertext (JSON).
// Secrets never leave this module in clear except to the client that uses them.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export interface StoredTokens {
  refresh_token: string;
  access_token?: string;
  expiry_date?: number;
  scope?: string;
}

const VERSION = 1;

/** Sealed secrets this vault cannot open: another key sealed them (TOKEN_ENCRYPTION_KEY changed), or they were altered. */
export class SealedSecretError extends Error {
  override readonly name = 'SealedSecretError';
}

export class TokenVault {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('TokenVault needs a 32-byte key');
  }

  seal(tokens: StoredTokens): Uint8Array<ArrayBuffer> {
    return this.sealJson(tokens);
  }

  open(sealed: Uint8Array): StoredTokens {
    return this.openJson(sealed) as StoredTokens;
  }

  /** Any JSON value, sealed the same way (an IMAP account's password). */
  sealJson(value: object): Uint8Array<ArrayBuffer> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return new Uint8Array(Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), ciphertext]));
  }

  openJson(sealed: Uint8Array): unknown {
    const buf = Buffer.from(sealed);
    if (buf[0] !== VERSION || buf.length < 29)
      throw new SealedSecretError('the stored account credentials are in an unknown format: reconnect the account');
    const decipher = createDecipheriv('aes-256-gcm', this.key, buf.subarray(1, 13));
    decipher.setAuthTag(buf.subarray(13, 29));
    let json: string;
    try {
      json = Buffer.concat([decipher.update(buf.subarray(29)), decipher.final()]).toString('utf8');
    } catch {
      // GCM's tag check is all there is to tell: the key differs, or the bytes were changed.
      throw new SealedSecretError(
        'the stored account credentials cannot be opened with this TOKEN_ENCRYPTION_KEY (another key sealed them): set the key they were sealed with, or reconnect the account',
      );
    }
    return JSON.parse(json) as unknown;
  }
}
