// Programmatic entry point: start a Gmail emulator in-process (tests, benchmarks, dev mode).
import type { AddressInfo } from 'node:net';
import { EmulatorControlClient } from './control-client.js';
import type { FaultConfig } from './faults.js';
import type { OAuthClientRegistration } from './oauth.js';
import type { PushConfig } from './push.js';
import type { QuotaConfig } from './quota.js';
import { createEmulatorServer } from './server.js';
import { GmailWorld, type CreatedAccount } from './world.js';
import { WorldStateFile, type StateLoad } from './state-file.js';

export interface GmailEmulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  /** Seed for ids, history gaps, faults and push misbehaviour. Default 1. */
  seed?: number;
  /** Quotas are on by default (legacy profile); `false` turns them off. */
  quota?: Partial<QuotaConfig> | false;
  faults?: Partial<FaultConfig>;
  push?: Partial<PushConfig>;
  /** How long history records are kept (default 7 days). */
  historyRetentionMs?: number;
  /** Lifetime of issued access tokens (default 3599 s, like Google). */
  accessTokenTtlSeconds?: number;
  /** OAuth clients; default one client, DEFAULT_CLIENT. */
  clients?: OAuthClientRegistration[];
  /** Consent for an unknown login_hint creates that account (default true). */
  createAccountsOnConsent?: boolean;
  /**
   * Keep the world in this file: restored at start (then `accounts` is not created), written after
   * changes and at close (dev mode's demo survives a restart).
   */
  stateFile?: string;
  /** Accounts to create at start, optionally seeded. */
  accounts?: Array<{ email: string; name?: string; seed?: { count: number; seed?: number; spanDays?: number } }>;
}

export interface RunningGmailEmulator {
  /** Base URL, e.g. http://127.0.0.1:8235 — also the googleapis rootUrl (with a trailing slash). */
  url: string;
  port: number;
  control: EmulatorControlClient;
  /** Accounts created from `options.accounts`, with their refresh tokens. */
  accounts: CreatedAccount[];
  /** With `stateFile`: what start-up found in it. */
  state?: StateLoad;
  /** In-process access to the emulated world (not available when run as a child process). */
  world: GmailWorld;
  close(): Promise<void>;
}

export async function startGmailEmulator(opts: GmailEmulatorOptions = {}): Promise<RunningGmailEmulator> {
  const seed = opts.seed ?? 1;
  const world = new GmailWorld({
    seed,
    quota: opts.quota === false ? { enabled: false } : (opts.quota ?? {}),
    faults: opts.faults ?? {},
    push: opts.push ?? {},
    historyRetentionMs: opts.historyRetentionMs ?? 7 * 24 * 3600_000,
    accessTokenTtlSeconds: opts.accessTokenTtlSeconds ?? 3599,
    clients: opts.clients ?? [],
    createAccountsOnConsent: opts.createAccountsOnConsent ?? true,
  });
  const stateFile = opts.stateFile ? new WorldStateFile(opts.stateFile, world) : undefined;
  const state = stateFile?.load();
  const accounts: CreatedAccount[] = [];
  for (const spec of state?.outcome === 'restored' ? [] : (opts.accounts ?? [])) {
    const created = world.createAccount({ email: spec.email, ...(spec.name ? { name: spec.name } : {}) });
    if (spec.seed) {
      const seeded = world.seed(spec.email, { seed: spec.seed.seed ?? seed, count: spec.seed.count, spanDays: spec.seed.spanDays ?? 30 });
      created.historyId = seeded.historyId;
    }
    accounts.push(created);
  }

  let url = '';
  const server = createEmulatorServer(world, () => url, stateFile && (() => stateFile.changed()));
  server.keepAliveTimeout = 30_000;
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  url = `http://${host}:${port}`;

  return {
    url,
    port,
    control: new EmulatorControlClient(url),
    accounts,
    world,
    ...(state ? { state } : {}),
    close: async () => {
      world.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stateFile?.close();
    },
  };
}

export { EmulatorControlClient } from './control-client.js';
export { EmulatorControlError } from '../control-http.js';
export { spawnGmailEmulator, type ChildGmailEmulator, type ChildEmulatorDetails } from './child.js';
export type { EmulatorInfo, EmulatorMetrics, MailboxState, DeliveredMessage } from './control-client.js';
export type { CreatedAccount, IncomingMessage } from './world.js';
export type { StateLoad } from './state-file.js';
export type { QuotaConfig, QuotaProfile } from './quota.js';
export type { FaultConfig, LatencyDistribution } from './faults.js';
export type { PushConfig, PushTarget } from './push.js';
export { DEFAULT_CLIENT, FULL_SCOPE, type OAuthClientRegistration } from './oauth.js';
