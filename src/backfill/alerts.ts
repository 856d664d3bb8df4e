import type { AlertKind, AlertLevel, Judgement } from './contracts.js';
// Backfill alert thresholds (bad-message rate and spike, metadata budget), as pure functions over plain data: the backfill workflow
// judges the bad-message rate and spikes with them, the alert activity the metadata budget.
// Workflow code: no Node, no clock of its own (callers pass `now`).

export const ALERT_KINDS: readonly AlertKind[] = ['bad_rate', 'bad_spike', 'metadata'];

/** The rate is judged over the last this many processed messages. */
export const BAD_RATE_WINDOW = 10_000;
/** A mailbox smaller than the window is judged once all of it is processed, but never on fewer messages than this. */
export const BAD_RATE_MIN_SAMPLE = 1_000;
export const BAD_RATE_WARN = 0.002;
export const BAD_RATE_CRITICAL = 0.01;
/** More bad messages than this within SPIKE_WINDOW_MS is critical whatever the rate. */
export const SPIKE_BAD = 200;
export const SPIKE_WINDOW_MS = 3600_000;
export const METADATA_WARN = 0.5;
export const METADATA_CRITICAL = 0.8;

const LEVEL_RANK: Record<AlertLevel, number> = { ok: 0, warn: 1, critical: 2 };

export function worstLevel(levels: Iterable<AlertLevel>): AlertLevel {
  let worst: AlertLevel = 'ok';
  for (const level of levels) if (LEVEL_RANK[level] > LEVEL_RANK[worst]) worst = level;
  return worst;
}

const percent = (x: number) => `${(x * 100).toFixed(2)} %`;

/**
 * Adds a finished slice's (processed, bad) to the window, newest last, and drops the oldest
 * entries while the rest still cover BAD_RATE_WINDOW messages.
 */
export function slideBadWindow(window: ReadonlyArray<readonly [number, number]>, processed: number, bad: number): Array<[number, number]> {
  const next = window.map(([p, b]) => [p, b] as [number, number]);
  if (processed > 0) next.push([processed, bad]);
  let total = next.reduce((s, [p]) => s + p, 0);
  while (next.length > 1 && total - next[0]![0] >= BAD_RATE_WINDOW) total -= next.shift()![0];
  return next;
}

/**
 * The bad-message rate over the window: warn at ≥ 0.2 %, critical at ≥ 1 %. Judged only on a full
 * window, or on the whole mailbox when it is smaller (`mailboxSize`, from Gmail's profile), and
 * never on fewer than BAD_RATE_MIN_SAMPLE messages: a handful of bad ones early on is no rate.
 */
export function judgeBadRate(window: ReadonlyArray<readonly [number, number]>, mailboxSize: number): Judgement {
  const processed = window.reduce((s, [p]) => s + p, 0);
  const bad = window.reduce((s, [, b]) => s + b, 0);
  const rate = processed > 0 ? bad / processed : 0;
  const sample = Math.max(BAD_RATE_MIN_SAMPLE, Math.min(BAD_RATE_WINDOW, mailboxSize));
  const measured = { processed, bad, rate };
  if (processed < sample) {
    return { level: 'ok', detail: `${bad} bad of ${processed} messages: too few to judge (needs ${sample})`, measured };
  }
  const level: AlertLevel = rate >= BAD_RATE_CRITICAL ? 'critical' : rate >= BAD_RATE_WARN ? 'warn' : 'ok';
  const threshold = level === 'critical' ? ` (critical at ${percent(BAD_RATE_CRITICAL)})` : level === 'warn' ? ` (warn at ${percent(BAD_RATE_WARN)})` : '';
  return { level, detail: `bad-message rate ${percent(rate)}: ${bad} bad of the last ${processed} messages${threshold}`, measured };
}

/** Keeps the (time, bad) entries of the last hour and adds this one's. */
export function recordBadTimes(times: ReadonlyArray<readonly [number, number]>, now: number, bad: number): Array<[number, number]> {
  const next = times.filter(([at]) => at > now - SPIKE_WINDOW_MS).map(([at, b]) => [at, b] as [number, number]);
  if (bad > 0) next.push([now, bad]);
  return next;
}

/** A spike: more than SPIKE_BAD bad messages recorded within the last hour is critical. */
export function judgeSpike(times: ReadonlyArray<readonly [number, number]>, now: number): Judgement {
  const bad = times.filter(([at]) => at > now - SPIKE_WINDOW_MS).reduce((s, [, b]) => s + b, 0);
  const level: AlertLevel = bad > SPIKE_BAD ? 'critical' : 'ok';
  return {
    level,
    detail: `${bad} bad messages in the last hour${level === 'critical' ? ` (critical above ${SPIKE_BAD})` : ''}`,
    measured: { badLastHour: bad },
  };
}

/** Estimated metadata bytes (bad-message and progress records) against the budget: warn at 50 %, critical at 80 %. */
export function judgeMetadata(bytes: number, budgetBytes: number): Judgement {
  const used = budgetBytes > 0 ? bytes / budgetBytes : 0;
  const level: AlertLevel = used >= METADATA_CRITICAL ? 'critical' : used >= METADATA_WARN ? 'warn' : 'ok';
  const threshold =
    level === 'critical' ? ` (critical at ${percent(METADATA_CRITICAL)})` : level === 'warn' ? ` (warn at ${percent(METADATA_WARN)})` : '';
  return { level, detail: `metadata ${bytes} of ${budgetBytes} bytes, ${percent(used)} of the budget${threshold}`, measured: { bytes, budgetBytes, used } };
}

/** What the workflow judges itself after a slice: the bad-message rate and spikes. */
export type SliceJudgements = Record<'bad_rate' | 'bad_spike', Judgement>;

/**
 * A finished slice's messages (`processed`, `bad` of them) slide the rate's window and the spikes'
 * hour; returns the rate and spike judged on them, and whether either's level changed.
 */
export function judgeSlice(
  state: { badWindow: Array<[number, number]>; badTimes: Array<[number, number]>; alerts: Partial<Record<AlertKind, { level: AlertLevel }>> },
  mailboxSize: number,
  processed: number,
  bad: number,
  now: number,
): { judged: SliceJudgements; changed: boolean } {
  state.badWindow = slideBadWindow(state.badWindow, processed, bad);
  state.badTimes = recordBadTimes(state.badTimes, now, bad);
  const judged: SliceJudgements = { bad_rate: judgeBadRate(state.badWindow, mailboxSize), bad_spike: judgeSpike(state.badTimes, now) };
  const changed = Object.entries(judged).some(([kind, j]) => j.level !== (state.alerts[kind as AlertKind]?.level ?? 'ok'));
  return { judged, changed };
}

/** The alerts that are not ok after these judgements (level and detail), and the judgements whose level changed, in order. */
export function alertsAfter(
  previous: Partial<Record<AlertKind, { level: AlertLevel }>>,
  judgements: Partial<Record<AlertKind, Judgement>>,
): { alerts: Partial<Record<AlertKind, { level: AlertLevel; detail: string }>>; changed: Array<{ kind: AlertKind; judgement: Judgement }> } {
  const alerts: Partial<Record<AlertKind, { level: AlertLevel; detail: string }>> = {};
  const changed: Array<{ kind: AlertKind; judgement: Judgement }> = [];
  for (const [kind, j] of Object.entries(judgements) as Array<[AlertKind, Judgement]>) {
    if (j.level !== 'ok') alerts[kind] = { level: j.level, detail: j.detail };
    if (j.level !== (previous[kind]?.level ?? 'ok')) changed.push({ kind, judgement: j });
  }
  return { alerts, changed };
}
