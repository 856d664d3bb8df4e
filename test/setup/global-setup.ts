// One Temporal dev server and one freshly migrated test database per `npm test` run.
// Tests read their addresses with `inject('temporalAddress')` / `inject('databaseUrl')`.
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startTestTemporal } from './temporal.js';
import { prepareTestDatabase } from './database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    databaseUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [temporal, database] = await Promise.all([startTestTemporal(), prepareTestDatabase()]);
  project.provide('temporalAddress', temporal.address);
  project.provide('databaseUrl', database.url);
  return async () => {
    await temporal.stop();
  };
}
