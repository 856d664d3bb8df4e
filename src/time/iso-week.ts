// The ISO week (Monday to Sunday, e.g. "2026-W48") an instant falls in, in a time zone: the weekly
// lessons e-mail goes out once per account per such week, at a weekday and wall-clock time of it.
import { DateTime } from 'luxon';

export function isoWeekOf(instant: Date, zone: string): string {
  return DateTime.fromJSDate(instant, { zone }).toFormat("kkkk-'W'WW");
}

/** A weekday (ISO: 1 Monday … 7 Sunday) and a wall-clock time. */
export interface WeeklyTime {
  weekday: number;
  hour: number;
  minute: number;
}

const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/** "mon 08:00" → {weekday 1, hour 8, minute 0}; null for anything else. */
export function parseWeeklyTime(text: string): WeeklyTime | null {
  const m = /^\s*(mon|tue|wed|thu|fri|sat|sun)[a-z]*\s+([01]?\d|2[0-3]):([0-5]\d)\s*$/i.exec(text);
  if (!m) return null;
  return { weekday: WEEKDAYS.indexOf(m[1]!.toLowerCase()) + 1, hour: Number(m[2]), minute: Number(m[3]) };
}

/** That weekday and time in the ISO week `instant` falls in, in `zone` (a time the clocks skip moves forward, as luxon does). */
export function weeklyTimeIn(instant: Date, zone: string, at: WeeklyTime): Date {
  const local = DateTime.fromJSDate(instant, { zone }).startOf('week');
  return local.plus({ days: at.weekday - 1 }).set({ hour: at.hour, minute: at.minute }).toJSDate();
}
