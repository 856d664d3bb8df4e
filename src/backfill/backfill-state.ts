// The backfill's state between slices (pure, deterministic: workflow code, no clock of its own;
// callers pass `now`): how a new backfill is planned from its options and what an earlier backfill
// of the account left, the state a run carries into the next, and the progress the query shows.
import type { BackfillStoredState, PlanInput, PlanResult } from './activity-contracts.js';
import { worstLevel } from './alerts.js';
import type { BackfillCarried, BackfillCounters, BackfillOptions, BackfillProgress, Granularity } from './contracts.js';
import { newFrontier, runningCount } from './frontier.js';
import { chooseGranularity, countSlices } from './slicing.js';

/** The range to plan: the options' bounds, else the ones an earlier backfill of the account saved, else Gmail's. */
export function planRequest(options: BackfillOptions, stored: BackfillStoredState): PlanInput {
  const rangeStart = options.rangeStart ?? stored.rangeStart ?? undefined;
  const rangeEnd = options.rangeEnd ?? stored.rangeEnd ?? undefined;
  return {
    accountId: options.accountId,
    ...(rangeStart !== undefined ? { rangeStart } : {}),
    ...(rangeEnd !== undefined ? { rangeEnd } : {}),
  };
}

/** The granularity asked for, else the one saved (a restarted backfill keeps its slices), else the mailbox's size decides. */
export function granularityFor(options: BackfillOptions, stored: BackfillStoredState, plan: PlanResult, targetPerSlice: number): Granularity {
  if (options.granularity && options.granularity !== 'auto') return options.granularity;
  return stored.granularity ?? chooseGranularity(plan.messagesTotal, plan.rangeStart, plan.rangeEnd, targetPerSlice);
}

export function noCounters(messagesTotal = 0): BackfillCounters {
  return { messagesTotal, listed: 0, stored: 0, inserted: 0, bad: 0, gone: 0, splits: 0 };
}

/** A planned backfill's first state. It resumes from the saved watermark: everything before it is stored or recorded bad. */
export function plannedState(plan: PlanResult, granularity: Granularity, savedWatermark: number | null, now: number): BackfillCarried {
  return {
    frontier: newFrontier(plan.rangeStart, plan.rangeEnd, granularity, savedWatermark ?? plan.rangeStart),
    counters: noCounters(plan.messagesTotal),
    startedAt: now,
    inbox: [],
    badWindow: [],
    badTimes: [],
    alerts: {},
    rateSamples: [],
    runs: 1,
  };
}

/** What the progress query shows; `state` is undefined while the backfill is being planned. */
export function progressOf(accountId: string, phase: BackfillProgress['state'], state: BackfillCarried | undefined, now: number): BackfillProgress {
  const f = state?.frontier;
  const notDone = f ? f.open.filter((s) => s.status !== 'done').length + countSlices(f.cursor, f.rangeEnd, f.granularity) : 0;
  const processed = (state?.badWindow ?? []).reduce((s, [p]) => s + p, 0);
  const bad = (state?.badWindow ?? []).reduce((s, [, b]) => s + b, 0);
  return {
    accountId,
    state: phase,
    rangeStart: f?.rangeStart ?? null,
    rangeEnd: f?.rangeEnd ?? null,
    granularity: f?.granularity ?? null,
    watermark: f?.watermark ?? null,
    slicesDone: f ? f.slicesDone : 0,
    slicesTotal: f ? f.slicesDone + notDone : 0,
    slicesRunning: f ? runningCount(f) : 0,
    counters: state?.counters ?? noCounters(),
    rate: state ? averageRate(state, now) : 0,
    badRate: processed > 0 ? bad / processed : 0,
    alert: worstLevel(Object.values(state?.alerts ?? {}).map((a) => a.level)),
    alerts: state?.alerts ?? {},
    startedAt: state?.startedAt ?? now,
    runs: state?.runs ?? 1,
  };
}

/**
 * Messages stored per second since this backfill started. Slices run side by side and report only
 * when they finish, so windows shorter than a slice would swing wildly; at a steady quota the
 * average is what the ETA needs.
 */
export function averageRate(state: BackfillCarried, now: number): number {
  const elapsed = now - state.startedAt;
  return elapsed > 0 ? (state.counters.inserted * 1000) / elapsed : 0;
}
