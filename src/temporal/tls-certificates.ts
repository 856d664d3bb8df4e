// The certificates of the stack's mTLS (`npm run stack`): a CA of our own, the frontend's server
// certificate (localhost and 127.0.0.1), a client certificate for our workers, CLI and HTTP server,
// and one for the server's own system worker, which calls the frontend like any client. Made with the
// `openssl` CLI (node:crypto creates keys but cannot sign X.509) at first start, kept in DATA_DIR/tls
// and reused while they are valid for another 30 days; then they are all made again.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const DAYS = 825;
const RENEW_WITHIN_SECONDS = 30 * 86_400;

export interface TlsCertificates {
  dir: string;
  /** The CA every certificate below is signed by; clients trust the server through it, the server clients. */
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  systemWorkerCert: string;
  systemWorkerKey: string;
}

export class TlsCertificatesError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TlsCertificatesError';
  }
}

export function tlsCertificatePaths(dir: string): TlsCertificates {
  return {
    dir,
    caCert: join(dir, 'ca.pem'),
    serverCert: join(dir, 'server.pem'),
    serverKey: join(dir, 'server.key'),
    clientCert: join(dir, 'client.pem'),
    clientKey: join(dir, 'client.key'),
    systemWorkerCert: join(dir, 'system-worker.pem'),
    systemWorkerKey: join(dir, 'system-worker.key'),
  };
}

/** The certificates in `dir`, made (or made again) when missing or expiring within 30 days. */
export async function ensureTlsCertificates(dir: string, log: (m: string) => void = () => {}): Promise<TlsCertificates> {
  const paths = tlsCertificatePaths(dir);
  const certs = [paths.caCert, paths.serverCert, paths.clientCert, paths.systemWorkerCert];
  if ((await Promise.all(certs.map(stillValid))).every(Boolean)) return paths;
  await makeCertificates(paths);
  log(`made a CA and the frontend, client and system worker certificates for mTLS in ${dir}`);
  return paths;
}

async function stillValid(cert: string): Promise<boolean> {
  if (!existsSync(cert)) return false;
  return openssl('x509', '-in', cert, '-noout', '-checkend', String(RENEW_WITHIN_SECONDS)).then(
    () => true,
    () => false,
  );
}

async function makeCertificates(paths: TlsCertificates): Promise<void> {
  await mkdir(paths.dir, { recursive: true, mode: 0o700 });
  const caKey = join(paths.dir, 'ca.key');
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl('req', '-x509', ...ecKey, '-keyout', caKey, '-out', paths.caCert, '-days', String(DAYS + 30), '-subj', '/CN=durable-inbox stack CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  const issue = async (cert: string, key: string, cn: string, extensions: string) => {
    const csr = `${cert}.csr`;
    const ext = `${cert}.ext`;
    await writeFile(ext, `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n${extensions}\n`);
    try {
      await openssl('req', '-new', ...ecKey, '-keyout', key, '-out', csr, '-subj', `/CN=${cn}`);
      await openssl('x509', '-req', '-in', csr, '-CA', paths.caCert, '-CAkey', caKey, '-set_serial', `0x${randomBytes(16).toString('hex')}`,
        '-days', String(DAYS), '-sha256', '-extfile', ext, '-out', cert);
    } finally {
      await rm(csr, { force: true });
      await rm(ext, { force: true });
    }
  };
  await issue(paths.serverCert, paths.serverKey, 'localhost', 'extendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1');
  await issue(paths.clientCert, paths.clientKey, 'durable-inbox', 'extendedKeyUsage=clientAuth');
  await issue(paths.systemWorkerCert, paths.systemWorkerKey, 'temporal-system-worker', 'extendedKeyUsage=clientAuth');
  for (const key of [caKey, paths.serverKey, paths.clientKey, paths.systemWorkerKey]) await chmod(key, 0o600);
}

async function openssl(...args: string[]): Promise<void> {
  try {
    await run('openssl', args);
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') {
      throw new TlsCertificatesError('the stack makes its mTLS certificates with `openssl`, which is not on PATH (Debian: apt-get install openssl)');
    }
    throw new TlsCertificatesError(`openssl ${args[0]} failed: ${(e.stderr ?? e.message).trim()}`, { cause: err });
  }
}
