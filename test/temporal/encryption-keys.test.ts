import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/shared/config-error.js';
import { AesGcmPayloadCodec } from '../../src/temporal/codec.js';
import { DEV_PAYLOAD_KEY_FILE, fixedTestPayloadKeys, resolvePayloadKeys } from '../../src/temporal/encryption-keys.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'payload-keys-test-'));
});
afterEach(() => rm(dataDir, { recursive: true, force: true }));

describe('resolvePayloadKeys', () => {
  it('uses PAYLOAD_ENCRYPTION_KEYS when set, in any mode', async () => {
    const configured = [{ id: 'prod-1', key: randomBytes(32) }];
    for (const mode of ['dev', 'production'] as const) {
      expect(
        await resolvePayloadKeys({ PAYLOAD_ENCRYPTION_KEYS: configured, DURABLE_INBOX_MODE: mode }, { dataDir }),
      ).toBe(configured);
    }
  });

  it('in dev mode creates one key, private to the user, and returns the same key on later calls', async () => {
    const cfg = { PAYLOAD_ENCRYPTION_KEYS: undefined, DURABLE_INBOX_MODE: 'dev' as const };
    const [first] = await resolvePayloadKeys(cfg, { dataDir });
    const [again] = await resolvePayloadKeys(cfg, { dataDir });
    expect(first!.key).toHaveLength(32);
    expect(again).toEqual(first);
    expect((await stat(join(dataDir, DEV_PAYLOAD_KEY_FILE))).mode & 0o777).toBe(0o600);

    // What one process encrypted, a restarted one decrypts.
    const encoded = await new AesGcmPayloadCodec([first!]).encode([{ metadata: {}, data: Buffer.from('kept') }]);
    const [decoded] = await new AesGcmPayloadCodec(await resolvePayloadKeys(cfg, { dataDir })).decode(encoded);
    expect(Buffer.from(decoded!.data!).toString()).toBe('kept');
  });

  it('processes starting together agree on one dev key', async () => {
    const cfg = { PAYLOAD_ENCRYPTION_KEYS: undefined, DURABLE_INBOX_MODE: 'dev' as const };
    const results = await Promise.all(Array.from({ length: 8 }, () => resolvePayloadKeys(cfg, { dataDir })));
    const stored = JSON.parse(await readFile(join(dataDir, DEV_PAYLOAD_KEY_FILE), 'utf8')) as { key: string };
    for (const [key] of results) expect(key!.key.toString('base64')).toBe(stored.key);
  });

  it('refuses a damaged dev key file instead of replacing it', async () => {
    await writeFile(join(dataDir, DEV_PAYLOAD_KEY_FILE), '{"id": "dev", "key": "c2hvcnQ="}');
    await expect(
      resolvePayloadKeys({ PAYLOAD_ENCRYPTION_KEYS: undefined, DURABLE_INBOX_MODE: 'dev' }, { dataDir }),
    ).rejects.toThrow(/32 bytes/);
  });

  it('in production, missing keys are a configuration error', async () => {
    await expect(
      resolvePayloadKeys({ PAYLOAD_ENCRYPTION_KEYS: undefined, DURABLE_INBOX_MODE: 'production' }, { dataDir }),
    ).rejects.toThrow(ConfigError);
  });

  it('the fixed test key is a valid codec key', () => {
    expect(() => new AesGcmPayloadCodec(fixedTestPayloadKeys())).not.toThrow();
  });
});
