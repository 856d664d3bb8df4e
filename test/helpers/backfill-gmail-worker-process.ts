// A Gmail worker as its own OS process, for the two-process quota test: backfill mail activities
// on BACKFILL_GMAIL_QUEUE with its own Temporal connection, Prisma pool, GmailAccounts and quota
// limiter. Prints "ready" when polling; on SIGTERM shuts down and prints {"calls": N}.
import { NativeConnection, Runtime, DefaultLogger, Worker } from '@temporalio/worker';
import { GmailAccounts } from '../../src/accounts/gmail-accounts.js';
import { TokenVault } from '../../src/accounts/token-vault.js';
import { createBackfillMailActivities } from '../../src/backfill/mail-activities.js';
import { createPrismaClient } from '../../src/db/client.js';
import { QuotaLimiter, type QuotaLimiterOptions } from '../../src/quota/limiter.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { createDataConverter } from '../../src/temporal/data-converter.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

Runtime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } } });
const prisma = createPrismaClient(env('DATABASE_URL'), { poolSize: 4 });
const db = prismaExecutor(prisma);
const limiter = new QuotaLimiter(db, JSON.parse(env('BACKFILL_LIMITER')) as QuotaLimiterOptions);
const oauth = JSON.parse(env('BACKFILL_OAUTH')) as ConstructorParameters<typeof GmailAccounts>[2];
const accounts = new GmailAccounts(prisma, new TokenVault(Buffer.from(env('BACKFILL_TOKEN_KEY'), 'base64')), oauth, limiter.gateFor('bulk'));
let calls = 0;
const activities = Object.fromEntries(
  Object.entries(createBackfillMailActivities({ accounts, concurrency: limiter.options.maxConcurrency, db })).map(([name, fn]) => [
    name,
    (...args: unknown[]) => {
      calls++;
      return (fn as (...a: unknown[]) => Promise<unknown>)(...args);
    },
  ]),
);
const connection = await NativeConnection.connect({ address: env('TEMPORAL_ADDRESS') });
const worker = await Worker.create({
  connection,
  taskQueue: env('BACKFILL_GMAIL_QUEUE'),
  activities,
  dataConverter: createDataConverter(fixedTestPayloadKeys()),
  shutdownGraceTime: '2 seconds',
});
const running = worker.run();
console.log('ready');
await running;
await connection.close();
await prisma.$disconnect();
console.log(JSON.stringify({ calls }));
process.exit(0);
