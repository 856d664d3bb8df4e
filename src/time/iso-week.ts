// The ISO week (Monday to Sunday, e.g. "2026-W48") an instant falls in, in a time zone: the weekly
// lessons e-mail goes out once per account per such week.
import { DateTime } from 'luxon';

export function isoWeekOf(instant: Date, zone: string): string {
  return DateTime.fromJSDate(instant, { zone }).toFormat("kkkk-'W'WW");
}
