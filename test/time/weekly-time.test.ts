// The weekly lessons e-mail's time: a weekday and wall-clock time of the ISO week an instant falls
// in, in the account's zone, across a daylight-saving change.
import { describe, expect, it } from 'vitest';
import { isoWeekOf, parseWeeklyTime, weeklyTimeIn } from '../../src/time/index.js';

describe('a weekly time', () => {
  it('reads a weekday and a time; refuses anything else', () => {
    expect(parseWeeklyTime('mon 08:00')).toEqual({ weekday: 1, hour: 8, minute: 0 });
    expect(parseWeeklyTime(' Sunday 7:05 ')).toEqual({ weekday: 7, hour: 7, minute: 5 });
    for (const bad of ['mon', '08:00', 'mon 24:00', 'mon 8:60', 'someday 08:00', 'mon 08:00 extra']) expect(parseWeeklyTime(bad)).toBeNull();
  });

  it("is that weekday and time of the instant's ISO week, in the zone", () => {
    const mon8 = parseWeeklyTime('mon 08:00')!;
    // Thursday 26 November 2026, 17:00 UTC: the week began on Monday the 23rd.
    const thursday = new Date('2026-11-26T17:00:00Z');
    expect(weeklyTimeIn(thursday, 'UTC', mon8).toISOString()).toBe('2026-11-23T08:00:00.000Z');
    expect(weeklyTimeIn(thursday, 'Europe/Berlin', mon8).toISOString()).toBe('2026-11-23T07:00:00.000Z');
    // Sunday 29 November, 23:30 UTC is already Monday the 30th in Tokyo: a new week there.
    const sundayNight = new Date('2026-11-29T23:30:00Z');
    expect(isoWeekOf(sundayNight, 'Asia/Tokyo')).toBe('2026-W49');
    expect(weeklyTimeIn(sundayNight, 'Asia/Tokyo', mon8).toISOString()).toBe('2026-11-29T23:00:00.000Z');
    expect(weeklyTimeIn(sundayNight, 'UTC', mon8).toISOString()).toBe('2026-11-23T08:00:00.000Z');
  });

  it('keeps the wall clock across a daylight-saving change, and moves a skipped time forward', () => {
    // Berlin's clocks go forward on Sunday 29 March 2026 at 02:00 (UTC+1 → UTC+2).
    const thatWeek = new Date('2026-03-26T12:00:00Z');
    expect(weeklyTimeIn(thatWeek, 'Europe/Berlin', parseWeeklyTime('sun 08:00')!).toISOString()).toBe('2026-03-29T06:00:00.000Z');
    expect(weeklyTimeIn(thatWeek, 'Europe/Berlin', parseWeeklyTime('mon 08:00')!).toISOString()).toBe('2026-03-23T07:00:00.000Z');
    expect(weeklyTimeIn(thatWeek, 'Europe/Berlin', parseWeeklyTime('sun 02:30')!).toISOString()).toBe('2026-03-29T01:30:00.000Z');
  });
});
