// The shared per-account Gmail quota: entry points for worker processes.
//
// Every Gmail caller of a process should use the same limiter (one per process, one bucket per
// account in Postgres shared by all processes):
//
//   const limiter = processQuotaLimiter(prisma);
//   await accounts.call(accountId, (gmail) => limiter.run(accountId, 'threads.get', () => gmail.getThread(id)));
//
// run() waits for the call's units (see profiles.ts for costs), makes the call, and feeds AIMD
// with its latency or its 429/403. Callers that cannot wrap a call can use acquire()/report().
import { loadBackfillConfig, quotaOptionsFromConfig } from '../backfill/config.js';
import { QuotaLimiter, type QuotaLimiterOptions } from './limiter.js';
import { prismaExecutor, type RawQueryable } from './sql.js';

export { QuotaLimiter, type QuotaLimiterOptions, type QuotaOutcome, type BucketState } from './limiter.js';
export { QUOTA_PROFILES, unitCost, messageCeilingPerSecond, type QuotaProfileName } from './profiles.js';
export { pgExecutor, prismaExecutor, type SqlExecutor } from './sql.js';

let shared: QuotaLimiter | undefined;

/** This process's limiter over `prisma`, configured from the environment (created once). */
export function processQuotaLimiter(prisma: RawQueryable, options?: QuotaLimiterOptions): QuotaLimiter {
  shared ??= new QuotaLimiter(prismaExecutor(prisma), options ?? quotaOptionsFromConfig(loadBackfillConfig()));
  return shared;
}
