// Gmail usage limits: per-method unit costs (two profiles), a per-user token bucket (the
// "moving average, short bursts allowed") plus a per-user 60-second window, a per-user
// concurrency cap, and per-project minute and day budgets. Over a limit, the error Gmail sends.
import { GmailApiError } from './errors.js';

export type QuotaProfile = 'legacy' | '2026';

export interface QuotaConfig {
  enabled: boolean;
  profile: QuotaProfile;
  /** Per-user budget per minute; defaults to the profile's (15,000 legacy, 6,000 for 2026). */
  userUnitsPerMinute?: number;
  /** Bucket capacity in seconds of refill: how long a burst at full speed can last. */
  burstSeconds: number;
  /** In-flight requests allowed per user before "Too many concurrent requests for user". */
  maxConcurrentPerUser: number;
  projectUnitsPerMinute: number;
  projectUnitsPerDay: number;
  /** Which error a per-user rate limit produces: 429 RESOURCE_EXHAUSTED or the older 403 usageLimits. */
  errorStyle: '429' | '403';
  /** Per-method cost overrides, e.g. {"messages.get": 20}. */
  costs?: Record<string, number>;
}

export const DEFAULT_QUOTA: QuotaConfig = {
  enabled: true,
  profile: 'legacy',
  burstSeconds: 4,
  maxConcurrentPerUser: 10,
  projectUnitsPerMinute: 1_200_000,
  projectUnitsPerDay: 80_000_000,
  errorStyle: '429',
};

const LEGACY_COSTS: Record<string, number> = {
  getProfile: 1,
  'settings.sendAs.list': 1,
  watch: 100,
  stop: 50,
  'drafts.create': 10,
  'drafts.delete': 10,
  'drafts.get': 5,
  'drafts.list': 5,
  'drafts.send': 100,
  'drafts.update': 15,
  'history.list': 2,
  'labels.create': 5,
  'labels.delete': 5,
  'labels.get': 1,
  'labels.list': 1,
  'labels.patch': 5,
  'labels.update': 5,
  'messages.attachments.get': 5,
  'messages.batchDelete': 50,
  'messages.batchModify': 50,
  'messages.delete': 10,
  'messages.get': 5,
  'messages.import': 25,
  'messages.insert': 25,
  'messages.list': 5,
  'messages.modify': 5,
  'messages.send': 100,
  'messages.trash': 5,
  'messages.untrash': 5,
  'threads.delete': 20,
  'threads.get': 10,
  'threads.list': 10,
  'threads.modify': 10,
  'threads.trash': 10,
  'threads.untrash': 10,
};

const PROFILE_COSTS: Record<QuotaProfile, Record<string, number>> = {
  legacy: LEGACY_COSTS,
  '2026': { ...LEGACY_COSTS, 'messages.get': 20, 'threads.get': 40, 'drafts.get': 20 },
};

const PROFILE_USER_PER_MINUTE: Record<QuotaProfile, number> = { legacy: 15_000, '2026': 6_000 };

export function unitCost(config: QuotaConfig, method: string): number {
  return config.costs?.[method] ?? PROFILE_COSTS[config.profile][method] ?? 5;
}

/** Units spent per second over the last 60 seconds (a ring of one-second slots). */
class MinuteWindow {
  private readonly slots = new Float64Array(60);
  private readonly slotSecond = new Float64Array(60).fill(-1);

  private sweep(second: number): void {
    for (let i = 0; i < 60; i++) if ((this.slotSecond[i] as number) <= second - 60) {
      this.slots[i] = 0;
      this.slotSecond[i] = -1;
    }
  }

  used(second: number): number {
    this.sweep(second);
    let sum = 0;
    for (let i = 0; i < 60; i++) sum += this.slots[i] as number;
    return sum;
  }

  add(second: number, units: number): void {
    const i = second % 60;
    if (this.slotSecond[i] !== second) {
      this.slots[i] = 0;
      this.slotSecond[i] = second;
    }
    this.slots[i] = (this.slots[i] as number) + units;
  }

  /** Seconds until `units` more would fit under `limit`. */
  secondsUntilFits(second: number, units: number, limit: number): number {
    let excess = this.used(second) + units - limit;
    if (excess <= 0) return 0;
    const bySecond = [...this.slotSecond].map((s, i) => ({ s, u: this.slots[i] as number })).filter((x) => x.s >= 0).sort((a, b) => a.s - b.s);
    for (const { s, u } of bySecond) {
      excess -= u;
      if (excess <= 0) return s + 60 - second;
    }
    return 60;
  }
}

class UserQuota {
  tokens: number;
  lastRefillMs: number;
  inFlight = 0;
  readonly minute = new MinuteWindow();

  constructor(capacity: number, nowMs: number) {
    this.tokens = capacity;
    this.lastRefillMs = nowMs;
  }
}

export interface QuotaStats {
  rejected429: number;
  rejected403: number;
  rejectedConcurrent: number;
}

function isoIn(nowMs: number, seconds: number): string {
  return new Date(nowMs + seconds * 1000).toISOString();
}

export class QuotaLedger {
  config: QuotaConfig;
  private readonly users = new Map<string, UserQuota>();
  private readonly projectMinute = new Map<string, MinuteWindow>();
  private readonly projectDay = new Map<string, { day: number; units: number }>();
  readonly stats: QuotaStats = { rejected429: 0, rejected403: 0, rejectedConcurrent: 0 };

  constructor(
    config: Partial<QuotaConfig>,
    private readonly now: () => number,
  ) {
    this.config = { ...DEFAULT_QUOTA, ...config };
  }

  configure(patch: Partial<QuotaConfig>): void {
    this.config = { ...this.config, ...patch };
    this.users.clear(); // budgets restart under the new limits
  }

  get userUnitsPerMinute(): number {
    return this.config.userUnitsPerMinute ?? PROFILE_USER_PER_MINUTE[this.config.profile];
  }

  cost(method: string): number {
    return unitCost(this.config, method);
  }

  private user(email: string, nowMs: number): UserQuota {
    let user = this.users.get(email);
    const ratePerMs = this.userUnitsPerMinute / 60_000;
    const capacity = ratePerMs * 1000 * this.config.burstSeconds;
    if (!user) {
      user = new UserQuota(capacity, nowMs);
      this.users.set(email, user);
    }
    user.tokens = Math.min(capacity, user.tokens + (nowMs - user.lastRefillMs) * ratePerMs);
    user.lastRefillMs = nowMs;
    return user;
  }

  private rateError(code: 429 | 403, reason: string, message: string, retryAfterSeconds: number): GmailApiError {
    if (code === 429) this.stats.rejected429++;
    else this.stats.rejected403++;
    return new GmailApiError(code, message, reason, 'usageLimits', { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }

  /**
   * Admits one call or throws the error Gmail would send. On success the caller must call the
   * returned release function when the response is finished (the concurrency slot).
   */
  admit(email: string, projectId: string, method: string): () => void {
    if (!this.config.enabled) return () => {};
    const nowMs = this.now();
    const second = Math.floor(nowMs / 1000);
    const units = this.cost(method);
    const user = this.user(email, nowMs);

    if (user.inFlight >= this.config.maxConcurrentPerUser) {
      this.stats.rejectedConcurrent++;
      throw this.rateError(429, 'rateLimitExceeded', 'Too many concurrent requests for user', 1);
    }

    const project = this.projectMinute.get(projectId) ?? new MinuteWindow();
    this.projectMinute.set(projectId, project);
    const wait = project.secondsUntilFits(second, units, this.config.projectUnitsPerMinute);
    if (wait > 0) {
      throw this.config.errorStyle === '403'
        ? this.rateError(403, 'rateLimitExceeded', 'Rate Limit Exceeded', wait)
        : this.rateError(429, 'rateLimitExceeded', `Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'gmail.googleapis.com' for consumer 'project_number:${projectId}'.`, wait);
    }
    const day = Math.floor(nowMs / 86_400_000);
    const daily = this.projectDay.get(projectId);
    if (daily && daily.day === day && daily.units + units > this.config.projectUnitsPerDay) {
      throw this.rateError(403, 'dailyLimitExceeded', 'Daily Limit Exceeded', (day + 1) * 86_400 - nowMs / 1000);
    }

    const ratePerSecond = this.userUnitsPerMinute / 60;
    const bucketWait = user.tokens >= units ? 0 : (units - user.tokens) / ratePerSecond;
    const minuteWait = user.minute.secondsUntilFits(second, units, this.userUnitsPerMinute);
    const userWait = Math.max(bucketWait, minuteWait);
    if (userWait > 0) {
      throw this.config.errorStyle === '403'
        ? this.rateError(403, 'userRateLimitExceeded', 'User Rate Limit Exceeded', userWait)
        : this.rateError(429, 'userRateLimitExceeded', `User-rate limit exceeded.  Retry after ${isoIn(nowMs, Math.ceil(userWait))}`, userWait);
    }

    user.tokens -= units;
    user.minute.add(second, units);
    project.add(second, units);
    if (daily && daily.day === day) daily.units += units;
    else this.projectDay.set(projectId, { day, units });
    user.inFlight++;
    let released = false;
    return () => {
      if (!released) {
        released = true;
        user.inFlight--;
      }
    };
  }

  /** Forgets all accounting; with `config`, also replaces the configuration wholesale. */
  reset(config?: Partial<QuotaConfig>): void {
    if (config) this.config = { ...DEFAULT_QUOTA, ...config };
    this.users.clear();
    this.projectMinute.clear();
    this.projectDay.clear();
    this.stats.rejected429 = 0;
    this.stats.rejected403 = 0;
    this.stats.rejectedConcurrent = 0;
  }
}
