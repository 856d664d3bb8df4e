// Ordered Frontier Commit (pure, deterministic: the backfill workflow's bookkeeping, also used by
// the property test). Slices run concurrently and finish in any order; the watermark moves only
// to the end of the longest run of finished slices that starts at the range start, like TCP's
// cumulative ACK. Everything is plain JSON so it can be carried through continue-as-new.
import { sliceFrom } from './slicing.js';
import type { FrontierState, Granularity, OpenSlice } from './contracts.js';

export function newFrontier(rangeStart: number, rangeEnd: number, granularity: Granularity, watermark = rangeStart): FrontierState {
  const start = Math.max(rangeStart, Math.min(watermark, rangeEnd));
  return { rangeStart, rangeEnd, granularity, watermark: start, cursor: start, open: [], slicesDone: 0 };
}

export function runningCount(state: FrontierState): number {
  return state.open.filter((s) => s.status === 'running').length;
}

/** Whether every slice of the range is finished. */
export function isComplete(state: FrontierState): boolean {
  return state.watermark >= state.rangeEnd;
}

/**
 * The next slice to start (lowest pending first, else a new one at the cursor), marked running;
 * undefined when nothing is left to start.
 */
export function startNext(state: FrontierState): OpenSlice | undefined {
  let slice = state.open.find((s) => s.status === 'pending');
  if (!slice) {
    if (state.cursor >= state.rangeEnd) return undefined;
    const { start, end } = sliceFrom(state.cursor, state.rangeEnd, state.granularity);
    slice = { start, end, status: 'pending', attempts: 0 };
    state.open.push(slice);
    state.cursor = end;
  }
  slice.status = 'running';
  slice.attempts++;
  return slice;
}

function find(state: FrontierState, start: number, end: number): OpenSlice | undefined {
  return state.open.find((s) => s.start === start && s.end === end);
}

/** Marks a slice finished and advances the watermark; returns true when the watermark moved. */
export function complete(state: FrontierState, start: number, end: number): boolean {
  const slice = find(state, start, end);
  if (!slice || slice.status === 'done') return false;
  slice.status = 'done';
  state.slicesDone++;
  const before = state.watermark;
  while (state.open.length > 0 && state.open[0]!.status === 'done' && state.open[0]!.start === state.watermark) {
    state.watermark = state.open.shift()!.end;
  }
  return state.watermark !== before;
}

/** A slice that failed goes back to pending, to be started again. */
export function fail(state: FrontierState, start: number, end: number): void {
  const slice = find(state, start, end);
  if (slice && slice.status === 'running') slice.status = 'pending';
}

/**
 * Replaces a slice by its two halves (pending), e.g. when its listing paged too deep. A slice
 * shorter than `minMs` cannot be split: returns false and leaves it pending.
 */
export function split(state: FrontierState, start: number, end: number, minMs = 1000): boolean {
  const index = state.open.findIndex((s) => s.start === start && s.end === end);
  if (index < 0) return false;
  const slice = state.open[index]!;
  if (slice.status === 'done') return false;
  if (end - start < 2 * minMs) {
    slice.status = 'pending';
    return false;
  }
  const mid = start + Math.floor((end - start) / 2 / 1000) * 1000;
  state.open.splice(index, 1, { start, end: mid, status: 'pending', attempts: 0 }, { start: mid, end, status: 'pending', attempts: 0 });
  return true;
}
