// The app's HTTP server (node:http): health today, the Gmail push endpoint with the sync issue.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;
export type Routes = Record<string, RouteHandler>; // key: "GET /healthz"

export interface HttpServer {
  url: string;
  close(): Promise<void>;
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}

export async function startHttpServer(opts: { host: string; port: number; routes: Routes }): Promise<HttpServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const handler = opts.routes[`${req.method} ${path}`];
    if (!handler) {
      sendJson(res, 404, { error: 'not found' });
      return;
    }
    handler(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: err instanceof Error ? err.message : String(err) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
