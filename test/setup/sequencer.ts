// The order test files start in. Vitest starts the files that took longest last time first, from its
// results cache; a clean clone (CI) has none, and vitest then goes by file size, which can leave a
// small file of a long scenario to start last and finish alone. So without a complete cache the
// files known to be slow (SLOW_FILES, slowest first) start first, then the others as vitest orders
// them. The file-times reporter's list at the end of every run says what belongs here.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The slowest files of a full run, slowest first (wall time on a loaded 2-core machine). */
export const SLOW_FILES = [
  'test/stack/stack.test.ts',
  'test/sync/sync-push.test.ts',
  'test/dev/dev-restart.test.ts',
  'test/thread/timers-crash.test.ts',
  'test/thread/spam-assassin-sample.test.ts',
  'test/chaos/chaos.test.ts',
  'test/thread/timers.test.ts',
  'test/thread/failures.test.ts',
  'test/backfill/resilience-two-processes.test.ts',
  'test/temporal/server-tls.test.ts',
  'test/dev/dev-command.test.ts',
  'test/schedules/dev-server-restart.test.ts',
  'test/backfill/cli.test.ts',
  'test/schedules/catch-up.test.ts',
  'test/thread/timers-restart.test.ts',
  'test/temporal/server.test.ts',
  'test/actions/actions.test.ts',
  'test/reminders/reminder-workflow.test.ts',
  'test/backfill/resilience-grant-revoked.test.ts',
  'test/reminders/reminder-crash.test.ts',
  'test/thread/core-crash.test.ts',
  'test/thread/lifecycle.test.ts',
  'test/sync/sync-repair.test.ts',
  'test/sync/sync-accounts.test.ts',
  'test/agent/agent-crash.test.ts',
  'test/actions/spoofed-senders.test.ts',
  'test/schedules/run-crash.test.ts',
  'test/thread/step-failures.test.ts',
  'test/config.test.ts',
];

/**
 * Files that start after all others, when the run's load is lowest. The tracing test follows one
 * thread run's spans: on a machine loaded by the slow files it lost the readThread span under the run
 * (CI 2026-11-27, twice; first in its process or not), as if the run had been replayed elsewhere.
 */
export const LAST_FILES = ['test/temporal/tracing.test.ts'];

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const path = (spec: TestSpecification) => relative(root, spec.moduleId);
    const cached = sorted.every((spec) => this.ctx.cache.getFileTestResults(`${spec.project.name}:${path(spec)}`));
    if (cached) return sorted;
    const rank = (spec: TestSpecification) => {
      const i = SLOW_FILES.indexOf(path(spec));
      if (i !== -1) return i;
      const last = LAST_FILES.indexOf(path(spec));
      return last === -1 ? SLOW_FILES.length : SLOW_FILES.length + 1 + last;
    };
    // Stable: the files not named keep vitest's order.
    return sorted.map((spec, i) => ({ spec, i })).sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i).map(({ spec }) => spec);
  }
}
