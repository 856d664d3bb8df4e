// npm run db:migrate: applies prisma/migrations to the database the application would use
// (DATABASE_URL, else the local server, else embedded PGlite; see src/db/resolve-database.ts),
// creating the database first when missing, and says what it did.
import { loadConfigOrExit } from '../src/config/env.js';
import type { DbLogger } from '../src/db/db-logger.js';
import { resolveDatabase } from '../src/db/resolve-database.js';

const log: DbLogger = {
  info: (message) => console.log(`db:migrate: ${message}`),
  warn: (message) => console.warn(`db:migrate: ${message}`),
};

const cfg = loadConfigOrExit();
try {
  const database = await resolveDatabase(cfg, log);
  await database.stop();
} catch (err) {
  console.error(`db:migrate: ${(err as Error).message}`);
  process.exitCode = 1;
}
