// The inbox harness with the app's HTTP routes (the approvals page, its forms) served on a port of
// their own, which PUBLIC_BASE_URL names as production's does, so the links in notifications open.
import { appRoutes } from '../../src/http/routes.js';
import { startHttpServer, type HttpServer } from '../../src/shared/http-server.js';
import { freePort } from '../../src/shared/free-port.js';
import { startInboxHarness, type HarnessOptions, type InboxHarness } from './inbox-harness.js';

export interface AppServer {
  h: InboxHarness;
  http: HttpServer;
  close(): Promise<void>;
}

/** `beforeWorkers`: set-up the workers must find done (mailboxes, account settings). */
export async function startAppServer(opts: HarnessOptions, beforeWorkers?: (h: InboxHarness) => Promise<void>): Promise<AppServer> {
  const port = await freePort();
  const h = await startInboxHarness({ ...opts, env: { ...opts.env, PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, HTTP_PORT: String(port) } });
  await beforeWorkers?.(h);
  await h.startWorkers();
  const http = await startHttpServer({ host: '127.0.0.1', port, routes: appRoutes(h.cfg, { prisma: h.prisma, client: h.client }) });
  return {
    h,
    http,
    async close() {
      await http.close();
      await h.close();
    },
  };
}
