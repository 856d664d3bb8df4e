// `npm run stack`: the production shape on this machine. The Temporal server 1.30.9 on PostgreSQL
// (built from Go modules on first use, deploy/temporal/* as docker-compose.yml uses them) with its
// Web UI, the workers as separate OS processes (STACK_WORKERS_PER_ROLE of each, started again if one
// dies), the codec and HTTP servers, the schedules; the emulators stand in for Gmail, Anthropic and
// Discord without credentials, as in `npm run dev`. Ctrl-C stops everything, last started first.
import { dropRetriesAfterClose } from '../temporal/closed-connection-guard.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfigOrExit } from '../config/env.js';
import { resolveDatabase } from '../db/resolve-database.js';
import { connectDemo, operatorTokenForRun, runningBanner } from '../dev/app-services.js';
import { startDemoWorld } from '../dev/demo.js';
import { createLogger } from '../shared/log.js';
import { StopList } from '../shared/stop-list.js';
import { temporalProfileToml } from '../temporal/connection.js';
import { startTracing, stopTracing } from '../temporal/tracing.js';
import { ensureTlsCertificates } from '../temporal/tls-certificates.js';
import { WORKER_ROLES, workerTaskQueues } from './worker-processes.js';
import { startStack, temporalDatabaseUrl } from './stack.js';

const log = createLogger('stack');
const defaultDataDir = fileURLToPath(new URL('../../.data/stack/', import.meta.url));

/** Things to stop on exit, last started first. */
const running = new StopList(log);

async function main(): Promise<void> {
  dropRetriesAfterClose();
  // Signals first: the child processes' bound-child hooks leave Ctrl-C to us once we listen.
  running.exitOnSignals();
  const userCfg = loadConfigOrExit();
  if (await startTracing(userCfg, { serviceName: 'durable-inbox-stack' })) running.push({ name: 'tracing', stop: stopTracing });
  const dataDir = userCfg.DATA_DIR ? join(resolve(userCfg.DATA_DIR), '/') : defaultDataDir;
  mkdirSync(dataDir, { recursive: true });

  const demo = await startDemoWorld(userCfg, dataDir);
  running.push({ name: 'emulators', stop: () => demo.close() });
  const env = stringEnv({ ...process.env, ...demo.env, ...operatorTokenForRun(userCfg) });
  const cfg = loadConfigOrExit(env);

  // Several processes share the database: a PostgreSQL server, never the embedded one.
  const database = await resolveDatabase({ ...cfg, EMBEDDED_POSTGRES: 'never' }, log);
  log.info(`database ready (${database.source}); Temporal's: ${temporalDatabaseUrl(cfg, database.url).replace(/\/\/[^@]*@/, '//')}`);

  // The frontend requires mTLS; the CA and certificates are made once and kept beside the data.
  const tls = await ensureTlsCertificates(join(dataDir, 'tls'), (m) => log.info(m));
  const stack = await startStack({
    cfg,
    env,
    tls,
    databaseUrl: database.url,
    workerOutput: (name, line) => console.log(`[${name}] ${line}`),
    log,
  });
  running.push({ name: 'stack', stop: () => stack.stop() });
  void stack.server.crashed.then(async (why) => {
    log.error(why);
    await running.exit(1);
  });

  // The `temporal` CLI (and `npm run temporal:cli`) connect with this profile: TEMPORAL_CONFIG_FILE=<it>.
  const profile = join(dataDir, 'temporal.toml');
  writeFileSync(profile, temporalProfileToml(stack.cfg), { mode: 0o600 });

  await stack.workers.untilPolling(stack.client, workerTaskQueues(stack.cfg));
  await connectDemo(demo, stack.cfg, { prisma: stack.prisma, client: stack.client }, log);
  const perRole = WORKER_ROLES.map((role) => `${stack.workers.size(role)} ${role}`).join(', ');
  console.log(
    runningBanner({
      userCfg,
      cfg: stack.cfg,
      uiUrl: stack.server.uiUrl ?? '(headless)',
      temporal: `${stack.server.address}  (Temporal server on PostgreSQL, database ${stack.server.databaseUrl.replace(/^.*\//, '')})`,
      codecServer: stack.codecServer,
      http: stack.http,
      demo,
      schedules: stack.schedules,
      extra: [
        `  Temporal CLI      TEMPORAL_CONFIG_FILE=${profile} npm run temporal:cli -- workflow list  (mTLS, certificates in ${tls.dir})`,
        `  Workers           ${perRole} processes (pids ${stack.workers.pids().join(' ')})`,
        ...stack.workers.metricsEndpoints(stack.cfg.METRICS_HOST).map((m) => `    metrics         ${m}`),
      ],
    }),
  );
}

function stringEnv(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

main().catch(async (err: unknown) => {
  log.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  await running.exit(1);
});
