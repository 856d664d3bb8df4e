// Standalone HTTP server (`npm run start:http`): the app's routes (src/http/routes.ts).
import { loadConfigOrExit } from '../config/env.js';
import { resolveDatabase } from '../db/resolve-database.js';
import { createPrismaClient } from '../db/client.js';
import { connectClient } from '../temporal/client.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';
import { createLogger } from '../shared/log.js';
import { startTracing, stopTracing } from '../temporal/tracing.js';
import { startHttpServer } from '../shared/http-server.js';
import { appRoutes } from './routes.js';

const cfg = loadConfigOrExit(process.env, { modeRequired: true });
const log = createLogger('http');
await startTracing(cfg, { serviceName: 'durable-inbox-http' });
const database = await resolveDatabase(cfg, log);
const prisma = createPrismaClient(database.url);
const temporal = await connectClient(cfg, await resolvePayloadKeys(cfg));
const server = await startHttpServer({
  host: cfg.HTTP_HOST,
  port: cfg.HTTP_PORT,
  routes: appRoutes(cfg, { prisma, client: temporal }),
});
log.info(`listening on ${server.url}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void (async () => {
      await server.close();
      await prisma.$disconnect();
      await temporal.connection.close();
      await database.stop();
      await stopTracing();
      process.exit(0);
    })();
  });
}
