// The chaos schedule is a pure function of seed, window and fault list.
import { describe, expect, it } from 'vitest';
import { chaosTimeline, lastFaultEnd, type FaultSpec } from '../../bench/chaos/timeline.js';

const FAULTS: FaultSpec[] = [
  { kind: 'kill-worker', worker: 'workflow', count: 3 },
  { kind: 'kill-worker', worker: 'gmail', count: 2 },
  { kind: 'restart-temporal', count: 1 },
  { kind: 'gmail-429-storm', count: 1, durationMs: 60_000 },
  { kind: 'llm-529-outage', count: 1, durationMs: 120_000 },
];

describe('chaosTimeline', () => {
  it('gives the same schedule for the same seed and another for another seed', () => {
    const a = chaosTimeline(7, 300_000, FAULTS);
    expect(chaosTimeline(7, 300_000, FAULTS)).toEqual(a);
    expect(chaosTimeline(8, 300_000, FAULTS).map((f) => f.atMs)).not.toEqual(a.map((f) => f.atMs));
  });

  it('places every occurrence, sorted, each fault over before the window ends', () => {
    const timeline = chaosTimeline(42, 300_000, FAULTS);
    expect(timeline).toHaveLength(8);
    expect(timeline.filter((f) => f.kind === 'kill-worker' && f.worker === 'workflow')).toHaveLength(3);
    expect(timeline.map((f) => f.atMs)).toEqual([...timeline.map((f) => f.atMs)].sort((x, y) => x - y));
    for (const f of timeline) {
      expect(f.atMs).toBeGreaterThanOrEqual(0);
      expect(f.atMs + f.durationMs).toBeLessThanOrEqual(300_000);
    }
    const outage = timeline.find((f) => f.kind === 'llm-529-outage')!;
    expect(outage.durationMs).toBe(120_000);
    expect(lastFaultEnd(timeline)).toBe(Math.max(...timeline.map((f) => f.atMs + f.durationMs)));
  });

  it('keeps kills of one worker apart by the minimum gap', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const kills = chaosTimeline(seed, 60_000, [{ kind: 'kill-worker', worker: 'llm', count: 4 }], 10_000).map((f) => f.atMs);
      for (let i = 1; i < kills.length; i++) expect(kills[i]! - kills[i - 1]!).toBeGreaterThanOrEqual(10_000);
    }
  });

  it('refuses a storm longer than the window and a kill without a worker', () => {
    expect(() => chaosTimeline(1, 10_000, [{ kind: 'gmail-429-storm', count: 1, durationMs: 20_000 }])).toThrow(/longer than the 10000 ms window/);
    expect(() => chaosTimeline(1, 10_000, [{ kind: 'kill-worker', count: 1 }])).toThrow(/needs a worker/);
  });
});
