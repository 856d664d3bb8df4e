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
    // Three files at a time on two cores. Five kept the cores ~75% busy on a lighter suite (462 s
    // against 745 s at three, 2026-11-27), but on a slower machine with this session's IMAP files the
    // run turned CPU-bound (clean-clone CI 2026-11-28: 910-932 s at five) and scenario waits timed out
    // (rate gate, chaos, the corpus sample's set-up, npm run dev --imap): a green run comes first.
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
