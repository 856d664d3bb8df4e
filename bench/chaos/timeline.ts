// The chaos run's fault schedule: a pure function of the seed, the window and the fault list, so a
// run can be repeated exactly (the same seed gives the same moments) and tested without processes.
import { Random } from '../../emulators/gmail/random.js';

import type { WorkerRole } from '../../src/stack/worker-processes.js';

export type FaultKind = 'kill-worker' | 'restart-temporal' | 'gmail-429-storm' | 'llm-529-outage';

/** One kind of fault, how many times, and (for the storms) how long each lasts. */
export interface FaultSpec {
  kind: FaultKind;
  /** Which worker process, for kill-worker. */
  worker?: WorkerRole;
  count: number;
  durationMs?: number;
}

export interface TimedFault {
  /** Milliseconds after the start of the run. */
  atMs: number;
  kind: FaultKind;
  worker?: WorkerRole;
  /** 0 for instant faults (a kill, a restart: its downtime is what it takes). */
  durationMs: number;
}

/**
 * Places every fault at a seeded moment inside [0, windowMs): a fault with a duration ends inside the
 * window too. Sorted by time; kills of the same worker are kept apart by `minGapMs` so a respawned
 * process gets to work before it dies again.
 */
export function chaosTimeline(seed: number, windowMs: number, faults: readonly FaultSpec[], minGapMs = 0): TimedFault[] {
  if (!(windowMs > 0)) throw new Error('the chaos window must be longer than 0 ms');
  const random = new Random(seed);
  const out: TimedFault[] = [];
  for (const spec of faults) {
    const durationMs = spec.durationMs ?? 0;
    if (durationMs >= windowMs) throw new Error(`${spec.kind} lasts ${durationMs} ms, longer than the ${windowMs} ms window`);
    if (spec.kind === 'kill-worker' && !spec.worker) throw new Error('kill-worker needs a worker');
    const latest = windowMs - durationMs;
    // One slot per occurrence: each lands somewhere in its share of the window, in order.
    const slot = latest / Math.max(1, spec.count);
    let previous = -Infinity;
    for (let i = 0; i < spec.count; i++) {
      const from = Math.max(i * slot, previous + minGapMs);
      const to = Math.max(from, (i + 1) * slot);
      const atMs = Math.min(latest, Math.round(from + random.next() * (to - from)));
      previous = atMs;
      out.push({ atMs, kind: spec.kind, ...(spec.worker ? { worker: spec.worker } : {}), durationMs });
    }
  }
  return out.sort((a, b) => a.atMs - b.atMs || a.kind.localeCompare(b.kind));
}

/** When the last fault is over (its start plus its duration). */
export function lastFaultEnd(timeline: readonly TimedFault[]): number {
  return timeline.reduce((end, f) => Math.max(end, f.atMs + f.durationMs), 0);
}
