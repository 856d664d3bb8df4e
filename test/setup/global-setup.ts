// One Temporal dev server, one freshly migrated test database and one browser per `npm test` run.
// Tests read them with `inject('temporalAddress')` / `inject('databaseUrl')` / `inject('chromiumPath')`.
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startTestTemporal } from './temporal.js';
import { prepareTestDatabase } from './database.js';
import { NoBrowserError, prepareTestBrowser } from './browser.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    databaseUrl: string;
    chromiumPath: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  project.provide('chromiumPath', await browserOrExit());
  const [temporal, database] = await Promise.all([startTestTemporal(), prepareTestDatabase()]);
  project.provide('temporalAddress', temporal.address);
  project.provide('databaseUrl', database.url);
  return async () => {
    await temporal.stop();
  };
}

/**
 * First and alone: a machine without a usable browser stops here, before anything starts, with the
 * one line that says what to do (a thrown error would come with vitest's "No test files found").
 */
async function browserOrExit(): Promise<string> {
  try {
    return await prepareTestBrowser();
  } catch (err) {
    if (!(err instanceof NoBrowserError)) throw err;
    console.error(`npm test cannot run: ${err.message}`);
    process.exit(1);
  }
}
