// The shared per-account Gmail quota limiter: one token bucket per account in PostgreSQL
// (table quota_buckets), so every worker process draws from the same budget, tuned by AIMD.
//
// - acquire(accountId, units) reserves `units` with ONE atomic statement (refill by elapsed time,
//   take the units, possibly going into debt) and then sleeps exactly as long as the debt takes to
//   repay at the current rate. No polling, no busy loop: callers are served in reservation order.
// - report(accountId, outcome) feeds AIMD: while healthy the rate grows by `increaseStep` units/s
//   at most once per `increaseIntervalMs` (across all processes: the row remembers when); a 429/403
//   or a p95 latency breach halves it (at most once per `decreaseCooldownMs`, so a burst of 429s
//   from calls already in flight counts once) and pushes the bucket into debt for the Retry-After.
// - The clock is the database's (clock_timestamp()), so processes on skewed hosts agree.
// - Two lanes: live calls (new mail, the user's labels, the sync) go before bulk ones (a backfill)
//   for the account's in-flight slots, so a backfill at the ceiling never queues live mail behind it.
//
// Capacity (burst) is `burstSeconds` of the current rate. Every process using the same table must
// use the same profile/options for an account (they come from the same environment).
import { GmailRateLimitError } from '../gmail/errors.js';
import { QUOTA_PROFILES, unitCost, type QuotaProfileName } from './profiles.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { gmailCalls, gmailUnits, quotaWaitSeconds } from '../metrics/metrics.js';

export interface QuotaLimiterOptions {
  profile: QuotaProfileName;
  /** Units/s a new bucket starts at (default half the profile's budget). */
  startRate?: number;
  /**
   * Units/s AIMD never exceeds (default 96 % of the profile's budget: a 1 s burst on top of a full
   * minute at this rate still fits Gmail's per-minute window).
   */
  maxRate?: number;
  /** Units/s AIMD never goes below (default 2 % of the budget). */
  minRate?: number;
  /** Bucket capacity in seconds of the current rate (default 1). */
  burstSeconds?: number;
  /** Additive increase, units/s (default 5 % of the budget). */
  increaseStep?: number;
  /** At most one increase per this long, and none this long after a decrease (default 1000 ms). */
  increaseIntervalMs?: number;
  /** At most one halving per this long (default 2000 ms). */
  decreaseCooldownMs?: number;
  /** p95 latency above this halves the rate (default 5000 ms). */
  latencyThresholdMs?: number;
  /** Latency samples per account for the p95 (default 50). */
  latencyWindow?: number;
  /** Upper bound for suggestedConcurrency (default 8). */
  maxConcurrency?: number;
  /**
   * A budget of its own beside the account's Gmail one: the bucket is keyed `<account>:<bucket>`
   * (the IMAP backfill's ceiling, which the sync's metering of the same account must not move).
   */
  bucket?: string;
}

export type QuotaOutcome =
  | { kind: 'ok'; latencyMs: number }
  /** 429 / 403 usageLimits; retryAfterMs from Retry-After (Google asks for ≥ 1 s). */
  | { kind: 'throttled'; retryAfterMs?: number }
  /** Any other failure: neither healthy nor a throttle. */
  | { kind: 'error' };

/** Who is calling: live mail goes before bulk work (a backfill) when the account's slots are taken. */
export type QuotaLane = 'live' | 'bulk';

export interface BucketState {
  rate: number;
  tokens: number;
  throttles: number;
  increases: number;
  decreases: number;
}

export interface AcquireResult {
  /** How long this caller slept for its units. */
  waitedMs: number;
  /** Database time (epoch ms) at which the units were granted, i.e. reservation time + wait. */
  grantedAtMs: number;
  rate: number;
}

interface ResolvedOptions extends Required<Omit<QuotaLimiterOptions, 'profile' | 'bucket'>> {
  profile: QuotaProfileName;
  bucket?: string;
}

export function resolveLimiterOptions(options: QuotaLimiterOptions): ResolvedOptions {
  const budget = QUOTA_PROFILES[options.profile].unitsPerSecond;
  const maxRate = options.maxRate ?? budget * 0.96;
  return {
    profile: options.profile,
    maxRate,
    startRate: Math.min(options.startRate ?? budget * 0.5, maxRate),
    minRate: options.minRate ?? budget * 0.02,
    burstSeconds: options.burstSeconds ?? 1,
    increaseStep: options.increaseStep ?? budget * 0.05,
    increaseIntervalMs: options.increaseIntervalMs ?? 1000,
    decreaseCooldownMs: options.decreaseCooldownMs ?? 2000,
    latencyThresholdMs: options.latencyThresholdMs ?? 5000,
    latencyWindow: options.latencyWindow ?? 50,
    maxConcurrency: options.maxConcurrency ?? 8,
    ...(options.bucket ? { bucket: options.bucket } : {}),
  };
}

const NOW = 'extract(epoch from clock_timestamp())::float8';

const ACQUIRE_SQL = `
INSERT INTO quota_buckets AS b (key, rate, tokens, refilled_at, increased_at, decreased_at)
VALUES ($1, $3::float8, $3::float8 * $4::float8 - $2::float8, ${NOW}, ${NOW}, 0)
ON CONFLICT (key) DO UPDATE SET
  tokens = LEAST(b.rate * $4::float8, b.tokens + b.rate * GREATEST(0, EXCLUDED.refilled_at - b.refilled_at)) - $2::float8,
  refilled_at = GREATEST(b.refilled_at, EXCLUDED.refilled_at)
RETURNING b.tokens AS tokens, b.rate AS rate, b.refilled_at AS now`;

const REFUND_SQL = `UPDATE quota_buckets SET tokens = tokens + $2::float8 WHERE key = $1`;

const INCREASE_SQL = `
UPDATE quota_buckets SET rate = LEAST($2::float8, rate + $3::float8), increased_at = ${NOW}, increases = increases + 1
WHERE key = $1 AND rate < $2::float8
  AND ${NOW} - increased_at >= $4::float8 AND ${NOW} - decreased_at >= $4::float8
RETURNING rate`;

const DECREASE_SQL = `
UPDATE quota_buckets SET
  rate = GREATEST($2::float8, rate / 2),
  tokens = LEAST(tokens, -GREATEST($2::float8, rate / 2) * $4::float8),
  decreased_at = ${NOW},
  increased_at = ${NOW},
  decreases = decreases + 1
WHERE key = $1 AND ${NOW} - decreased_at >= $3::float8
RETURNING rate`;

const COUNT_THROTTLE_SQL = `UPDATE quota_buckets SET throttles = throttles + 1 WHERE key = $1`;

/** One account's in-flight calls in this process, and who waits for a slot, by lane. */
interface Gate {
  inFlight: number;
  waiters: Record<QuotaLane, Array<() => void>>;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function p(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

export class QuotaLimiter {
  readonly options: ResolvedOptions;
  private readonly latencies = new Map<string, number[]>();
  private readonly lastRate = new Map<string, number>();
  private readonly lastIncreaseAttempt = new Map<string, number>();
  private readonly gates = new Map<string, Gate>();

  constructor(
    private readonly db: SqlExecutor,
    options: QuotaLimiterOptions,
  ) {
    this.options = resolveLimiterOptions(options);
  }

  /** The account's row in quota_buckets. */
  private keyOf(accountId: string): string {
    return this.options.bucket ? `${accountId}:${this.options.bucket}` : accountId;
  }

  /** Units one call of `method` costs under this limiter's profile. */
  cost(method: string): number {
    return unitCost(this.options.profile, method);
  }

  /** Waits until `units` of the account's budget are ours. Abort refunds the reservation. */
  async acquire(accountId: string, units: number, signal?: AbortSignal): Promise<AcquireResult> {
    const o = this.options;
    const [row] = await this.db.query<{ tokens: number; rate: number; now: number }>(ACQUIRE_SQL, [
      this.keyOf(accountId),
      units,
      o.startRate,
      o.burstSeconds,
    ]);
    if (!row) throw new Error(`quota bucket for ${accountId} missing`);
    const tokens = Number(row.tokens);
    const rate = Number(row.rate);
    this.lastRate.set(accountId, rate);
    const waitMs = tokens < 0 ? (-tokens / rate) * 1000 : 0;
    if (waitMs > 0) {
      try {
        await sleep(waitMs, signal);
      } catch (err) {
        await this.db.query(REFUND_SQL, [this.keyOf(accountId), units]).catch(() => undefined);
        throw err;
      }
    }
    return { waitedMs: waitMs, grantedAtMs: Number(row.now) * 1000 + waitMs, rate };
  }

  /** Feeds AIMD with the outcome of one call. */
  async report(accountId: string, outcome: QuotaOutcome): Promise<void> {
    const o = this.options;
    if (outcome.kind === 'throttled') {
      await this.db.query(COUNT_THROTTLE_SQL, [this.keyOf(accountId)]);
      await this.decrease(accountId, (outcome.retryAfterMs ?? 1000) / 1000);
      return;
    }
    if (outcome.kind === 'error') return;
    const window = this.latencies.get(accountId) ?? [];
    window.push(outcome.latencyMs);
    if (window.length > o.latencyWindow) window.shift();
    this.latencies.set(accountId, window);
    if (window.length >= Math.min(20, o.latencyWindow) && p(window, 0.95) > o.latencyThresholdMs) {
      this.latencies.set(accountId, []);
      await this.decrease(accountId, 0);
      return;
    }
    // Healthy: try an additive increase, but ask the database at most twice per interval per process,
    // and not while the rate last seen (every acquire returns it) is at the ceiling.
    if (this.currentRate(accountId) >= o.maxRate) return;
    const now = Date.now();
    if (now - (this.lastIncreaseAttempt.get(accountId) ?? 0) < o.increaseIntervalMs / 2) return;
    this.lastIncreaseAttempt.set(accountId, now);
    const rows = await this.db.query<{ rate: number }>(INCREASE_SQL, [
      this.keyOf(accountId),
      o.maxRate,
      o.increaseStep,
      o.increaseIntervalMs / 1000,
    ]);
    if (rows[0]) this.lastRate.set(accountId, Number(rows[0].rate));
  }

  private async decrease(accountId: string, debtSeconds: number): Promise<void> {
    const o = this.options;
    const rows = await this.db.query<{ rate: number }>(DECREASE_SQL, [
      this.keyOf(accountId),
      o.minRate,
      o.decreaseCooldownMs / 1000,
      debtSeconds,
    ]);
    if (rows[0]) this.lastRate.set(accountId, Number(rows[0].rate));
  }

  /**
   * Runs one Gmail call under the budget: acquire its cost, call, report. A GmailRateLimitError is
   * reported as a throttle and rethrown (the caller decides whether to wait and retry).
   * This is the hook for any Gmail caller, e.g. the sync worker:
   *   accounts.call(id, (gmail) => limiter.run(id, 'threads.get', () => gmail.getThread(t)))
   */
  async run<T>(accountId: string, method: string, fn: () => Promise<T>, signal?: AbortSignal, lane: QuotaLane = 'live'): Promise<T> {
    const release = await this.slot(accountId, method, lane, signal);
    try {
      const units = this.cost(method);
      const { waitedMs } = await this.acquire(accountId, units, signal);
      gmailCalls.inc({ method });
      gmailUnits.inc({ method }, units);
      if (waitedMs > 0) quotaWaitSeconds.inc({}, waitedMs / 1000);
      return await this.timed(accountId, fn);
    } finally {
      release();
    }
  }

  /** Each account's calls run through this limiter in `lane`: the gate a mailbox access meters its calls with. */
  gateFor(lane: QuotaLane): (accountId: string) => <T>(method: string, call: () => Promise<T>) => Promise<T> {
    return (accountId) => (method, call) => this.run(accountId, method, call, undefined, lane);
  }

  private async timed<T>(accountId: string, fn: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      const result = await fn();
      await this.report(accountId, { kind: 'ok', latencyMs: performance.now() - started });
      return result;
    } catch (err) {
      if (err instanceof GmailRateLimitError) {
        await this.report(accountId, { kind: 'throttled', retryAfterMs: err.retryAfterMs });
      } else {
        await this.report(accountId, { kind: 'error' });
      }
      throw err;
    }
  }

  /**
   * A per-process in-flight slot for the account: at most suggestedConcurrency() calls of this
   * process are waiting for tokens or in flight, so bursts never exceed Gmail's per-user
   * concurrency (processes × maxConcurrency should stay under it).
   */
  private async slot(accountId: string, method: string, lane: QuotaLane, signal?: AbortSignal): Promise<() => void> {
    let gate = this.gates.get(accountId);
    if (!gate) {
      gate = { inFlight: 0, waiters: { live: [], bulk: [] } };
      this.gates.set(accountId, gate);
    }
    const g = gate;
    // Bulk calls also wait while live ones are queued, so a freed slot goes to live mail first.
    while (g.inFlight >= this.suggestedConcurrency(accountId, method) || (lane === 'bulk' && g.waiters.live.length > 0)) {
      await new Promise<void>((resolve) => g.waiters[lane].push(resolve));
      if (signal?.aborted) {
        (g.waiters.live.shift() ?? g.waiters.bulk.shift())?.(); // the wake-up was for us: pass it on
        throw signal.reason as Error;
      }
    }
    g.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      g.inFlight--;
      (g.waiters.live.shift() ?? g.waiters.bulk.shift())?.();
    };
  }

  /** The account's calls of this process waiting for a slot, by lane. */
  waiting(accountId: string): Record<QuotaLane, number> {
    const gate = this.gates.get(accountId);
    return { live: gate?.waiters.live.length ?? 0, bulk: gate?.waiters.bulk.length ?? 0 };
  }

  /** The rate last seen for the account (units/s), or the start rate. */
  currentRate(accountId: string): number {
    return this.lastRate.get(accountId) ?? this.options.startRate;
  }

  /**
   * How many calls of `method` to keep in flight so the budget is used: rate × median latency
   * (Little's law) with headroom, within [1, maxConcurrency]. Concurrency follows AIMD's rate.
   */
  suggestedConcurrency(accountId: string, method: string): number {
    const callsPerSecond = this.currentRate(accountId) / this.cost(method);
    const window = this.latencies.get(accountId) ?? [];
    const latencyS = window.length > 0 ? p(window, 0.5) / 1000 : 0.2;
    const wanted = Math.ceil(callsPerSecond * latencyS * 1.5) + 1;
    return Math.max(Math.min(2, this.options.maxConcurrency), Math.min(this.options.maxConcurrency, wanted));
  }

  async state(accountId: string): Promise<BucketState | undefined> {
    const [row] = await this.db.query<{ rate: number; tokens: number; throttles: string; increases: string; decreases: string }>(
      `SELECT rate, tokens, throttles, increases, decreases FROM quota_buckets WHERE key = $1`,
      [this.keyOf(accountId)],
    );
    if (!row) return undefined;
    return {
      rate: Number(row.rate),
      tokens: Number(row.tokens),
      throttles: Number(row.throttles),
      increases: Number(row.increases),
      decreases: Number(row.decreases),
    };
  }

  /** Forgets the account's bucket (it restarts at startRate). */
  async reset(accountId: string): Promise<void> {
    await this.db.query(`DELETE FROM quota_buckets WHERE key = $1`, [this.keyOf(accountId)]);
    this.latencies.delete(accountId);
    this.lastRate.delete(accountId);
    this.lastIncreaseAttempt.delete(accountId);
  }
}
