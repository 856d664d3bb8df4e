// The Temporal connection settings as the `temporal` CLI reads them: variables, else a temporal.toml
// profile; turned into the connection options of our clients and workers and into the environment
// of the processes we start. (The connection itself, mTLS included, is test/stack/stack-tls.test.ts.)
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/shared/config-error.js';
import { loadConfig } from '../../src/config/env.js';
import { describeTemporalConnection, temporalConnectionEnv, temporalConnectionOptions } from '../../src/temporal/connection.js';

/** A deployment's settings: remote clusters are production's (dev mode refuses non-loopback addresses). */
const DEPLOYED = {
  DURABLE_INBOX_MODE: 'production',
  PAYLOAD_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
  TOKEN_ENCRYPTION_KEY: Buffer.alloc(32, 2).toString('base64'),
  DATABASE_URL: 'postgresql://inbox@db.internal.example:5432/durable_inbox',
  APPROVALS_SECRET: 'a'.repeat(32),
};
const loadDeployed = (env: Record<string, string | undefined>) => loadConfig({ ...DEPLOYED, ...env });

/** envconfig reads files and inline data into plain Uint8Arrays. */
const bytes = (text: string) => new Uint8Array(Buffer.from(text));
const dir = mkdtempSync(join(tmpdir(), 'temporal-connection-'));
const certPath = join(dir, 'client.pem');
const keyPath = join(dir, 'client.key');
const caPath = join(dir, 'ca.pem');
writeFileSync(certPath, 'CLIENT CERT');
writeFileSync(keyPath, 'CLIENT KEY');
writeFileSync(caPath, 'SERVER CA');
const configFile = join(dir, 'temporal.toml');
writeFileSync(
  configFile,
  `[profile.default]
address = "127.0.0.1:7233"

[profile.cloud]
address = "inbox.a1b2c.tmprl.cloud:7233"
namespace = "inbox.a1b2c"
api_key = "profile-api-key"

[profile.mtls]
address = "temporal.internal.example:7233"
namespace = "inbox"
[profile.mtls.tls]
client_cert_path = "${certPath}"
client_key_path = "${keyPath}"
server_ca_cert_path = "${caPath}"
server_name = "frontend.temporal.internal"
`,
);

describe('Temporal connection settings', () => {
  it('are plaintext to 127.0.0.1:7233, namespace default, with nothing set', () => {
    const cfg = loadDeployed({ TEMPORAL_CONFIG_FILE: configFile });
    expect(temporalConnectionOptions(cfg)).toEqual({ address: '127.0.0.1:7233' });
    expect(cfg.TEMPORAL_NAMESPACE).toBe('default');
    expect(describeTemporalConnection(cfg)).toBe('127.0.0.1:7233 (namespace default, plaintext)');
  });

  it('come from a temporal.toml profile: an API key turns TLS on (Temporal Cloud)', () => {
    const cfg = loadDeployed({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'cloud' });
    expect(cfg.TEMPORAL_ADDRESS).toBe('inbox.a1b2c.tmprl.cloud:7233');
    expect(cfg.TEMPORAL_NAMESPACE).toBe('inbox.a1b2c');
    expect(temporalConnectionOptions(cfg)).toEqual({ address: 'inbox.a1b2c.tmprl.cloud:7233', apiKey: 'profile-api-key', tls: true });
    expect(describeTemporalConnection(cfg)).toBe('inbox.a1b2c.tmprl.cloud:7233 (namespace inbox.a1b2c, TLS + API key)');
  });

  it('take an mTLS profile: client certificate, key, server CA and name read from their files', () => {
    const cfg = loadDeployed({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'mtls' });
    expect(temporalConnectionOptions(cfg)).toEqual({
      address: 'temporal.internal.example:7233',
      tls: {
        serverNameOverride: 'frontend.temporal.internal',
        serverRootCACertificate: bytes('SERVER CA'),
        clientCertPair: { crt: bytes('CLIENT CERT'), key: bytes('CLIENT KEY') },
      },
    });
    expect(describeTemporalConnection(cfg)).toBe('temporal.internal.example:7233 (namespace inbox, mTLS)');
  });

  it('let a variable win over the profile, as the CLI does', () => {
    const cfg = loadDeployed({
      TEMPORAL_CONFIG_FILE: configFile,
      TEMPORAL_PROFILE: 'cloud',
      TEMPORAL_NAMESPACE: 'staging.a1b2c',
      TEMPORAL_API_KEY: 'env-api-key',
    });
    expect(cfg.TEMPORAL_ADDRESS).toBe('inbox.a1b2c.tmprl.cloud:7233');
    expect(cfg.TEMPORAL_NAMESPACE).toBe('staging.a1b2c');
    expect(temporalConnectionOptions(cfg).apiKey).toBe('env-api-key');
  });

  it('read the default profile of ~/.config/temporalio/temporal.toml when no file is named', () => {
    const configHome = mkdtempSync(join(tmpdir(), 'xdg-config-'));
    const file = join(configHome, 'temporalio', 'temporal.toml');
    mkdirFor(file);
    writeFileSync(file, '[profile.default]\naddress = "10.0.0.5:7233"\nnamespace = "home"\n');
    const cfg = loadDeployed({ XDG_CONFIG_HOME: configHome });
    expect([cfg.TEMPORAL_ADDRESS, cfg.TEMPORAL_NAMESPACE]).toEqual(['10.0.0.5:7233', 'home']);
  });

  it('take TLS from variables: certificate data inline, or TLS off on purpose', () => {
    const cfg = loadDeployed({
      TEMPORAL_ADDRESS: 'temporal.example:7233',
      TEMPORAL_TLS_CLIENT_CERT_DATA: 'INLINE CERT',
      TEMPORAL_TLS_CLIENT_KEY_DATA: 'INLINE KEY',
    });
    expect(temporalConnectionOptions(cfg).tls).toEqual({
      clientCertPair: { crt: bytes('INLINE CERT'), key: bytes('INLINE KEY') },
    });
    const off = loadDeployed({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' });
    expect(temporalConnectionOptions(off)).toEqual({ address: '127.0.0.1:7233', apiKey: 'k', tls: false });
  });

  it('pass on to the processes we start as the same variables, profile resolved', () => {
    const cfg = loadDeployed({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'mtls' });
    const env = temporalConnectionEnv(cfg);
    expect(env).toEqual({
      TEMPORAL_ADDRESS: 'temporal.internal.example:7233',
      TEMPORAL_NAMESPACE: 'inbox',
      TEMPORAL_TLS: 'true',
      TEMPORAL_TLS_CLIENT_CERT_PATH: certPath,
      TEMPORAL_TLS_CLIENT_KEY_PATH: keyPath,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: caPath,
      TEMPORAL_TLS_SERVER_NAME: 'frontend.temporal.internal',
    });
    // A worker process started with that environment (and no profile) connects the same way.
    expect(temporalConnectionOptions(loadDeployed(env))).toEqual(temporalConnectionOptions(cfg));
  });

  it('stop start-up with one line for an unknown profile, a missing file or a bad address', () => {
    expect(() => loadDeployed({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'prod' })).toThrow(ConfigError);
    expect(() => loadDeployed({ TEMPORAL_CONFIG_FILE: configFile, TEMPORAL_PROFILE: 'prod' })).toThrow(/TEMPORAL_PROFILE: .*prod/);
    expect(() => loadDeployed({ TEMPORAL_CONFIG_FILE: join(dir, 'missing.toml') })).toThrow(/TEMPORAL_CONFIG_FILE: no such file/);
    writeFileSync(join(dir, 'bad.toml'), '[profile.default]\naddress = "no-port"\n');
    expect(() => loadDeployed({ TEMPORAL_CONFIG_FILE: join(dir, 'bad.toml') })).toThrow(/TEMPORAL_ADDRESS: expected host:port \(got "no-port"\)/);
  });
});

function mkdirFor(file: string) {
  mkdirSync(join(file, '..'), { recursive: true });
}
