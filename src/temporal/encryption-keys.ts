// Which AES keys encrypt payloads. Production: PAYLOAD_ENCRYPTION_KEYS, nothing else. Dev mode
// without it: one key generated on first use and kept in .data/, so history written before a restart
// still decrypts after it.
import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../shared/config-error.js';
import type { PayloadKey } from './codec.js';
import { projectRoot } from './project-root.js';

export const DEV_PAYLOAD_KEY_FILE = 'dev-payload-key.json';
export const DEV_TOKEN_KEY_FILE = 'dev-token-key.json';

export interface ResolvePayloadKeysOptions {
  /** Where the dev key lives (default `<project>/.data`). */
  dataDir?: string;
}

/**
 * The key settings, named as the environment names them (src/config/env.ts reads them): production
 * gives its keys; dev mode generates the missing ones.
 */
export interface KeySettings {
  PAYLOAD_ENCRYPTION_KEYS?: PayloadKey[] | undefined;
  TOKEN_ENCRYPTION_KEY?: string | undefined;
  DURABLE_INBOX_MODE: 'dev' | 'production';
}

export async function resolvePayloadKeys(
  cfg: Pick<KeySettings, 'PAYLOAD_ENCRYPTION_KEYS' | 'DURABLE_INBOX_MODE'>,
  opts: ResolvePayloadKeysOptions = {},
): Promise<PayloadKey[]> {
  if (cfg.PAYLOAD_ENCRYPTION_KEYS) return cfg.PAYLOAD_ENCRYPTION_KEYS;
  if (cfg.DURABLE_INBOX_MODE !== 'dev') {
    // loadConfig already refuses this; kept for configs built by other means.
    throw new ConfigError('PAYLOAD_ENCRYPTION_KEYS: required when DURABLE_INBOX_MODE=production');
  }
  return [await loadOrCreateDevKey(opts.dataDir ?? join(projectRoot(), '.data'), DEV_PAYLOAD_KEY_FILE)];
}

/** The AES key for OAuth tokens at rest: TOKEN_ENCRYPTION_KEY, or in dev mode a generated one kept in .data/. */
export async function resolveTokenKey(
  cfg: Pick<KeySettings, 'TOKEN_ENCRYPTION_KEY' | 'DURABLE_INBOX_MODE'>,
  opts: ResolvePayloadKeysOptions = {},
): Promise<Buffer> {
  if (cfg.TOKEN_ENCRYPTION_KEY) return Buffer.from(cfg.TOKEN_ENCRYPTION_KEY, 'base64');
  if (cfg.DURABLE_INBOX_MODE !== 'dev') {
    throw new ConfigError('TOKEN_ENCRYPTION_KEY: required when DURABLE_INBOX_MODE=production');
  }
  return (await loadOrCreateDevKey(opts.dataDir ?? join(projectRoot(), '.data'), DEV_TOKEN_KEY_FILE)).key;
}

/** A fixed key for tests, so fixtures encrypted once stay readable. Never use it for real data. */
export function fixedTestPayloadKeys(): PayloadKey[] {
  return [{ id: 'test-key-1', key: Buffer.from('dGVzdC1vbmx5LWtleS1kdXJhYmxlLWluYm94LTMyYiE=', 'base64') }];
}

interface DevKeyFile {
  id: string;
  key: string;
}

async function loadOrCreateDevKey(dataDir: string, fileName: string): Promise<PayloadKey> {
  const file = join(dataDir, fileName);
  await mkdir(dataDir, { recursive: true });
  const existing = await readDevKey(file);
  if (existing) return existing;

  // Write the complete file under a private name, then hard-link it into place: two processes
  // starting together (worker and codec server) cannot both create a key, and the loser reads the winner's.
  const candidate: DevKeyFile = {
    id: `dev-${new Date().toISOString().slice(0, 10)}`,
    key: randomBytes(32).toString('base64'),
  };
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(temp, `${JSON.stringify(candidate, null, 2)}\n`, { mode: 0o600 });
  try {
    await chmod(temp, 0o600); // in case the umask widened it
    await link(temp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await unlink(temp).catch(() => {});
  }
  const stored = await readDevKey(file);
  if (!stored) throw new Error(`could not create the dev key ${file}`);
  return stored;
}

async function readDevKey(file: string): Promise<PayloadKey | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  let parsed: Partial<DevKeyFile>;
  try {
    parsed = JSON.parse(text) as Partial<DevKeyFile>;
  } catch {
    throw new Error(`${file} is not valid JSON; restore it (payloads written with it are unreadable without it)`);
  }
  const key = Buffer.from(parsed.key ?? '', 'base64');
  if (typeof parsed.id !== 'string' || !parsed.id || key.length !== 32) {
    throw new Error(`${file} must hold {"id": "...", "key": "<base64 of 32 bytes>"}`);
  }
  return { id: parsed.id, key };
}
