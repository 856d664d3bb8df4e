// Codec server for the Temporal Web UI and CLI (`--codec-endpoint`): POST /encode and /decode take
// and return `{"payloads": [{"metadata": {"k": "<base64>"}, "data": "<base64>"}]}`. Browsers reach it
// only from the allowed origins; with a token set, every request needs `Authorization: Bearer <token>`.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { z } from 'zod';
import { PayloadCodecError } from '../temporal/codec.js';
import { sendJson } from '../shared/json-response.js';
import { createLogger } from '../shared/log.js';

const log = createLogger('codec');
const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;
const ALLOWED_HEADERS = 'content-type, x-namespace, authorization';

export interface CodecServerOptions {
  host?: string;
  /** 0 picks a free port. */
  port: number;
  codec: PayloadCodec;
  /** Exact origins (scheme://host:port) whose pages may call us, e.g. the Web UI. */
  corsOrigins: string[];
  token?: string;
  maxBodyBytes?: number;
}

export interface CodecServer {
  url: string;
  close(): Promise<void>;
}

const jsonPayloads = z
  .object({
    // The Temporal CLI (Go protojson) leaves an empty list out: `{}` is no payloads, e.g. a query
    // without arguments.
    payloads: z
      .array(
        z.object({
          metadata: z.record(z.string(), z.string()).nullish(),
          data: z.string().nullish(),
        }),
      )
      .default([]),
  })
  .strict();
type JsonPayload = z.infer<typeof jsonPayloads>['payloads'][number];

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function startCodecServer(opts: CodecServerOptions): Promise<CodecServer> {
  const host = opts.host ?? '127.0.0.1';
  const allowedOrigins = new Set(opts.corsOrigins);
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const tokenDigest = opts.token ? sha256(`Bearer ${opts.token}`) : null;

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      // A 4xx tells the caller what was wrong with its request; anything else is logged, not echoed.
      if (status === 500) log.error(`${req.method ?? 'POST'} ${req.url ?? '/'} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      const message = status === 500 ? 'internal error' : (err as Error).message;
      // An unread oversized body would stall a keep-alive connection.
      if (status === 413) res.setHeader('Connection', 'close');
      if (!res.headersSent) sendJson(res, status, { error: message });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const origin = req.headers.origin;
    // Requests without Origin come from non-browser clients (temporal CLI, scripts); CORS is irrelevant there.
    if (origin !== undefined) {
      if (!allowedOrigins.has(origin)) throw new HttpError(403, `origin ${origin} is not allowed`);
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.setHeader('Vary', 'Origin');
    }

    const path = new URL(req.url ?? '/', 'http://codec').pathname;
    const operation = path === '/encode' ? 'encode' : path === '/decode' ? 'decode' : null;
    if (!operation) throw new HttpError(404, `no route ${path}; use POST /encode or /decode`);

    if (req.method === 'OPTIONS') {
      // Preflight carries no credentials, so it is answered before the token check.
      res.writeHead(204, {
        'Access-Control-Allow-Methods': 'POST, OPTIONS',
        'Access-Control-Allow-Headers': ALLOWED_HEADERS,
        'Access-Control-Max-Age': '600',
      });
      res.end();
      return;
    }
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST, OPTIONS');
      throw new HttpError(405, `${req.method} not allowed; use POST`);
    }
    if (tokenDigest && !timingSafeEqual(sha256(req.headers.authorization ?? ''), tokenDigest)) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      throw new HttpError(401, 'missing or wrong bearer token');
    }

    const body = await readBody(req, maxBodyBytes);
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch (err) {
      throw new HttpError(400, `body is not valid JSON: ${(err as Error).message}`);
    }
    const parsed = jsonPayloads.safeParse(json);
    if (!parsed.success) {
      throw new HttpError(400, 'expected {"payloads": [{"metadata": {"key": "<base64>"}, "data": "<base64>"}]}');
    }

    const input = parsed.data.payloads.map(fromJson);
    let output: Payload[];
    try {
      output = operation === 'encode' ? await opts.codec.encode(input) : await opts.codec.decode(input);
    } catch (err) {
      if (err instanceof PayloadCodecError) throw new HttpError(400, err.message);
      throw err;
    }
    sendJson(res, 200, { payloads: output.map(toJson) });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    url,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.reject(new HttpError(413, `body larger than ${limit} bytes`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new HttpError(413, `body larger than ${limit} bytes`));
        req.pause();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function fromJson({ metadata, data }: JsonPayload): Payload {
  return {
    metadata: metadata
      ? Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')]))
      : undefined,
    data: data ? Buffer.from(data, 'base64') : undefined,
  };
}

function toJson({ metadata, data }: Payload): JsonPayload {
  return {
    metadata: metadata
      ? Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')]))
      : undefined,
    data: data ? Buffer.from(data).toString('base64') : undefined,
  };
}


function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
