// The per-account LLM circuit breaker as plain data and pure transitions (no I/O, no clock of its
// own; the workflow bundle imports it too). Closed: calls go to the model. After repeated outage
// failures (5xx, 429, 529, no connection) it opens and calls fail fast while the threads wait; one
// call at a time probes the model on a bounded backoff and a success closes it. A refused key (401,
// 403), no credits (402) or a configured model the API does not know (404 `model: …`) keeps it open
// until an operator resumes it; a spent daily token budget
// keeps it open until the next UTC day. Stored in llm_breakers (breaker-store.ts).

export type LlmPauseReason = 'outage' | 'auth' | 'credits' | 'model' | 'budget';

export interface BreakerState {
  state: 'closed' | 'open';
  reason: LlmPauseReason | null;
  /** Outage failures in a row while closed; failed probes counted on from there while open. */
  failures: number;
  openedAt: Date | null;
  /** When a call may try the model again; null while an operator must resume it. */
  nextProbeAt: Date | null;
  lastError: string | null;
}

export interface BreakerSettings {
  /** Outage failures in a row that open the breaker. */
  failuresToOpen: number;
  /** The first wait before probing the model again; it doubles with every failed probe… */
  probeMinMs: number;
  /** …up to this. Threads waiting on a refused key or credits look again this often too. */
  probeMaxMs: number;
}

export const CLOSED: BreakerState = { state: 'closed', reason: null, failures: 0, openedAt: null, nextProbeAt: null, lastError: null };

/** What the LlmPaused failure carries to the workflow. */
export interface LlmPausedDetails {
  reason: LlmPauseReason;
  /** ISO time the workflow should try again (the next probe, or a recheck while an operator must act). */
  resumeAt: string;
  lastError: string | null;
}

export const LLM_PAUSED_TYPE = 'LlmPaused';

/** Epoch ms of the next 00:00 UTC after `nowMs`. */
export function nextUtcDay(nowMs: number): number {
  const d = new Date(nowMs);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}

/** The wait before the next probe after `failedProbes` failed ones: doubling, bounded. */
export function probeDelayMs(failedProbes: number, settings: BreakerSettings): number {
  return Math.min(settings.probeMaxMs, settings.probeMinMs * 2 ** Math.min(failedProbes, 30));
}

export type Admission = { call: true; probe: boolean } | { call: false; resumeAt: Date };

/** Whether a call may go to the model now; an open breaker lets one probe through when it is due. */
export function admit(b: BreakerState, now: Date, settings: BreakerSettings): Admission {
  if (b.state === 'closed') return { call: true, probe: false };
  if (b.nextProbeAt === null) return { call: false, resumeAt: new Date(now.getTime() + settings.probeMaxMs) };
  if (b.nextProbeAt <= now) return { call: true, probe: true };
  return { call: false, resumeAt: b.nextProbeAt };
}

/** This call is the probe: the next one waits a backoff, so a crowd of waking threads sends one call. */
export function claimProbe(b: BreakerState, now: Date, settings: BreakerSettings): BreakerState {
  return { ...b, nextProbeAt: new Date(now.getTime() + probeDelayMs(failedProbes(b, settings), settings)) };
}

function failedProbes(b: BreakerState, settings: BreakerSettings): number {
  return Math.max(0, b.failures - settings.failuresToOpen);
}

export type LlmFailureKind = LlmPauseReason;

export function afterFailure(b: BreakerState, kind: LlmFailureKind, message: string, now: Date, settings: BreakerSettings): BreakerState {
  const opened = { state: 'open' as const, reason: kind, openedAt: b.state === 'open' ? b.openedAt : now, lastError: message };
  switch (kind) {
    case 'outage': {
      const failures = b.reason === 'outage' || b.state === 'closed' ? b.failures + 1 : settings.failuresToOpen;
      if (b.state === 'closed' && failures < settings.failuresToOpen) return { ...b, failures, lastError: message };
      const next = { ...b, ...opened, failures };
      return { ...next, nextProbeAt: new Date(now.getTime() + probeDelayMs(failedProbes(next, settings), settings)) };
    }
    case 'auth':
    case 'credits':
    case 'model':
      return { ...b, ...opened, failures: b.failures + 1, nextProbeAt: null };
    case 'budget':
      return { ...b, ...opened, nextProbeAt: new Date(nextUtcDay(now.getTime())) };
  }
}

/** The model answered: closed. */
export function afterSuccess(): BreakerState {
  return CLOSED;
}

/** Whether a success has anything to write (an open breaker, or failures to forget). */
export function needsReset(b: BreakerState): boolean {
  return b.state === 'open' || b.failures > 0;
}

/** When a workflow told LlmPaused tries again: the next UTC day (from workflow time) for the budget, else the breaker's time. */
export function pauseWakeAt(details: Pick<LlmPausedDetails, 'reason' | 'resumeAt'>, nowMs: number): number {
  if (details.reason === 'budget') return nextUtcDay(nowMs);
  const at = Date.parse(details.resumeAt);
  return Number.isNaN(at) ? nowMs : at;
}

/** What an operator reads about an open breaker, and the command that fixes it when one does. */
export function describePause(b: BreakerState, account: string): string {
  const until = b.nextProbeAt?.toISOString();
  switch (b.reason) {
    case 'outage':
      return `the model is not answering (${b.lastError ?? 'errors'}); LLM work waits and resumes by itself (next try ${until})`;
    case 'budget':
      return `the daily token budget (DAILY_TOKEN_BUDGET) is spent; LLM work waits until ${until}`;
    case 'auth':
      return `the model refused the API key (${b.lastError ?? 'auth error'}); fix ANTHROPIC_API_KEY, restart the LLM worker, then: npm run cli -- accounts llm-resume ${account}`;
    case 'credits':
      return `the model account is out of credits (${b.lastError ?? 'billing error'}); add credits, then: npm run cli -- accounts llm-resume ${account}`;
    case 'model':
      return `the configured model does not exist (${b.lastError ?? 'not found'}); set ANTHROPIC_MODEL (or the agent profile's model) to one that does, restart the LLM worker, then: npm run cli -- accounts llm-resume ${account}`;
    default:
      return 'paused';
  }
}
