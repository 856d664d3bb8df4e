import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/setup/sequencer.js';

export default defineConfig({
  test: {
    // Forks, not threads: the Temporal core bridge (a native addon) and wasm misbehave in worker threads.
    pool: 'forks',
    globalSetup: ['test/setup/global-setup.ts'],
    setupFiles: ['test/setup/temporal-runtime.ts', 'test/setup/file-cpu.ts'],
    // The tests run in dev mode, chosen: worker processes they start alone require a chosen mode.
    env: { DURABLE_INBOX_MODE: 'dev' },
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    // Four files at a time on two cores: many files wait on timers, kills and servers, so three left
    // a quarter of the CPU idle (590 s); at four the cores are busy (~515 s, clean clone 2026-11-28).
    // On a slower machine (2026-11-27) five turned CPU-bound and load-sensitive waits failed: a run
    // should stay green at any of these; what shortens it is less CPU (the file-times table's column).
    maxWorkers: 4,
    // One process per worker for all its files, not one per file: the modules (googleapis, the
    // Temporal SDK, Prisma, ours) are loaded once per worker. Every file cleans up after itself.
    isolate: false,
    // Slow files first, also on a clean clone without vitest's results cache (test/setup/sequencer.ts).
    sequence: { sequencer: SlowFirstSequencer },
    // Every file's time, slowest first, at the end of the run (CI's output shows the next slow file).
    reporters: ['default', './test/setup/file-times-reporter.ts'],
  },
});
