// A user schedule's timing as a Temporal ScheduleSpec in its IANA zone, with what Temporal's calendar
// does not do on daylight-saving days made explicit (docs/time.md, "Schedules and reminders"):
// - a time of day the clocks skip (02:30 on the spring-forward day in Europe) would never fire: that
//   day gets an entry of its own at the same time shifted by the jump (03:30), so it fires once;
// - a time of day the clocks repeat (the hour after daylight saving ends) may fire twice: the run
//   claims its local date and time in Postgres and the second firing does nothing (store-activities).
import type { CalendarSpec, DayOfWeek, Month, ScheduleSpec } from '@temporalio/client';
import { MONTHS } from '@temporalio/client';
import { DateTime, IANAZone } from 'luxon';
import type { ScheduleTiming, Weekday } from './contracts.js';

const DAY_OF_WEEK: Record<Weekday, DayOfWeek> = {
  mon: 'MONDAY',
  tue: 'TUESDAY',
  wed: 'WEDNESDAY',
  thu: 'THURSDAY',
  fri: 'FRIDAY',
  sat: 'SATURDAY',
  sun: 'SUNDAY',
};
const LUXON_WEEKDAY: Record<number, Weekday> = { 1: 'mon', 2: 'tue', 3: 'wed', 4: 'thu', 5: 'fri', 6: 'sat', 7: 'sun' };

/** How many years ahead the skipped-time days get their own entry (the spec is rebuilt on every change). */
export const GAP_YEARS_AHEAD = 10;

export function isIanaZone(zone: string): boolean {
  return IANAZone.isValidZone(zone);
}

export interface SpecOptions {
  zone: string;
  jitterMs: number;
  /** From when the skipped-time days are computed (default now). */
  from?: Date;
}

export function scheduleSpecOf(timing: ScheduleTiming, opts: SpecOptions): ScheduleSpec {
  if (!isIanaZone(opts.zone)) throw new Error(`${opts.zone} is not an IANA time zone (e.g. Europe/Berlin)`);
  const base = { timezone: opts.zone, ...(opts.jitterMs > 0 ? { jitter: opts.jitterMs } : {}) };
  if ('cron' in timing) return { ...base, cronExpressions: [timing.cron] };
  const [hour, minute] = timing.at.split(':').map(Number) as [number, number];
  const daily: CalendarSpec = { hour, minute, dayOfWeek: timing.days.map((d) => DAY_OF_WEEK[d]), comment: `${timing.at} ${timing.days.join(',')}` };
  const gaps = skippedTimeDays(hour, minute, opts.zone, opts.from ?? new Date(), GAP_YEARS_AHEAD).filter((g) => timing.days.includes(g.weekday));
  const shifted: CalendarSpec[] = gaps.map((g) => ({
    year: g.year,
    month: MONTHS[g.month - 1] as Month,
    dayOfMonth: g.day,
    hour: g.hour,
    minute: g.minute,
    comment: `${timing.at} does not exist on ${g.date} (clocks go forward): runs at ${String(g.hour).padStart(2, '0')}:${String(g.minute).padStart(2, '0')}`,
  }));
  return { ...base, calendars: [daily, ...shifted] };
}

export interface SkippedTimeDay {
  date: string;
  year: number;
  month: number;
  day: number;
  weekday: Weekday;
  /** The local time the run moves to: the skipped time plus the jump. */
  hour: number;
  minute: number;
}

/** Days within `years` from `from` on which hour:minute does not exist in `zone` (the clocks jump over it). */
export function skippedTimeDays(hour: number, minute: number, zone: string, from: Date, years: number): SkippedTimeDay[] {
  const found: SkippedTimeDay[] = [];
  let day = DateTime.fromJSDate(from, { zone }).startOf('day');
  const end = day.plus({ years });
  for (; day < end; day = day.plus({ days: 1 })) {
    // Only a day whose offset changes can skip a time.
    if (day.offset === day.endOf('day').offset) continue;
    const wanted = DateTime.fromObject({ year: day.year, month: day.month, day: day.day, hour, minute }, { zone });
    if (wanted.hour === hour && wanted.minute === minute) continue;
    found.push({ date: day.toISODate()!, year: day.year, month: day.month, day: day.day, weekday: LUXON_WEEKDAY[day.weekday]!, hour: wanted.hour, minute: wanted.minute });
  }
  return found;
}

/**
 * What a run stands for, as its claim's key: the local date and time of its instant in the zone. In
 * the hour the clocks repeat, the wall-clock time alone (both firings of 01:30 share it, so the
 * second does nothing); at any other time, with the offset (two triggers a second apart both run).
 */
export function localSlotOf(at: Date, zone: string): string {
  const local = DateTime.fromJSDate(at, { zone });
  const repeated = local.getPossibleOffsets().length > 1;
  return repeated ? `${local.toFormat('yyyy-MM-dd HH:mm')} (repeated hour)` : local.toFormat('yyyy-MM-dd HH:mm:ss ZZ');
}
