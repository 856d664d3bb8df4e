import { request } from 'node:http';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startCodecServer, type CodecServer } from '../../src/codec-server/server.js';
import { AesGcmPayloadCodec } from '../../src/temporal/codec.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';

const UI_ORIGIN = 'http://127.0.0.1:8233';
const TOKEN = 'test-token-0123456789abcdef';
const codec = new AesGcmPayloadCodec(fixedTestPayloadKeys());

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

// node:http rather than fetch: fetch manages Origin itself, and we need to send arbitrary ones.
function call(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'POST', headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

async function encryptedJsonPayload(value: unknown) {
  const [encoded] = await codec.encode([defaultPayloadConverter.toPayload(value)]);
  return {
    metadata: Object.fromEntries(
      Object.entries(encoded!.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')]),
    ),
    data: Buffer.from(encoded!.data!).toString('base64'),
  };
}

describe('codec server without token', () => {
  let server: CodecServer;
  beforeAll(async () => {
    server = await startCodecServer({ port: 0, codec, corsOrigins: [UI_ORIGIN] });
  });
  afterAll(() => server.close());

  it('decodes for the allowed origin, with CORS headers', async () => {
    const reply = await call(`${server.url}/decode`, {
      headers: { origin: UI_ORIGIN, 'content-type': 'application/json', 'x-namespace': 'default' },
      body: JSON.stringify({ payloads: [await encryptedJsonPayload({ subject: 'Lunch on Friday?' })] }),
    });
    expect(reply.status).toBe(200);
    expect(reply.headers['access-control-allow-origin']).toBe(UI_ORIGIN);
    const { payloads } = JSON.parse(reply.body) as { payloads: { metadata: Record<string, string>; data: string }[] };
    expect(Buffer.from(payloads[0]!.metadata['encoding']!, 'base64').toString()).toBe('json/plain');
    expect(JSON.parse(Buffer.from(payloads[0]!.data, 'base64').toString())).toEqual({ subject: 'Lunch on Friday?' });
  });

  it('encodes, and its output decodes locally', async () => {
    const plain = {
      metadata: { encoding: Buffer.from('json/plain').toString('base64') },
      data: Buffer.from('"hi"').toString('base64'),
    };
    const reply = await call(`${server.url}/encode`, { body: JSON.stringify({ payloads: [plain] }) });
    expect(reply.status).toBe(200);
    const [json] = (JSON.parse(reply.body) as { payloads: { metadata: Record<string, string>; data: string }[] })
      .payloads;
    expect(Buffer.from(json!.metadata['encoding']!, 'base64').toString()).toBe('binary/encrypted');
    const [decoded] = await codec.decode([
      {
        metadata: Object.fromEntries(Object.entries(json!.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
        data: Buffer.from(json!.data, 'base64'),
      },
    ]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toBe('hi');
  });

  it('refuses other origins with 403 and no CORS headers', async () => {
    const reply = await call(`${server.url}/decode`, {
      headers: { origin: 'http://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ payloads: [await encryptedJsonPayload('secret')] }),
    });
    expect(reply.status).toBe(403);
    expect(reply.headers['access-control-allow-origin']).toBeUndefined();
    expect(reply.body).not.toContain('secret');

    const preflight = await call(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example' },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers the preflight of the allowed origin', async () => {
    const reply = await call(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: {
        origin: UI_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-namespace,authorization',
      },
    });
    expect(reply.status).toBe(204);
    expect(reply.headers['access-control-allow-origin']).toBe(UI_ORIGIN);
    expect(reply.headers['access-control-allow-methods']).toContain('POST');
    const allowed = String(reply.headers['access-control-allow-headers']).split(/,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(['content-type', 'x-namespace', 'authorization']));
  });

  it('rejects bad JSON and wrong shapes with 400 and a clear message', async () => {
    const badJson = await call(`${server.url}/decode`, { body: '{"payloads": [' });
    expect(badJson.status).toBe(400);
    expect((JSON.parse(badJson.body) as { error: string }).error).toMatch(/not valid JSON/);

    const badShape = await call(`${server.url}/decode`, { body: JSON.stringify({ payload: [] }) });
    expect(badShape.status).toBe(400);
    expect((JSON.parse(badShape.body) as { error: string }).error).toMatch(/expected \{"payloads"/);
  });

  it('answers an empty request, as the Temporal CLI sends for a query without arguments, with no payloads', async () => {
    for (const route of ['encode', 'decode']) {
      const reply = await call(`${server.url}/${route}`, { body: '{}', headers: { 'content-type': 'application/json' } });
      expect(reply.status, reply.body).toBe(200);
      expect(JSON.parse(reply.body)).toEqual({ payloads: [] });
    }
  });

  it('reports a payload it cannot decrypt as 400 naming the key id', async () => {
    const other = new AesGcmPayloadCodec([{ id: 'retired-key', key: Buffer.alloc(32, 1) }]);
    const [encoded] = await other.encode([defaultPayloadConverter.toPayload('x')]);
    const body = JSON.stringify({
      payloads: [
        {
          metadata: Object.fromEntries(
            Object.entries(encoded!.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')]),
          ),
          data: Buffer.from(encoded!.data!).toString('base64'),
        },
      ],
    });
    const reply = await call(`${server.url}/decode`, { body });
    expect(reply.status).toBe(400);
    expect(reply.body).toContain('retired-key');
  });

  it('rejects oversized bodies and unknown routes', async () => {
    const small = await startCodecServer({ port: 0, codec, corsOrigins: [], maxBodyBytes: 1024 });
    try {
      const big = await call(`${small.url}/decode`, {
        body: JSON.stringify({ payloads: [{ data: 'A'.repeat(4096) }] }),
      });
      expect(big.status).toBe(413);
    } finally {
      await small.close();
    }
    expect((await call(`${server.url}/nope`)).status).toBe(404);
    expect((await call(`${server.url}/decode`, { method: 'GET' })).status).toBe(405);
  });
});

describe('codec server with a token', () => {
  let server: CodecServer;
  beforeAll(async () => {
    server = await startCodecServer({ port: 0, codec, corsOrigins: [UI_ORIGIN], token: TOKEN });
  });
  afterAll(() => server.close());

  const decode = async (headers: Record<string, string>) =>
    call(`${server.url}/decode`, {
      headers: { origin: UI_ORIGIN, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ payloads: [await encryptedJsonPayload('hello')] }),
    });

  it('returns 401 without a token or with a wrong one, still readable by the UI', async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: TOKEN },
      { authorization: 'Bearer ' },
    ];
    for (const headers of attempts) {
      const reply = await decode(headers);
      expect(reply.status).toBe(401);
      expect(reply.headers['www-authenticate']).toBe('Bearer');
      expect(reply.headers['access-control-allow-origin']).toBe(UI_ORIGIN);
    }
  });

  it('decodes with the right token', async () => {
    const reply = await decode({ authorization: `Bearer ${TOKEN}` });
    expect(reply.status).toBe(200);
    const { payloads } = JSON.parse(reply.body) as { payloads: { data: string }[] };
    expect(Buffer.from(payloads[0]!.data, 'base64').toString()).toBe('"hello"');
  });

  it('answers preflight without a token (browsers send none there)', async () => {
    const reply = await call(`${server.url}/decode`, { method: 'OPTIONS', headers: { origin: UI_ORIGIN } });
    expect(reply.status).toBe(204);
  });
});

describe('codec server with a codec that fails', () => {
  it('answers a generic 500 and logs the error, which never reaches the caller', async () => {
    // The codec is not the unit here: one whose key store is unreachable stands in for any internal fault.
    const failing = {
      encode: () => Promise.reject(new Error('key store at 10.1.2.3 refused: token s3cr3t')),
      decode: () => Promise.reject(new Error('key store at 10.1.2.3 refused: token s3cr3t')),
    };
    const server = await startCodecServer({ port: 0, codec: failing, corsOrigins: [UI_ORIGIN] });
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const reply = await call(`${server.url}/decode`, { body: JSON.stringify({ payloads: [await encryptedJsonPayload('x')] }) });
      expect(reply.status).toBe(500);
      expect(JSON.parse(reply.body)).toEqual({ error: 'internal error' });
      expect(logged.mock.calls.map((c) => String(c[0])).join('\n')).toContain('key store at 10.1.2.3 refused');
    } finally {
      logged.mockRestore();
      await server.close();
    }
  });
});
