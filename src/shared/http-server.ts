// The app's HTTP server (node:http): health, the Gmail push endpoint, the approvals page.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendJson } from './json-response.js';
import { createLogger } from './log.js';

const log = createLogger('http');

export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;
/** Keys: "GET /healthz" for one path, "GET /approvals/a/*" for every path under /approvals/a/. */
export type Routes = Record<string, RouteHandler>;

export interface HttpServer {
  url: string;
  close(): Promise<void>;
}


function routeFor(routes: Routes, method: string, path: string): RouteHandler | undefined {
  const exact = routes[`${method} ${path}`];
  if (exact) return exact;
  for (let end = path.lastIndexOf('/'); end > 0; end = path.lastIndexOf('/', end - 1)) {
    const handler = routes[`${method} ${path.slice(0, end)}/*`];
    if (handler && path.length > end + 1) return handler;
  }
  return undefined;
}

export async function startHttpServer(opts: { host: string; port: number; routes: Routes }): Promise<HttpServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const handler = routeFor(opts.routes, req.method ?? 'GET', path ?? '/');
    if (!handler) {
      sendJson(res, 404, { error: 'not found' });
      return;
    }
    handler(req, res).catch((err: unknown) => {
      // The detail goes to the log, not to whoever asked: it can name hosts, tables, accounts.
      log.error(`${req.method ?? 'GET'} ${path ?? '/'} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
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
