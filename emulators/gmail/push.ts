// Gmail watch + Cloud Pub/Sub push delivery. A change to a watched mailbox schedules one
// notification, at most one per second per user (later changes coalesce into it); it is POSTed
// as a Pub/Sub push envelope with an OIDC bearer token signed by the emulator's key. Non-2xx
// answers are redelivered with backoff, like Pub/Sub. Switches drop, delay, duplicate or
// reorder notifications, deterministically given the seed.
import { badRequest, publishDenied } from './errors.js';
import { sampleLatency, type LatencyDistribution } from './faults.js';
import type { HistoryRecord } from './history.js';
import type { SigningKey } from './keys.js';
import { Random } from './random.js';

export interface PushTarget {
  endpoint: string;
  /** JWT `aud`; defaults to the endpoint URL, as Pub/Sub does. */
  audience?: string;
  /** Subscription name put in the envelope; defaults to projects/<p>/subscriptions/<topic>-push. */
  subscription?: string;
}

export interface PushConfig {
  /** Endpoint for topics that have no target of their own. */
  endpoint?: string;
  audience?: string;
  /** The push subscription's service account: the JWT `email` claim. */
  serviceAccountEmail: string;
  topics: Record<string, PushTarget>;
  /** Minimum spacing of notifications per user (Gmail: one per second). */
  coalesceMs: number;
  dropRate: number;
  duplicateRate: number;
  /** Extra delay added to each notification. */
  delay?: LatencyDistribution;
  /** Hold each notification until the next one and deliver them swapped. */
  reorder: boolean;
  /** `historyId` in the data JSON: a number (what Gmail sends in practice) or a string (the docs). */
  historyIdFormat: 'number' | 'string';
  retry: { minBackoffMs: number; maxBackoffMs: number; maxAttempts: number };
  seed: number;
}

export const DEFAULT_PUSH: PushConfig = {
  serviceAccountEmail: 'gmail-push@durable-inbox-emulator.iam.gserviceaccount.com',
  topics: {},
  coalesceMs: 1000,
  dropRate: 0,
  duplicateRate: 0,
  reorder: false,
  historyIdFormat: 'number',
  retry: { minBackoffMs: 1000, maxBackoffMs: 60_000, maxAttempts: 8 },
  seed: 1,
};

export interface Watch {
  topicName: string;
  labelIds: string[];
  labelFilterBehavior: 'include' | 'exclude';
  expiration: number;
}

export interface PushStats {
  scheduled: number;
  coalesced: number;
  /** Notifications published to the topic when their coalescing window closed (before the switches: drop, duplicate, delay, reorder). */
  published: number;
  sent: number;
  delivered: number;
  failedAttempts: number;
  abandoned: number;
  dropped: number;
  duplicated: number;
  reordered: number;
  undeliverable: number;
}

export interface PushDeliveryLog {
  at: string;
  messageId: string;
  emailAddress: string;
  historyId: number;
  endpoint: string;
  status: number | 'error';
  attempt: number;
}

interface Notification {
  emailAddress: string;
  historyId: number;
  topicName: string;
  /** Pub/Sub message id and publish time: fixed at publish, kept by redeliveries and duplicates. */
  messageId: string;
  publishTime: string;
}

interface UserPushState {
  watch?: Watch;
  lastSentAt: number;
  timer?: NodeJS.Timeout;
}

const TOPIC_PATTERN = /^projects\/([^/]+)\/topics\/([^/]+)$/;
const WATCH_TTL_MS = 7 * 24 * 3600_000;

export class PushService {
  config: PushConfig;
  readonly stats: PushStats = PushService.emptyStats();
  readonly log: PushDeliveryLog[] = [];
  private readonly users = new Map<string, UserPushState>();
  private random: Random;
  private held?: Notification;
  private heldTimer?: NodeJS.Timeout;
  /** Scheduled, held or in-flight notifications of the current generation (flush waits for 0). */
  private pending = 0;
  /** Bumped by reset(): work scheduled before it neither counts nor delivers. */
  private generation = 0;
  private heldDone?: () => void;
  private nextMessageId = 1_000_000_000_000 + 1;
  private closed = false;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    config: Partial<PushConfig>,
    private readonly signer: SigningKey,
    private readonly now: () => number,
    private readonly currentHistoryId: (email: string) => number | undefined,
  ) {
    this.config = { ...DEFAULT_PUSH, ...config };
    this.random = new Random(this.config.seed);
  }

  private static emptyStats(): PushStats {
    return { scheduled: 0, coalesced: 0, published: 0, sent: 0, delivered: 0, failedAttempts: 0, abandoned: 0, dropped: 0, duplicated: 0, reordered: 0, undeliverable: 0 };
  }

  configure(patch: Partial<PushConfig>): void {
    this.config = { ...this.config, ...patch, topics: { ...this.config.topics, ...(patch.topics ?? {}) } };
    if (patch.seed !== undefined) this.random = new Random(patch.seed);
  }

  private state(email: string): UserPushState {
    let state = this.users.get(email);
    if (!state) {
      state = { lastSentAt: 0 };
      this.users.set(email, state);
    }
    return state;
  }

  /**
   * users.watch. Gmail publishes a test message to the topic first: when its push service account may
   * not publish there (`canPublish` false), the watch fails with 403 and nothing is watched.
   */
  watch(
    email: string,
    body: { topicName?: unknown; labelIds?: unknown; labelFilterBehavior?: unknown; labelFilterAction?: unknown },
    canPublish: (topicName: string) => boolean = () => true,
  ): Watch {
    const topicName = typeof body.topicName === 'string' ? body.topicName : '';
    if (!TOPIC_PATTERN.test(topicName)) throw badRequest('Invalid topicName does not match projects/SOME-ANDROID-PROJECT/topics/*', 'invalidArgument');
    const behavior = String(body.labelFilterBehavior ?? body.labelFilterAction ?? 'include').toLowerCase();
    if (behavior !== 'include' && behavior !== 'exclude') throw badRequest(`Invalid value for labelFilterBehavior: ${behavior}`);
    if (!canPublish(topicName)) throw publishDenied(topicName);
    const labelIds = Array.isArray(body.labelIds) ? body.labelIds.map(String) : [];
    const watch: Watch = { topicName, labelIds, labelFilterBehavior: behavior, expiration: this.now() + WATCH_TTL_MS };
    this.state(email).watch = watch;
    return watch;
  }

  /** Every account's watch (the emulator's state file). */
  watches(): Record<string, Watch> {
    const out: Record<string, Watch> = {};
    for (const [email, state] of this.users) if (state.watch) out[email] = { ...state.watch };
    return out;
  }

  restoreWatches(watches: Record<string, Watch>): void {
    for (const [email, watch] of Object.entries(watches)) this.state(email).watch = { ...watch };
  }

  stop(email: string): void {
    const state = this.users.get(email);
    if (state) state.watch = undefined;
  }

  getWatch(email: string): Watch | undefined {
    const watch = this.users.get(email)?.watch;
    return watch && watch.expiration > this.now() ? watch : undefined;
  }

  /** Called for every history record of every mailbox. */
  onChange(email: string, record: HistoryRecord): void {
    const state = this.users.get(email);
    const watch = state?.watch;
    if (!state || !watch || watch.expiration <= this.now() || this.closed) return;
    if (watch.labelIds.length > 0) {
      const touched = [...record.labelIds, ...(record.changedLabelIds ?? [])];
      const hit = watch.labelIds.some((id) => touched.includes(id));
      if (watch.labelFilterBehavior === 'include' ? !hit : hit) return;
    }
    if (state.timer) {
      this.stats.coalesced++;
      return;
    }
    this.stats.scheduled++;
    const wait = Math.max(0, state.lastSentAt + this.config.coalesceMs - Date.now());
    const done = this.track();
    state.timer = this.setTimer(() => {
      state.timer = undefined;
      state.lastSentAt = Date.now();
      // Re-read the watch: a stop() or a new topic since scheduling wins.
      const current = this.getWatch(email);
      const historyId = this.currentHistoryId(email);
      if (current && historyId !== undefined) {
        this.emit({ emailAddress: email, historyId, topicName: current.topicName, messageId: String(this.nextMessageId++), publishTime: new Date().toISOString() });
      }
      done();
    }, wait);
  }

  /** Counts one piece of pending work; the returned function ends it (once, and only in its generation). */
  private track(): () => void {
    const generation = this.generation;
    this.pending++;
    let ended = false;
    return () => {
      if (!ended && generation === this.generation) this.pending--;
      ended = true;
    };
  }

  private setTimer(fn: () => void, ms: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
    return timer;
  }

  /** Applies the misbehaviour switches, then hands notifications to delivery. */
  private emit(notification: Notification): void {
    this.stats.published++;
    if (this.random.chance(this.config.dropRate)) {
      this.stats.dropped++;
      return;
    }
    const copies = this.random.chance(this.config.duplicateRate) ? 2 : 1;
    if (copies === 2) this.stats.duplicated++;
    const delayMs = this.config.delay ? sampleLatency(this.config.delay, this.random) : 0;
    const release = (n: Notification) => {
      for (let i = 0; i < copies; i++) this.deliverLater(n, delayMs);
    };
    if (!this.config.reorder) return release(notification);
    if (this.held) {
      // The newer notification goes out first, then the one held back.
      const older = this.held;
      this.held = undefined;
      if (this.heldTimer) clearTimeout(this.heldTimer);
      this.heldDone?.();
      this.stats.reordered++;
      release(notification);
      this.deliverLater(older, delayMs);
      return;
    }
    this.held = notification;
    this.heldDone = this.track();
    // Nothing newer within 5 s: let it go in order.
    this.heldTimer = this.setTimer(() => {
      const held = this.held;
      this.held = undefined;
      this.heldDone?.();
      if (held) release(held);
    }, 5000);
  }

  private deliverLater(notification: Notification, delayMs: number): void {
    const done = this.track();
    const generation = this.generation;
    this.setTimer(() => {
      void this.deliver(notification, 1, generation).finally(done);
    }, delayMs);
  }

  private target(topicName: string): PushTarget | undefined {
    const own = this.config.topics[topicName];
    if (own) return own;
    return this.config.endpoint ? { endpoint: this.config.endpoint, ...(this.config.audience ? { audience: this.config.audience } : {}) } : undefined;
  }

  private async deliver(notification: Notification, attempt: number, generation: number): Promise<void> {
    if (this.closed || generation !== this.generation) return;
    const target = this.target(notification.topicName);
    if (!target) {
      this.stats.undeliverable++;
      return;
    }
    const [, project = 'emulator', topic = 'gmail'] = TOPIC_PATTERN.exec(notification.topicName) ?? [];
    const { messageId, publishTime } = notification;
    const data = { emailAddress: notification.emailAddress, historyId: this.config.historyIdFormat === 'string' ? String(notification.historyId) : notification.historyId };
    const envelope = {
      message: {
        data: Buffer.from(JSON.stringify(data)).toString('base64'),
        messageId,
        message_id: messageId,
        publishTime,
        publish_time: publishTime,
      },
      subscription: target.subscription ?? `projects/${project}/subscriptions/${topic}-push`,
    };
    // Wall-clock iat/exp: the receiver verifies them against its own clock.
    const iat = Math.floor(Date.now() / 1000);
    const jwt = this.signer.signJwt({
      aud: target.audience ?? target.endpoint,
      azp: '108165346924118474621',
      email: this.config.serviceAccountEmail,
      email_verified: true,
      exp: iat + 3600,
      iat,
      iss: 'https://accounts.google.com',
      sub: '108165346924118474621',
    });
    this.stats.sent++;
    let status: number | 'error' = 'error';
    try {
      const res = await fetch(target.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}`, 'user-agent': 'APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)' },
        body: JSON.stringify(envelope),
        signal: AbortSignal.timeout(10_000),
      });
      status = res.status;
      await res.arrayBuffer().catch(() => undefined);
    } catch {
      status = 'error';
    }
    this.log.push({ at: new Date().toISOString(), messageId, emailAddress: notification.emailAddress, historyId: notification.historyId, endpoint: target.endpoint, status, attempt });
    if (this.log.length > 200) this.log.splice(0, this.log.length - 200);
    if (typeof status === 'number' && status >= 200 && status < 300) {
      this.stats.delivered++;
      return;
    }
    this.stats.failedAttempts++;
    const { minBackoffMs, maxBackoffMs, maxAttempts } = this.config.retry;
    if (attempt >= maxAttempts || this.closed || generation !== this.generation) {
      this.stats.abandoned++;
      return;
    }
    const backoff = Math.min(maxBackoffMs, minBackoffMs * 2 ** (attempt - 1));
    const done = this.track();
    this.setTimer(() => {
      void this.deliver(notification, attempt + 1, generation).finally(done);
    }, backoff);
  }

  /** Resolves when no notification is scheduled, held, or being delivered (or after `timeoutMs`). */
  async flush(timeoutMs = 30_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.pending > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    return this.pending === 0;
  }

  reset(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.users.clear();
    this.held = undefined;
    this.heldDone = undefined;
    this.generation++;
    this.pending = 0;
    this.log.length = 0;
    Object.assign(this.stats, PushService.emptyStats());
    this.config = { ...DEFAULT_PUSH };
    this.random = new Random(this.config.seed);
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
