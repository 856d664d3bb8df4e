// Business days in the account's zone: the account's weekend (by default Saturday and Sunday, as
// its own calendar has them, not UTC's) is skipped; the result keeps the starting wall-clock time.
import { DateTime } from 'luxon';
import { inZone, momentAt, TimeSpecError } from './local-time.js';
import { checkTimeSettings, type TimeSettings } from './settings.js';

/** More business days than this is a mistake, not a follow-up (about four years). */
export const MAX_BUSINESS_DAYS = 1000;

/**
 * `days` business days after `from`: each following calendar day in the account's zone that is not
 * one of its weekend days counts one; the result is on the last counted day at `from`'s local time
 * of day (daylight-saving rules as momentAt: a time in a gap moves forward by the gap, a repeated one
 * is the earlier). From a weekend day, the first business day after it counts as the first.
 */
export function addBusinessDays(from: Date, days: number, settings: TimeSettings): Date {
  if (!Number.isInteger(days) || days < 1 || days > MAX_BUSINESS_DAYS) {
    throw new TimeSpecError(`business days: expected a whole number from 1 to ${MAX_BUSINESS_DAYS} (got ${days})`);
  }
  const { zone, weekend } = checkTimeSettings(settings);
  const start = inZone(from, zone);
  // Calendar days are counted on a zone-free calendar: a daylight-saving change cannot add or drop one.
  let day = DateTime.utc(start.year, start.month, start.day);
  for (let left = days; left > 0;) {
    day = day.plus({ days: 1 });
    if (!weekend.includes(day.weekday)) left--;
  }
  return momentAt(
    {
      year: day.year,
      month: day.month,
      day: day.day,
      hour: start.hour,
      minute: start.minute,
      second: start.second,
      millisecond: start.millisecond,
    },
    zone,
  );
}

/** Whether `at` falls on one of the account's weekend days, in its zone. */
export function isWeekend(at: Date, settings: TimeSettings): boolean {
  return settings.weekend.includes(inZone(at, settings.zone).weekday);
}
