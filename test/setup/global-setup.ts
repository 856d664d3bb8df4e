// One Temporal dev server, one freshly migrated test database, one browser, one build of the
// workflow bundles and one of the processes' entry bundles per `npm test` run. Tests read them with
// `inject('temporalAddress')` / `inject('databaseUrl')` / `inject('chromiumPath')`; workers find the
// workflow bundles through WORKFLOW_BUNDLE_DIR (test/setup/workflow-bundles.ts), the processes tests
// start their entries through ENTRY_BUNDLE_DIR (test/setup/entry-bundles.ts).
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startTestTemporal } from './temporal.js';
import { prepareTestDatabase } from './database.js';
import { NoBrowserError, prepareTestBrowser } from './browser.js';
import { buildTestWorkflowBundles } from './workflow-bundles.js';
import { buildTestEntryBundles } from './entry-bundles.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    databaseUrl: string;
    chromiumPath: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  project.provide('chromiumPath', await browserOrExit());
  const [temporal, database, bundles, entries] = await Promise.all([startTestTemporal(), prepareTestDatabase(), buildTestWorkflowBundles(), buildTestEntryBundles()]);
  project.provide('temporalAddress', temporal.address);
  project.provide('databaseUrl', database.url);
  // Set before the test processes start: they, and the processes they start, inherit it.
  process.env['WORKFLOW_BUNDLE_DIR'] = bundles.dir;
  process.env['ENTRY_BUNDLE_DIR'] = entries.dir;
  return async () => {
    await temporal.stop();
    await bundles.remove();
    await entries.remove();
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
