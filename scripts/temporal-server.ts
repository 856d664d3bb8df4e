// The production-shaped Temporal server (v1.30.9 on PostgreSQL, deploy/temporal/*) on this machine.
//   npm run temporal:server -- --build      build/cache the server, temporal-sql-tool, schemas and
//                                           Web UI (CI does this once), print where they are
//   npm run temporal:server                 set up the schemas, start server + Web UI, stay in the
//                                           foreground until Ctrl-C (then stop both)
// Options: --port 7233 (0 = free ports) --ui-port <port + 1000> --headless --namespace default
//          --database-url postgresql://postgres@127.0.0.1:5432/temporal (or TEMPORAL_DATABASE_URL;
//          visibility goes to <database>_visibility) --codec-endpoint URL
//          --log-level warn
import { loadConfigOrExit } from '../src/config/env.js';
import { temporalServerOverridesFromConfig } from '../src/config/settings.js';
import { parseArgs } from 'node:util';
import { resolveTemporalServer, resolveTemporalUiServer } from '../src/temporal/server-binary.js';
import { DEFAULT_TEMPORAL_DATABASE_URL, startTemporalServer } from '../src/temporal/server.js';

const { values } = parseArgs({
  options: {
    build: { type: 'boolean', default: false },
    port: { type: 'string', default: '7233' },
    'ui-port': { type: 'string' },
    headless: { type: 'boolean', default: false },
    namespace: { type: 'string', default: 'default' },
    'database-url': { type: 'string' },
    'codec-endpoint': { type: 'string' },
    'log-level': { type: 'string', default: 'warn' },
  },
});

const log = (msg: string) => console.error(`temporal:server: ${msg}`);
const cfg = loadConfigOrExit();
const overrides = temporalServerOverridesFromConfig(cfg);

if (values.build) {
  const started = Date.now();
  const server = await resolveTemporalServer({ log, overrides });
  const ui = await resolveTemporalUiServer({ log, overrides });
  if (!server || !ui) {
    log(
      'cannot build: no Go toolchain on PATH (or set TEMPORAL_SERVER_BIN, TEMPORAL_SQL_TOOL_BIN, TEMPORAL_SCHEMA_DIR, TEMPORAL_UI_SERVER_BIN)',
    );
    process.exit(1);
  }
  console.log(`temporal-server    ${server.server} (${server.source})`);
  console.log(`temporal-sql-tool  ${server.sqlTool}`);
  console.log(`schema             ${server.schemaDir}`);
  console.log(`temporal-ui-server ${ui.path} (${ui.source})`);
  log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(0);
}

const logLevel = values['log-level'];
if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) {
  log(`--log-level must be debug, info, warn or error, not ${logLevel}`);
  process.exit(2);
}
const server = await startTemporalServer({
  port: Number(values.port),
  uiPort: values['ui-port'] === undefined ? undefined : Number(values['ui-port']),
  headless: values.headless,
  namespace: values.namespace,
  databaseUrl: values['database-url'] ?? cfg.TEMPORAL_DATABASE_URL ?? DEFAULT_TEMPORAL_DATABASE_URL,
  codecEndpoint: values['codec-endpoint'],
  overrides,
  logLevel: logLevel as 'debug' | 'info' | 'warn' | 'error',
  log,
});
console.log(
  `Temporal ${server.address} (namespace ${server.namespace})${server.uiUrl ? `  Web UI ${server.uiUrl}` : ''}`,
);
console.log('Ctrl-C stops it.');
let stopping = false;
void server.crashed.then(async (why) => {
  log(why);
  await server.stop();
  process.exit(1);
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log('stopping ...');
    void server.stop().then(() => process.exit(0));
  });
}
