// Standalone entrypoint shared by the worker files: configuration, database, context, run
// until SIGINT/SIGTERM (the Temporal runtime's signal handlers shut the worker down
// gracefully), then release everything and exit 0.
import type { Worker } from '@temporalio/worker';
import { loadConfigOrExit } from '../config.js';
import { resolveDatabase } from '../db/resolve-database.js';
import { createLogger } from '../shared/log.js';
import { createWorkerContext, type WorkerContext } from './context.js';
import { installSdkLogging } from './sdk-logging.js';

export async function runWorkerMain(name: string, create: (ctx: WorkerContext) => Promise<Worker>): Promise<void> {
  const cfg = loadConfigOrExit();
  const log = createLogger(name);
  installSdkLogging(cfg.LOG_LEVEL);
  const database = await resolveDatabase(cfg, log);
  const ctx = await createWorkerContext(cfg, database.url);
  try {
    const worker = await create(ctx);
    log.info(`polling task queue ${worker.options.taskQueue} on ${cfg.TEMPORAL_ADDRESS}`);
    await worker.run();
    log.info('stopped cleanly');
  } finally {
    await ctx.close();
    await database.stop();
  }
  process.exit(0);
}
