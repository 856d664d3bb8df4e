// The emulator's RSA signing key: signs push OIDC tokens and OAuth id_tokens (RS256), and serves
// its public half in the two forms google-auth-library fetches: `{kid: PEM}` (oauth2/v1/certs)
// and a JWK set (oauth2/v3/certs). As Google's keys sign for every user, the emulators of one
// process share one key pair, made on first use: an RSA key takes 0.1-1 s of CPU, and most
// emulators (a test's, the demo's) never sign anything.
import { createHash, createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';

interface KeyPair {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

let shared: KeyPair | undefined;

function keyPair(): KeyPair {
  if (!shared) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    shared = { privateKey, publicKey, kid: createHash('sha1').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex') };
  }
  return shared;
}

export class SigningKey {
  get kid(): string {
    return keyPair().kid;
  }

  signJwt(payload: Record<string, unknown>): string {
    const { kid, privateKey } = keyPair();
    const header = { alg: 'RS256', kid, typ: 'JWT' };
    const encode = (obj: unknown) => Buffer.from(JSON.stringify(obj)).toString('base64url');
    const signingInput = `${encode(header)}.${encode(payload)}`;
    const signature = createSign('RSA-SHA256').update(signingInput).sign(privateKey).toString('base64url');
    return `${signingInput}.${signature}`;
  }

  pemCerts(): Record<string, string> {
    const { kid, publicKey } = keyPair();
    return { [kid]: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
  }

  jwks(): { keys: Array<Record<string, unknown>> } {
    const { kid, publicKey } = keyPair();
    return { keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }] };
  }
}
