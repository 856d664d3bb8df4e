// The emulator's RSA signing key: signs push OIDC tokens and OAuth id_tokens (RS256), and serves
// its public half in the two forms google-auth-library fetches: `{kid: PEM}` (oauth2/v1/certs)
// and a JWK set (oauth2/v3/certs).
import { createHash, createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';

export class SigningKey {
  readonly kid: string;
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;

  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.privateKey = privateKey;
    this.publicKey = publicKey;
    this.kid = createHash('sha1').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
  }

  signJwt(payload: Record<string, unknown>): string {
    const header = { alg: 'RS256', kid: this.kid, typ: 'JWT' };
    const encode = (obj: unknown) => Buffer.from(JSON.stringify(obj)).toString('base64url');
    const signingInput = `${encode(header)}.${encode(payload)}`;
    const signature = createSign('RSA-SHA256').update(signingInput).sign(this.privateKey).toString('base64url');
    return `${signingInput}.${signature}`;
  }

  pemCerts(): Record<string, string> {
    return { [this.kid]: this.publicKey.export({ type: 'spki', format: 'pem' }).toString() };
  }

  jwks(): { keys: Array<Record<string, unknown>> } {
    return { keys: [{ ...this.publicKey.export({ format: 'jwk' }), kid: this.kid, alg: 'RS256', use: 'sig' }] };
  }
}
