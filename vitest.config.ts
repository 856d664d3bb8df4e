import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Forks, not threads: the Temporal core bridge (a native addon) and wasm misbehave in worker threads.
    pool: 'forks',
    globalSetup: ['test/setup/global-setup.ts'],
    // The tests run in dev mode, chosen: worker processes they start alone require a chosen mode.
    env: { DURABLE_INBOX_MODE: 'dev' },
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
});
