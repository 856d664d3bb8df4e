import type { Granularity } from './contracts.js';
// Time slices for the backfill (pure, deterministic: used inside workflows). A slice is
// [start, end) in epoch ms, aligned to UTC calendar boundaries (midnight, Monday, 1st of month).

export const DAY_MS = 86_400_000;

/** The first boundary strictly after `t` for the granularity. */
export function nextBoundary(t: number, granularity: Granularity): number {
  const d = new Date(t);
  switch (granularity) {
    case 'day':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
    case 'week': {
      const daysSinceMonday = (d.getUTCDay() + 6) % 7;
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - daysSinceMonday + 7);
    }
    case 'month':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  }
}

/** The slice that starts at `start` and ends at the next boundary, or at `rangeEnd`. */
export function sliceFrom(start: number, rangeEnd: number, granularity: Granularity): { start: number; end: number } {
  return { start, end: Math.min(nextBoundary(start, granularity), rangeEnd) };
}

/** How many slices cover [from, rangeEnd). */
export function countSlices(from: number, rangeEnd: number, granularity: Granularity): number {
  let n = 0;
  for (let t = from; t < rangeEnd; t = nextBoundary(t, granularity)) n++;
  return n;
}

/**
 * Granularity from the mailbox's size: the coarsest whose average slice holds at most
 * `targetPerSlice` messages (monthly for small mailboxes, weekly for moderate, daily for large).
 */
export function chooseGranularity(messagesTotal: number, rangeStart: number, rangeEnd: number, targetPerSlice = 2000): Granularity {
  const days = Math.max(1, (rangeEnd - rangeStart) / DAY_MS);
  const perDay = messagesTotal / days;
  if (perDay * 31 <= targetPerSlice) return 'month';
  if (perDay * 7 <= targetPerSlice) return 'week';
  return 'day';
}
