// Ordered Frontier Commit, property-tested on the pure bookkeeping the backfill workflow uses:
// under any order of completions, failures (restarts) and splits, the watermark never passes a
// slice that is not finished, never moves back, and reaches the end once everything is done.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { complete, fail, isComplete, newFrontier, runningCount, split, startNext } from '../../src/backfill/frontier.js';
import { DAY_MS } from '../../src/backfill/slicing.js';
import type { FrontierState, Granularity, OpenSlice } from '../../src/backfill/contracts.js';

type Op = { kind: 'finish' | 'fail' | 'split'; pick: number };

const op = fc.record({ kind: fc.constantFrom<Op['kind']>('finish', 'finish', 'finish', 'fail', 'split'), pick: fc.nat() });

/** Every instant in [rangeStart, watermark) lies in a slice that finished. */
function assertInvariant(state: FrontierState, finished: Array<{ start: number; end: number }>, unfinished: OpenSlice[]): void {
  expect(state.watermark).toBeGreaterThanOrEqual(state.rangeStart);
  for (const s of unfinished) expect(s.start >= state.watermark).toBe(true);
  const covering = finished.filter((f) => f.start < state.watermark).sort((a, b) => a.start - b.start);
  let t = state.rangeStart;
  for (const f of covering) {
    expect(f.start).toBeLessThanOrEqual(t);
    t = Math.max(t, f.end);
  }
  expect(t).toBeGreaterThanOrEqual(state.watermark);
}

describe('Ordered Frontier Commit', () => {
  it('never passes an unfinished slice under random completion orders, failures and splits', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Granularity>('day', 'week', 'month'),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 0, max: DAY_MS - 1 }),
        fc.integer({ min: 1, max: 12 }),
        fc.array(op, { minLength: 1, maxLength: 400 }),
        (granularity, days, offset, window, ops) => {
          const rangeStart = Date.UTC(2024, 0, 1) + offset;
          const rangeEnd = rangeStart + days * DAY_MS;
          const state = newFrontier(rangeStart, rangeEnd, granularity);
          const finished: Array<{ start: number; end: number }> = [];
          const fill = () => {
            while (runningCount(state) < window && startNext(state));
          };
          fill();
          let previous = state.watermark;
          const step = (o: Op) => {
            const running = state.open.filter((s) => s.status === 'running');
            if (running.length === 0) return;
            const s = running[o.pick % running.length]!;
            if (o.kind === 'finish') {
              complete(state, s.start, s.end);
              finished.push({ start: s.start, end: s.end });
            } else if (o.kind === 'fail') fail(state, s.start, s.end);
            else split(state, s.start, s.end);
            fill();
            expect(state.watermark).toBeGreaterThanOrEqual(previous);
            previous = state.watermark;
            assertInvariant(state, finished, state.open.filter((x) => x.status !== 'done'));
          };
          ops.forEach(step);
          // Then finish everything, in the order given by the picks: the watermark reaches the end.
          let guard = 0;
          while (!isComplete(state) && guard++ < 100_000) step({ kind: 'finish', pick: guard * 7919 });
          expect(state.watermark).toBe(rangeEnd);
          expect(state.open).toEqual([]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('covers the range with contiguous slices aligned to the granularity', () => {
    const rangeStart = Date.UTC(2025, 0, 15, 13);
    const rangeEnd = Date.UTC(2025, 3, 2, 7);
    const state = newFrontier(rangeStart, rangeEnd, 'month');
    const slices: Array<[string, string]> = [];
    for (let s = startNext(state); s; s = startNext(state)) slices.push([new Date(s.start).toISOString(), new Date(s.end).toISOString()]);
    expect(slices).toEqual([
      ['2025-01-15T13:00:00.000Z', '2025-02-01T00:00:00.000Z'],
      ['2025-02-01T00:00:00.000Z', '2025-03-01T00:00:00.000Z'],
      ['2025-03-01T00:00:00.000Z', '2025-04-01T00:00:00.000Z'],
      ['2025-04-01T00:00:00.000Z', '2025-04-02T07:00:00.000Z'],
    ]);
  });
});
