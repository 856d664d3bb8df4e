// The backfill's decisions, pure and without Temporal: planning from the options and what an
// earlier backfill saved, the progress the query shows, the window of slices and what a slice's
// report does to it, and the alerts judged after a slice.
import { describe, expect, it } from 'vitest';
import type { BackfillStoredState, PlanResult } from '../../src/backfill/activity-contracts.js';
import { alertsAfter, judgeSlice } from '../../src/backfill/alerts.js';
import { averageRate, granularityFor, planRequest, plannedState, progressOf } from '../../src/backfill/backfill-state.js';
import { BACKFILL_DEFAULTS, backfillSettingsOf, type BackfillCarried, type SliceReport } from '../../src/backfill/contracts.js';
import { startNext } from '../../src/backfill/frontier.js';
import { nextSlice, sliceInputOf, takeReport } from '../../src/backfill/slice-window.js';
import { DAY_MS } from '../../src/backfill/slicing.js';

const T0 = Date.UTC(2026, 0, 1);
const nothingStored: BackfillStoredState = { watermark: null, rangeStart: null, rangeEnd: null, granularity: null };
const plan: PlanResult = { messagesTotal: 10_000, rangeStart: T0, rangeEnd: T0 + 10 * DAY_MS };

function report(slice: { start: number; end: number }, patch: Partial<SliceReport> = {}): SliceReport {
  return { start: slice.start, end: slice.end, outcome: 'done', listed: 10, stored: 10, inserted: 8, bad: 0, gone: 0, ...patch };
}

/** A planned daily backfill of ten days with its first slice running. */
function running(): { state: BackfillCarried; slice: { start: number; end: number } } {
  const state = plannedState(plan, 'day', null, T0);
  const slice = startNext(state.frontier)!;
  return { state, slice };
}

describe('settings', () => {
  it('fills in the defaults and bounds the window', () => {
    const s = backfillSettingsOf({ accountId: 'a' });
    expect(s).toEqual({
      window: 8,
      batchSize: 300,
      batchParallelism: 2,
      overlapMs: 60_000,
      maxListPages: 20,
      targetPerSlice: 2000,
      format: 'full',
      handToThreadsDays: 0,
      classifyInBatch: false,
      batchPoll: { firstMs: 30_000, maxMs: 15 * 60_000 },
      handOverPageSize: 500,
      reauthRecheckMs: 6 * 3600_000,
      taskQueues: { workflows: 'durable-inbox', gmail: 'durable-inbox-gmail', llm: 'durable-inbox-llm' },
    });
    expect(backfillSettingsOf({ accountId: 'a', window: 1000 }).window).toBe(200);
    expect(backfillSettingsOf({ accountId: 'a', window: 0 }).window).toBe(1);
    expect(backfillSettingsOf({ accountId: 'a', handOverPageSize: 0 }).handOverPageSize).toBe(1);
    expect(backfillSettingsOf({ accountId: 'a', slicesPerRun: 3, taskQueues: { gmail: 'g' } })).toMatchObject({
      slicesPerRun: 3,
      taskQueues: { workflows: 'durable-inbox', gmail: 'g' },
    });
  });
});

describe('planning', () => {
  it('takes the range from the options, else from what an earlier backfill saved, else leaves it to Gmail', () => {
    const saved: BackfillStoredState = { watermark: T0 + DAY_MS, rangeStart: T0, rangeEnd: T0 + 5 * DAY_MS, granularity: 'week' };
    expect(planRequest({ accountId: 'a' }, nothingStored)).toEqual({ accountId: 'a' });
    expect(planRequest({ accountId: 'a' }, saved)).toEqual({ accountId: 'a', rangeStart: T0, rangeEnd: T0 + 5 * DAY_MS });
    expect(planRequest({ accountId: 'a', rangeEnd: 7 }, saved)).toEqual({ accountId: 'a', rangeStart: T0, rangeEnd: 7 });
  });

  it('keeps the granularity asked for, else the saved one, else chooses it from the mailbox size', () => {
    const saved = { ...nothingStored, granularity: 'week' as const };
    expect(granularityFor({ accountId: 'a', granularity: 'month' }, saved, plan, 2000)).toBe('month');
    expect(granularityFor({ accountId: 'a', granularity: 'auto' }, saved, plan, 2000)).toBe('week');
    expect(granularityFor({ accountId: 'a' }, nothingStored, plan, 2000)).toBe('day'); // 1,000 a day
    expect(granularityFor({ accountId: 'a' }, nothingStored, { ...plan, messagesTotal: 100 }, 2000)).toBe('month');
  });

  it('resumes from the saved watermark', () => {
    const state = plannedState(plan, 'day', T0 + 3 * DAY_MS, T0);
    expect(state.frontier.watermark).toBe(T0 + 3 * DAY_MS);
    expect(state.counters).toEqual({ messagesTotal: 10_000, listed: 0, stored: 0, inserted: 0, bad: 0, gone: 0, splits: 0 });
    expect(plannedState(plan, 'day', null, T0).frontier.watermark).toBe(T0);
  });
});

describe('progress', () => {
  it('shows a backfill being planned with nothing known yet', () => {
    const p = progressOf('a', 'planning', undefined, T0);
    expect(p).toMatchObject({ accountId: 'a', state: 'planning', rangeStart: null, slicesTotal: 0, rate: 0, alert: 'ok', startedAt: T0, runs: 1 });
  });

  it('counts the slices done, running and left, and the rate since the start', () => {
    const { state, slice } = running();
    state.counters.inserted = 500;
    const p = progressOf('a', 'running', state, T0 + 10_000);
    expect(p).toMatchObject({ slicesDone: 0, slicesRunning: 1, slicesTotal: 10, watermark: T0, rate: 50 });
    expect(averageRate(state, T0)).toBe(0);
    takeReport(state, report(slice));
    expect(progressOf('a', 'running', state, T0).slicesTotal).toBe(10);
  });
});

describe('the window of slices', () => {
  it('starts slices until the window is full', () => {
    const state = plannedState(plan, 'day', null, T0);
    const started = [];
    for (let s = nextSlice(state.frontier, 3); s; s = nextSlice(state.frontier, 3)) started.push(s.start);
    expect(started).toEqual([T0, T0 + DAY_MS, T0 + 2 * DAY_MS]);
  });

  it("gives a slice the run's settings, and one too short to split every page however deep", () => {
    const settings = backfillSettingsOf({ accountId: 'a', batchSize: 50 });
    const long = sliceInputOf('a', 'backfill-a', { start: T0, end: T0 + DAY_MS, status: 'running', attempts: 1 }, settings);
    expect(long).toMatchObject({ accountId: 'a', parentWorkflowId: 'backfill-a', batchSize: 50, maxListPages: 20, format: 'full' });
    const short = sliceInputOf('a', 'backfill-a', { start: T0, end: T0 + 2 * BACKFILL_DEFAULTS.minSplitMs - 1, status: 'running', attempts: 1 }, settings);
    expect(short.maxListPages).toBe(0);
  });

  it('counts a finished slice and leaves its completion to the workflow', () => {
    const { state, slice } = running();
    expect(takeReport(state, report(slice, { bad: 2, gone: 1 }))).toEqual({ kind: 'done' });
    expect(state.counters).toMatchObject({ listed: 10, stored: 10, inserted: 8, bad: 2, gone: 1 });
  });

  it('ignores a report of a slice that is not running (from a run before a restart)', () => {
    const { state } = running();
    expect(takeReport(state, report({ start: T0 + DAY_MS, end: T0 + 2 * DAY_MS }))).toEqual({ kind: 'stale' });
    expect(state.counters.stored).toBe(0);
  });

  it('splits a slice whose listing paged too deep, unless it is too short', () => {
    const { state, slice } = running();
    expect(takeReport(state, report(slice, { outcome: 'split', listed: 0, stored: 0, inserted: 0 }))).toEqual({ kind: 'split', halved: true });
    expect(state.frontier.open.map((s) => [s.start, s.status])).toEqual([
      [T0, 'pending'],
      [T0 + DAY_MS / 2, 'pending'],
    ]);
    expect(state.counters.splits).toBe(1);
    const short = plannedState({ ...plan, rangeEnd: T0 + BACKFILL_DEFAULTS.minSplitMs }, 'day', null, T0);
    const s = startNext(short.frontier)!;
    expect(takeReport(short, report(s, { outcome: 'split' }))).toEqual({ kind: 'split', halved: false });
  });

  it('starts a failed slice again, and gives up after too many attempts', () => {
    const { state, slice } = running();
    expect(takeReport(state, report(slice, { outcome: 'failed', error: 'backfillListSlice failed: GmailServerError: 500' }))).toEqual({ kind: 'retry' });
    expect(state.frontier.open[0]!.status).toBe('pending');
    for (let attempt = 2; attempt <= BACKFILL_DEFAULTS.maxSliceAttempts; attempt++) {
      const again = startNext(state.frontier)!;
      expect(again.attempts).toBe(attempt);
      const verdict = takeReport(state, report(again, { outcome: 'failed', error: 'boom' }));
      expect(verdict.kind).toBe(attempt < BACKFILL_DEFAULTS.maxSliceAttempts ? 'retry' : 'give_up');
    }
  });

  it('waits for the account when a slice could not use it, as often as it takes, without counting it against the slice', () => {
    const { state, slice } = running();
    const error = 'backfillListSlice failed: AccountNotConnectedError: revoked';
    const unusable = (s: typeof slice) => report(s, { outcome: 'failed', error, errorType: 'AccountNotConnectedError', accountUnusable: true, stored: 4, inserted: 4 });
    expect(takeReport(state, unusable(slice))).toEqual({ kind: 'account_unusable', type: 'AccountNotConnectedError', message: error });
    expect(state.frontier.open[0]!.status).toBe('pending');
    // What it stored before the account stopped it is counted.
    expect(state.counters).toMatchObject({ stored: 4, inserted: 4 });
    for (let attempt = 2; attempt <= 2 * BACKFILL_DEFAULTS.maxSliceAttempts; attempt++) {
      expect(takeReport(state, unusable(startNext(state.frontier)!)).kind).toBe('account_unusable');
    }
    // Its own failures still count: it gives up after maxSliceAttempts of those.
    for (let failures = 1; failures <= BACKFILL_DEFAULTS.maxSliceAttempts; failures++) {
      const verdict = takeReport(state, report(startNext(state.frontier)!, { outcome: 'failed', error: 'boom' }));
      expect(verdict.kind).toBe(failures < BACKFILL_DEFAULTS.maxSliceAttempts ? 'retry' : 'give_up');
    }
    // The error's type or text alone does not make a wait: the slice says so.
    const { state: other, slice: s2 } = running();
    expect(takeReport(other, report(s2, { outcome: 'failed', error: 'GmailAuthError: 401', errorType: 'GmailAuthError' }))).toEqual({ kind: 'retry' });
  });
});

describe('alerts after a slice', () => {
  it('judges the rate and spike on the windows the slice slid, and says when a level changed', () => {
    const state = { badWindow: [] as Array<[number, number]>, badTimes: [] as Array<[number, number]>, alerts: {} };
    const quiet = judgeSlice(state, 2000, 1000, 0, T0);
    expect(quiet.changed).toBe(false);
    const bad = judgeSlice(state, 2000, 1000, 300, T0 + 1000);
    expect(bad.judged.bad_rate.level).toBe('critical');
    expect(bad.judged.bad_spike.level).toBe('critical');
    expect(bad.changed).toBe(true);
    expect(state.badWindow).toEqual([
      [1000, 0],
      [1000, 300],
    ]);
  });

  it('keeps the alerts that are not ok and names the changed ones in order', () => {
    const warn = { level: 'warn' as const, detail: 'w', measured: {} };
    const ok = { level: 'ok' as const, detail: 'o', measured: {} };
    const after = alertsAfter({ bad_spike: { level: 'critical' } }, { bad_rate: warn, bad_spike: ok, metadata: ok });
    expect(after.alerts).toEqual({ bad_rate: { level: 'warn', detail: 'w' } });
    expect(after.changed.map((c) => [c.kind, c.judgement.level])).toEqual([
      ['bad_rate', 'warn'],
      ['bad_spike', 'ok'],
    ]);
  });
});
