// A real HTTPS server on 127.0.0.1 playing a sender's one-click unsubscribe endpoint (and the hostile
// ones: a redirect, a 10 MB answer, an answer that never comes), with the allowance that lets the
// one-click client reach it. Every request is recorded: method, path, headers, body.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCertificates } from '../../mail-servers/certificates.js';
import { testOnlyLoopbackAllowance, type TestOnlyAllowance } from '../../src/outbound/test-allowance.js';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type Route = (req: IncomingMessage, res: ServerResponse) => void;

export interface OneClickServer {
  /** https://127.0.0.1:<port> */
  origin: string;
  port: number;
  allowance: TestOnlyAllowance;
  requests: RecordedRequest[];
  /** What a path answers (default: 200 "ok"). */
  route(path: string, handler: Route): void;
  close(): Promise<void>;
}

export async function startOneClickServer(): Promise<OneClickServer> {
  const dir = await mkdtemp(join(tmpdir(), 'one-click-'));
  const certs = await makeCertificates(dir);
  const routes = new Map<string, Route>();
  const requests: RecordedRequest[] = [];
  const server: Server = createServer({ cert: await readFile(certs.certFile), key: await readFile(certs.keyFile) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      requests.push({ method: req.method ?? '', path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const handler = routes.get(path);
      if (handler) handler(req, res);
      else res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': 'session=tracked; Path=/' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    origin: `https://127.0.0.1:${port}`,
    port,
    allowance: testOnlyLoopbackAllowance(port, certs.caPem),
    requests,
    route: (path, handler) => routes.set(path, handler),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
