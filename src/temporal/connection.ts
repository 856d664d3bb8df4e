// How every durable-inbox process reaches Temporal, configured the way the `temporal` CLI and the
// SDKs are (environment configuration, @temporalio/envconfig): TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
// TEMPORAL_API_KEY and TEMPORAL_TLS_*, or a profile (TEMPORAL_PROFILE, default "default") of a
// temporal.toml (TEMPORAL_CONFIG_FILE, default ~/.config/temporalio/temporal.toml); a variable wins
// over the profile. loadConfig resolves them once into the TEMPORAL_* settings; this module turns
// those into connection options (clients and workers) and into the environment of the processes we
// start (worker processes, the `temporal` CLI), so they all connect the same way.
import { existsSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import {
  clientConfigToToml,
  loadClientConfigProfile,
  toClientOptions,
  type ClientConfigProfile,
  type ClientConfigTLS,
  type ConfigDataSource,
} from '@temporalio/envconfig';

/** The connection settings, by the names the `temporal` CLI and every Temporal SDK read. */
export const temporalConnectionVars = [
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_CERT_DATA',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_DATA',
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  'TEMPORAL_TLS_SERVER_CA_CERT_DATA',
  'TEMPORAL_TLS_SERVER_NAME',
] as const;
type ConnectionVar = (typeof temporalConnectionVars)[number];

/** The resolved settings as they sit in the configuration (TEMPORAL_TLS parsed to a boolean). */
export type TemporalConnectionSettings = { TEMPORAL_ADDRESS: string; TEMPORAL_NAMESPACE: string; TEMPORAL_TLS?: boolean } & Partial<
  Record<Exclude<ConnectionVar, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE' | 'TEMPORAL_TLS'>, string>
>;

/**
 * The connection variables after the profile: the environment's where set, else the profile's from
 * the config file. What is in neither is left out (the configuration's defaults apply).
 */
export function resolveTemporalProfileVars(env: Record<string, string>): Partial<Record<ConnectionVar, string>> {
  if (env.TEMPORAL_CONFIG_FILE && !existsSync(env.TEMPORAL_CONFIG_FILE)) {
    throw new Error(`TEMPORAL_CONFIG_FILE: no such file ${env.TEMPORAL_CONFIG_FILE}`);
  }
  let profile: ClientConfigProfile;
  try {
    profile = loadClientConfigProfile({ profile: env.TEMPORAL_PROFILE, overrideEnvVars: env });
  } catch (err) {
    throw new Error(`TEMPORAL_PROFILE: ${err instanceof Error ? err.message : String(err)}`);
  }
  const tls = profile.tls;
  const vars: Partial<Record<ConnectionVar, string | undefined>> = {
    TEMPORAL_ADDRESS: profile.address,
    TEMPORAL_NAMESPACE: profile.namespace,
    TEMPORAL_API_KEY: profile.apiKey,
    TEMPORAL_TLS: tls === undefined ? undefined : String(tls.disabled !== true),
    ...sourceVars('TEMPORAL_TLS_CLIENT_CERT', tls?.clientCert),
    ...sourceVars('TEMPORAL_TLS_CLIENT_KEY', tls?.clientKey),
    ...sourceVars('TEMPORAL_TLS_SERVER_CA_CERT', tls?.serverCACert),
    TEMPORAL_TLS_SERVER_NAME: tls?.serverName,
  };
  return Object.fromEntries(Object.entries(vars).filter(([, v]) => v !== undefined && v !== ''));
}

function sourceVars(prefix: string, source: ConfigDataSource | undefined): Record<string, string | undefined> {
  if (source === undefined) return {};
  if ('path' in source) return { [`${prefix}_PATH`]: source.path };
  return { [`${prefix}_DATA`]: typeof source.data === 'string' ? source.data : Buffer.from(source.data).toString('utf8') };
}

/** Address, TLS (server CA, client certificate), API key: for Connection.connect and NativeConnection.connect. */
export function temporalConnectionOptions(cfg: TemporalConnectionSettings): { address: string; tls?: TLSConfig | boolean; apiKey?: string } {
  const { connectionOptions } = toClientOptions({
    address: cfg.TEMPORAL_ADDRESS,
    ...(cfg.TEMPORAL_API_KEY ? { apiKey: cfg.TEMPORAL_API_KEY } : {}),
    ...(tlsOf(cfg) ? { tls: tlsOf(cfg) } : {}),
  });
  return {
    address: cfg.TEMPORAL_ADDRESS,
    ...(connectionOptions.tls != null ? { tls: connectionOptions.tls } : {}),
    ...(cfg.TEMPORAL_API_KEY ? { apiKey: cfg.TEMPORAL_API_KEY } : {}),
  };
}

function tlsOf(cfg: TemporalConnectionSettings): ClientConfigTLS | undefined {
  const source = (name: 'CLIENT_CERT' | 'CLIENT_KEY' | 'SERVER_CA_CERT'): ConfigDataSource | undefined => {
    const path = cfg[`TEMPORAL_TLS_${name}_PATH`];
    const data = cfg[`TEMPORAL_TLS_${name}_DATA`];
    return path ? { path } : data ? { data } : undefined;
  };
  const tls: ClientConfigTLS = {
    ...(cfg.TEMPORAL_TLS === false ? { disabled: true } : {}),
    ...(cfg.TEMPORAL_TLS_SERVER_NAME ? { serverName: cfg.TEMPORAL_TLS_SERVER_NAME } : {}),
    ...(source('CLIENT_CERT') ? { clientCert: source('CLIENT_CERT') } : {}),
    ...(source('CLIENT_KEY') ? { clientKey: source('CLIENT_KEY') } : {}),
    ...(source('SERVER_CA_CERT') ? { serverCACert: source('SERVER_CA_CERT') } : {}),
  };
  return cfg.TEMPORAL_TLS !== undefined || Object.keys(tls).length > 0 ? tls : undefined;
}

/** The settings as environment variables, for a process we start (a worker, the `temporal` CLI). */
export function temporalConnectionEnv(cfg: TemporalConnectionSettings): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of temporalConnectionVars) {
    const value = cfg[name];
    if (value !== undefined && value !== '') env[name] = String(value);
  }
  return env;
}

/** One line for logs: where and how we connect (never the key or certificate contents). */
export function describeTemporalConnection(cfg: TemporalConnectionSettings): string {
  const tls = tlsOf(cfg);
  const how =
    tls?.disabled === true ? 'plaintext' : tls?.clientCert ? 'mTLS' : cfg.TEMPORAL_API_KEY ? 'TLS + API key' : tls ? 'TLS' : 'plaintext';
  return `${cfg.TEMPORAL_ADDRESS} (namespace ${cfg.TEMPORAL_NAMESPACE}, ${how})`;
}

/**
 * A temporal.toml whose default profile connects as `cfg` does (certificates by path), for the
 * `temporal` CLI (`--config-file`) and for our processes (TEMPORAL_CONFIG_FILE).
 */
export function temporalProfileToml(cfg: TemporalConnectionSettings): string {
  const tls = tlsOf(cfg);
  const profile: ClientConfigProfile = {
    address: cfg.TEMPORAL_ADDRESS,
    namespace: cfg.TEMPORAL_NAMESPACE,
    ...(cfg.TEMPORAL_API_KEY ? { apiKey: cfg.TEMPORAL_API_KEY } : {}),
    ...(tls ? { tls } : {}),
  };
  return Buffer.from(clientConfigToToml({ profiles: { default: profile } })).toString('utf8');
}
