// Account secrets at rest: sealed and opened with TOKEN_ENCRYPTION_KEY; another key, or altered
// bytes, give one sentence that says what to do rather than a cipher's message.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SealedSecretError, TokenVault } from '../../src/accounts/token-vault.js';

describe('the token vault', () => {
  const vault = new TokenVault(randomBytes(32));

  it('opens what it sealed, and the sealed bytes do not hold the secret in clear', () => {
    const sealed = vault.sealJson({ password: 'the-app-password' });
    expect(Buffer.from(sealed).includes('the-app-password')).toBe(false);
    expect(vault.openJson(sealed)).toEqual({ password: 'the-app-password' });
  });

  it('says the key changed when another key sealed the secret', () => {
    const sealed = new TokenVault(randomBytes(32)).seal({ refresh_token: 'r' });
    expect(() => vault.open(sealed)).toThrow(SealedSecretError);
    expect(() => vault.open(sealed)).toThrow(
      'the stored account credentials cannot be opened with this TOKEN_ENCRYPTION_KEY (another key sealed them): set the key they were sealed with, or reconnect the account',
    );
  });

  it('refuses altered bytes and an unknown layout the same way', () => {
    const sealed = vault.seal({ refresh_token: 'r' });
    sealed[sealed.length - 1]! ^= 1;
    expect(() => vault.open(sealed)).toThrow(SealedSecretError);
    expect(() => vault.open(new Uint8Array([2, 1, 2, 3]))).toThrow(
      'the stored account credentials are in an unknown format: reconnect the account',
    );
  });
});
