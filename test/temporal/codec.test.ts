import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  AesGcmPayloadCodec,
  ENCODING_ENCRYPTED,
  METADATA_ENCRYPTION_KEY_ID,
  PayloadCodecError,
  type PayloadKey,
} from '../../src/temporal/codec.js';

const oldKey: PayloadKey = { id: 'k-2025', key: randomBytes(32) };
const newKey: PayloadKey = { id: 'k-2026', key: randomBytes(32) };
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

describe('AesGcmPayloadCodec', () => {
  const samples: Payload[] = [
    defaultPayloadConverter.toPayload({ subject: 'Quarterly numbers', body: 'Revenue is up 12%' }),
    defaultPayloadConverter.toPayload('a plain string'),
    defaultPayloadConverter.toPayload(undefined), // binary/null: metadata only, no data
    defaultPayloadConverter.toPayload(new Uint8Array([0, 1, 2, 255])),
  ];

  it('round-trips payloads, metadata included, and hides their content', async () => {
    const codec = new AesGcmPayloadCodec([newKey]);
    const encoded = await codec.encode(samples);

    expect(encoded).toHaveLength(samples.length);
    for (const payload of encoded) {
      expect(text(payload.metadata?.['encoding'])).toBe(ENCODING_ENCRYPTED);
      expect(text(payload.metadata?.[METADATA_ENCRYPTION_KEY_ID])).toBe('k-2026');
      expect(Buffer.from(payload.data!).includes('Revenue')).toBe(false);
      expect(Buffer.from(payload.data!).includes('json/plain')).toBe(false);
    }
    const decoded = await codec.decode(encoded);
    expect(decoded.map((p) => defaultPayloadConverter.fromPayload(p))).toEqual(
      samples.map((p) => defaultPayloadConverter.fromPayload(p)),
    );
    expect(text(decoded[0]!.metadata?.['encoding'])).toBe('json/plain');
  });

  it('uses a fresh IV each time, so equal inputs give different ciphertexts', async () => {
    const codec = new AesGcmPayloadCodec([newKey]);
    const [a] = await codec.encode([samples[0]!]);
    const [b] = await codec.encode([samples[0]!]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
  });

  it('leaves already-encrypted payloads alone and passes unencrypted ones through decode', async () => {
    const codec = new AesGcmPayloadCodec([newKey]);
    const encoded = await codec.encode([samples[0]!]);
    const again = await codec.encode(encoded);
    expect(again[0]).toBe(encoded[0]);
    const passthrough = await codec.decode([samples[1]!]);
    expect(passthrough[0]).toBe(samples[1]);
  });

  it('after key rotation, payloads written with the old key still decode; new ones use the new key', async () => {
    const before = new AesGcmPayloadCodec([oldKey]);
    const written = await before.encode([samples[0]!]);

    const after = new AesGcmPayloadCodec([newKey, oldKey]);
    const [decoded] = await after.decode(written);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual({
      subject: 'Quarterly numbers',
      body: 'Revenue is up 12%',
    });

    const [rewritten] = await after.encode([decoded!]);
    expect(text(rewritten!.metadata?.[METADATA_ENCRYPTION_KEY_ID])).toBe('k-2026');
  });

  it('refuses a payload whose key id is not configured, naming the id', async () => {
    const written = await new AesGcmPayloadCodec([oldKey]).encode([samples[0]!]);
    const withoutOld = new AesGcmPayloadCodec([newKey]);
    await expect(withoutOld.decode(written)).rejects.toThrow(PayloadCodecError);
    await expect(withoutOld.decode(written)).rejects.toThrow(/"k-2025".*not among the configured keys/);
  });

  it('detects tampering with the ciphertext, the IV or the tag', async () => {
    const codec = new AesGcmPayloadCodec([newKey]);
    const [encoded] = await codec.encode([samples[0]!]);
    const length = encoded!.data!.length;
    for (const position of [0, 12, length - 20, length - 1]) {
      const data = Buffer.from(encoded!.data!);
      data[position]! ^= 0x01;
      await expect(codec.decode([{ ...encoded!, data }])).rejects.toThrow(/failed authentication/);
    }
    const truncated = { ...encoded!, data: Buffer.from(encoded!.data!).subarray(0, 20) };
    await expect(codec.decode([truncated])).rejects.toThrow(/too short/);
  });

  it('detects a payload relabelled with another configured key id', async () => {
    const codec = new AesGcmPayloadCodec([newKey, oldKey]);
    const [encoded] = await codec.encode([samples[0]!]);
    const relabelled = {
      ...encoded!,
      metadata: { ...encoded!.metadata, [METADATA_ENCRYPTION_KEY_ID]: Buffer.from('k-2025') },
    };
    await expect(codec.decode([relabelled])).rejects.toThrow(/failed authentication/);
  });

  it('rejects bad key lists', () => {
    expect(() => new AesGcmPayloadCodec([])).toThrow(/at least one key/);
    expect(() => new AesGcmPayloadCodec([{ id: 'short', key: randomBytes(16) }])).toThrow(/32 bytes/);
    expect(() => new AesGcmPayloadCodec([newKey, { ...newKey }])).toThrow(/listed twice/);
  });
});
