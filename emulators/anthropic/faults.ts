// Which calls fail, and how. Test markers in the newest email decide first; then the configured
// error rates, drawn from the seeded stream by request number.
import { createHash } from 'node:crypto';
import type { ErrorRates } from './config.js';
import { draw } from './random.js';

/**
 * HTTP faults, and faults of the answer: `invalid-output` (fails the caller's schema), `refusal` (every
 * call about the email is refused), `draft-refusal` (only calls that force no tool: drafts, agent turns),
 * `max-tokens` (the answer stops at max_tokens; a forced tool call's input is cut).
 */
export type Fault = 'rate-limit' | 'overloaded' | 'server-error' | 'invalid-output' | 'refusal' | 'draft-refusal' | 'max-tokens';
export type HttpFault = 'rate-limit' | 'overloaded' | 'server-error';
export const isHttpFault = (f: Fault | undefined): f is HttpFault => f === 'rate-limit' || f === 'overloaded' || f === 'server-error';

/**
 * `[emulator:<fault>]` fails every call whose newest email carries it; `[emulator:<fault>:N]` fails only
 * the first N such calls (per email content), then lets them succeed, to exercise retries.
 */
const MARKER = /\[emulator:(rate-limit|overloaded|server-error|invalid-output|refusal|draft-refusal|max-tokens)(?::(\d+))?\]/g;

export class FaultPlan {
  /** Calls seen per counted marker and email content. */
  private readonly seen = new Map<string, number>();

  /** The fault a marker in `emailText` asks for on this call, if any. */
  fromMarkers(emailText: string): Fault | undefined {
    for (const [, fault, limit] of emailText.matchAll(MARKER)) {
      if (limit === undefined) return fault as Fault;
      const key = `${fault}:${limit}:${createHash('sha1').update(emailText).digest('hex')}`;
      const count = (this.seen.get(key) ?? 0) + 1;
      this.seen.set(key, count);
      if (count <= Number(limit)) return fault as Fault;
    }
    return undefined;
  }

  /** The random HTTP fault for request number `n`, if the configured rates pick one. */
  static fromRates(rates: ErrorRates, seed: number, n: number): Fault | undefined {
    const r = draw(seed, 'fault', n);
    if (r < rates.rateLimit) return 'rate-limit';
    if (r < rates.rateLimit + rates.overloaded) return 'overloaded';
    if (r < rates.rateLimit + rates.overloaded + rates.server) return 'server-error';
    return undefined;
  }

  reset(): void {
    this.seen.clear();
  }
}
