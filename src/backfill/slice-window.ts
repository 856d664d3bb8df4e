// The backfill's sliding window of slices (pure, deterministic: workflow code). Which slice starts
// next and with what input, and what a slice's report does to the window and the counters.
import { BACKFILL_DEFAULTS, type BackfillCarried, type BackfillSettings, type FrontierState, type OpenSlice, type SliceInput, type SliceReport } from './contracts.js';
import { fail, runningCount, split, startNext } from './frontier.js';

/** The next slice to start, marked running; undefined while the window is full or nothing is left to start. */
export function nextSlice(frontier: FrontierState, window: number): OpenSlice | undefined {
  return runningCount(frontier) < window ? startNext(frontier) : undefined;
}

/** The slice child's input. A slice too short to split lists every page however deep (maxListPages 0). */
export function sliceInputOf(accountId: string, parentWorkflowId: string, slice: OpenSlice, settings: BackfillSettings): SliceInput {
  return {
    accountId,
    start: slice.start,
    end: slice.end,
    parentWorkflowId,
    batchSize: settings.batchSize,
    batchParallelism: settings.batchParallelism,
    overlapMs: settings.overlapMs,
    maxListPages: slice.end - slice.start >= 2 * BACKFILL_DEFAULTS.minSplitMs ? settings.maxListPages : 0,
    format: settings.format,
    taskQueues: settings.taskQueues,
  };
}

/**
 * What a slice's report asks for: `stale` (not a running slice of this window, e.g. from a run
 * before a restart: nothing changes), `split` (its listing paged too deep: two halves wait in its
 * place, unless it is too short to split), `retry` (it failed: it waits to start again), `give_up`
 * (it failed for good: the backfill fails), `account_unusable` (it failed because the account cannot
 * be used: it waits to start again, the attempt not counted, and the backfill waits for the account),
 * `done` (its messages are stored: the caller judges the alerts, then completes it in the frontier).
 */
export type ReportVerdict =
  | { kind: 'stale' }
  | { kind: 'split'; halved: boolean }
  | { kind: 'retry' }
  | { kind: 'give_up'; reason: string }
  | { kind: 'account_unusable'; type: string; message: string }
  | { kind: 'done' };

/** Counts the report into the state and applies what it asks of the window (all but `done`'s completion). */
export function takeReport(state: BackfillCarried, report: SliceReport): ReportVerdict {
  const { frontier, counters: c } = state;
  const slice = frontier.open.find((s) => s.start === report.start && s.end === report.end);
  if (!slice || slice.status !== 'running') return { kind: 'stale' };
  c.stored += report.stored;
  c.inserted += report.inserted;
  c.bad += report.bad;
  c.gone += report.gone;
  switch (report.outcome) {
    case 'split':
      c.splits++;
      return { kind: 'split', halved: split(frontier, report.start, report.end, BACKFILL_DEFAULTS.minSplitMs) };
    case 'failed':
      if (report.accountUnusable) {
        fail(frontier, report.start, report.end);
        slice.accountWaits = (slice.accountWaits ?? 0) + 1;
        return { kind: 'account_unusable', type: report.errorType ?? 'AccountNotConnectedError', message: report.error ?? '' };
      }
      if (failedForGood(slice)) {
        return { kind: 'give_up', reason: `slice ${new Date(report.start).toISOString()} failed ${slice.attempts} times: ${report.error}` };
      }
      fail(frontier, report.start, report.end);
      return { kind: 'retry' };
    case 'done':
      c.listed += report.listed;
      return { kind: 'done' };
  }
}

/** A slice that failed too often; its starts that met an account that could not be used do not count. */
function failedForGood(slice: OpenSlice): boolean {
  return slice.attempts - (slice.accountWaits ?? 0) >= BACKFILL_DEFAULTS.maxSliceAttempts;
}
