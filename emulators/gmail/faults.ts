// Injected failures: per-method error rates (500 backendError, 503), latency distributions,
// poison message ids (get always fails, or returns broken MIME), a forced history 404, and the
// set-up mistakes of a Cloud project (the Gmail API disabled, a topic Gmail may not publish to).
// Decisions come from a per-(method, call number) random stream, so a run is reproducible
// given the seed even when calls interleave.
import { backendError, GmailApiError, serviceUnavailable } from './errors.js';
import { hashSeed, Random } from './random.js';

export type LatencyDistribution =
  | { type: 'fixed'; ms: number }
  | { type: 'uniform'; minMs: number; maxMs: number }
  | { type: 'normal'; meanMs: number; stddevMs: number };

export interface ErrorRule {
  /** Method name such as "messages.get", or "*" for every Gmail method. */
  method: string;
  /** Probability in [0, 1]. */
  rate: number;
  status: 500 | 503;
}

export interface LatencyRule {
  method: string;
  distribution: LatencyDistribution;
}

export interface PoisonMessage {
  messageId: string;
  /** `error`: every get fails with 500; `brokenMime`: get succeeds with unparseable MIME. */
  mode: 'error' | 'brokenMime';
}

export interface FaultConfig {
  seed: number;
  errors: ErrorRule[];
  latency: LatencyRule[];
  poison: PoisonMessage[];
  /** Mailboxes (email addresses, or "*") whose history.list answers 404 whatever the start id. */
  historyNotFound: string[];
  /**
   * OAuth client ids (or "*") whose Cloud project has the Gmail API disabled: every Gmail call made
   * with their tokens answers 403 accessNotConfigured (token refreshes still work, as at Google).
   */
  gmailApiDisabled: string[];
  /**
   * Pub/Sub topics (`projects/p/topics/t`, or "*") on which gmail-api-push@system.gserviceaccount.com
   * has no publish right: users.watch answers 403 "Error sending test message to Cloud PubSub …".
   */
  topicsWithoutPublisher: string[];
}

export const NO_FAULTS: FaultConfig = { seed: 1, errors: [], latency: [], poison: [], historyNotFound: [], gmailApiDisabled: [], topicsWithoutPublisher: [] };

export function sampleLatency(distribution: LatencyDistribution, random: Random): number {
  switch (distribution.type) {
    case 'fixed':
      return distribution.ms;
    case 'uniform':
      return distribution.minMs + random.next() * (distribution.maxMs - distribution.minMs);
    case 'normal':
      return Math.max(0, distribution.meanMs + random.normal() * distribution.stddevMs);
  }
}

const ruleFor = <T extends { method: string }>(rules: readonly T[], method: string): T | undefined =>
  rules.find((r) => r.method === method) ?? rules.find((r) => r.method === '*');

export interface FaultDecision {
  delayMs: number;
  error?: GmailApiError;
}

export class FaultInjector {
  config: FaultConfig;
  private readonly callCounts = new Map<string, number>();
  injectedErrors = 0;

  constructor(config: Partial<FaultConfig>) {
    this.config = { ...NO_FAULTS, ...config };
  }

  configure(patch: Partial<FaultConfig>): void {
    this.config = { ...this.config, ...patch };
    this.callCounts.clear();
  }

  /** Latency and error for the next call of `method`. */
  decide(method: string): FaultDecision {
    const { errors, latency } = this.config;
    if (errors.length === 0 && latency.length === 0) return { delayMs: 0 };
    const n = (this.callCounts.get(method) ?? 0) + 1;
    this.callCounts.set(method, n);
    const random = new Random(hashSeed(this.config.seed, `${method}#${n}`));
    const latencyRule = ruleFor(latency, method);
    const delayMs = latencyRule ? sampleLatency(latencyRule.distribution, random) : 0;
    const errorRule = ruleFor(errors, method);
    if (errorRule && random.chance(errorRule.rate)) {
      this.injectedErrors++;
      return { delayMs, error: errorRule.status === 503 ? serviceUnavailable() : backendError() };
    }
    return { delayMs };
  }

  poisonMode(messageId: string): PoisonMessage['mode'] | undefined {
    return this.config.poison.find((p) => p.messageId === messageId)?.mode;
  }

  historyNotFound(email: string): boolean {
    return this.config.historyNotFound.includes(email) || this.config.historyNotFound.includes('*');
  }

  gmailApiDisabled(clientId: string): boolean {
    return this.config.gmailApiDisabled.includes(clientId) || this.config.gmailApiDisabled.includes('*');
  }

  /** Whether Gmail's push service account may publish to the topic. */
  canPublish(topicName: string): boolean {
    return !this.config.topicsWithoutPublisher.includes(topicName) && !this.config.topicsWithoutPublisher.includes('*');
  }

  reset(): void {
    this.config = { ...NO_FAULTS };
    this.callCounts.clear();
    this.injectedErrors = 0;
  }
}

/**
 * A deterministic, unreadable variant of a message: a multipart whose boundary never appears, over a
 * body that is not text (NUL bytes), so it cannot be read as text either.
 */
export function breakMime(raw: Buffer): Buffer {
  const text = raw.toString('latin1');
  const headerEnd = text.search(/\r?\n\r?\n/);
  const headers = (headerEnd < 0 ? text : text.slice(0, headerEnd))
    .split(/\r?\n(?![ \t])/)
    .filter((h) => !/^content-(type|transfer-encoding):/i.test(h));
  return Buffer.from(
    [...headers, 'Content-Type: multipart/mixed; boundary="=_missing_boundary"', 'Content-Transfer-Encoding: base64', '', '--=_wrong_boundary', '!!! not base64 %%%\u0000\u0001\u0002\u0000', ''].join('\r\n'),
    'latin1',
  );
}
