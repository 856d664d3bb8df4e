// Business days count in the account's zone and skip its weekend.
import { describe, expect, it } from 'vitest';
import { addBusinessDays, describeLocal, resolveWhen, type TimeSettings } from '../../src/time/index.js';

const newYork: TimeSettings = { zone: 'America/New_York', morningHour: 8, eveningHour: 18, weekend: [6, 7] };

describe('addBusinessDays', () => {
  it('3 business days from a Thursday afternoon in New York is the next Tuesday, same local time', () => {
    const thursday = new Date('2026-11-26T19:00:00Z'); // Thu 26 Nov 14:00 EST
    const due = addBusinessDays(thursday, 3, newYork);
    expect(describeLocal(due, newYork.zone)).toBe('Tue 1 Dec 2026 14:00 America/New_York (19:00 UTC)');
    expect(resolveWhen({ kind: 'business_days', days: 3 }, thursday, newYork)).toEqual(due);
  });

  it('a Friday 23:30 that is Saturday in UTC counts as Friday: 1 business day is Monday 23:30', () => {
    const friday = new Date('2026-12-05T04:30:00Z'); // Fri 4 Dec 23:30 EST = Sat 5 Dec 04:30 UTC
    const due = addBusinessDays(friday, 1, newYork);
    expect(describeLocal(due, newYork.zone)).toBe('Mon 7 Dec 2026 23:30 America/New_York (Tue 8 Dec 04:30 UTC)');
    // Counted in UTC it would have started on a Saturday and ended on Monday 04:30 UTC, Sunday evening in New York.
    expect(due.toISOString()).not.toBe('2026-12-07T04:30:00.000Z');
  });

  it('from a weekend day, the first business day after it is the first counted', () => {
    const saturday = new Date('2026-11-28T15:00:00Z'); // Sat 10:00 EST
    expect(describeLocal(addBusinessDays(saturday, 1, newYork), newYork.zone)).toBe(
      'Mon 30 Nov 2026 10:00 America/New_York (15:00 UTC)',
    );
  });

  it('skips the account’s weekend, whichever days it is (Friday–Saturday)', () => {
    const dubai: TimeSettings = { zone: 'Asia/Dubai', morningHour: 8, eveningHour: 18, weekend: [5, 6] };
    const thursday = new Date('2026-11-26T06:00:00Z'); // Thu 10:00 GST
    expect(describeLocal(addBusinessDays(thursday, 1, dubai), dubai.zone)).toBe(
      'Sun 29 Nov 2026 10:00 Asia/Dubai (06:00 UTC)',
    );
  });

  it('with no weekend, every day counts', () => {
    const thursday = new Date('2026-11-26T19:00:00Z');
    expect(addBusinessDays(thursday, 3, { ...newYork, weekend: [] }).toISOString()).toBe('2026-11-29T19:00:00.000Z');
  });

  it('refuses a count that is not a whole number from 1 to 1000', () => {
    const now = new Date('2026-11-26T19:00:00Z');
    for (const days of [0, -1, 2.5, 1001, Number.NaN])
      expect(() => addBusinessDays(now, days, newYork)).toThrow(/business days: expected a whole number/);
  });
});
