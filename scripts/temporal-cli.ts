// `npm run temporal:cli` prints the Temporal CLI path (building it with Go if needed);
// `npm run temporal:cli -- <args>` runs it, e.g. `npm run temporal:cli -- schedule list`.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { loadConfigOrExit } from '../src/config/env.js';
import { resolveTemporalCli } from '../src/temporal/cli-binary.js';
import { temporalConnectionEnv } from '../src/temporal/connection.js';

const args = process.argv.slice(2);
const cfg = loadConfigOrExit();
const cli = await resolveTemporalCli({ override: cfg.TEMPORAL_CLI, log: (msg) => console.error(`temporal:cli: ${msg}`) });
if (!cli) {
  console.error(
    'temporal:cli: no Temporal CLI found. Set TEMPORAL_CLI to a binary, put `temporal` on PATH, or install Go so it can be built.',
  );
  process.exit(1);
}

if (args.length === 0) {
  console.log(cli.path);
} else {
  // The CLI connects as every durable-inbox process does: the same TEMPORAL_* settings, a profile's included.
  const child = spawn(cli.path, args, { stdio: 'inherit', env: { ...process.env, ...temporalConnectionEnv(cfg) } });
  // Ctrl-C reaches the CLI directly (same process group): we only stay alive to pass on its exit code.
  process.on('SIGINT', () => {});
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => child.kill(signal));
  }
  child.on('error', (err) => {
    console.error(`temporal:cli: cannot run ${cli.path}: ${err.message}`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0));
  });
}
