// "When" as a user says it (--in 3d, --at "tomorrow 9:00", a label "Snooze/Next week") → one moment,
// computed in the account's time zone. Pure: the caller passes `now` (in workflow code, workflow time).
import { DateTime } from 'luxon';
import { addBusinessDays } from './business-days.js';
import { describeLocal, inZone, momentAt, momentAtAfter, TimeSpecError, type LocalDateTime } from './local-time.js';
import {
  normalizeWhenText,
  parseWhenText,
  type DayRef,
  type DurationParts,
  type ParsedWhen,
  type TimeOfDay,
} from './phrases.js';
import { checkTimeSettings, type TimeSettings } from './settings.js';

/** A request for a moment, as the user says it. */
export type WhenSpec =
  | { kind: 'in'; duration: string } // "3d", "2h", "90 minutes", "1 week"
  | { kind: 'at'; local: string } // "2026-12-01 09:00", "09:00" (next such time), "tomorrow 9:00", "monday 8:00"
  | { kind: 'phrase'; phrase: string } // "tomorrow", "next week", "this evening", "3 days" (label forms)
  | { kind: 'business_days'; days: number }; // follow-ups: N business days later, at the same local time

/** How far ahead a moment may be; further is a typing mistake, not a reminder. */
export const MAX_AHEAD_DAYS = 3660;
const DAY_MS = 86_400_000;

/**
 * What a free text means (a label's text, a CLI argument that may be any form): a duration → `in`,
 * business days → `business_days`, a clock time or a date → `at`, a named day → `phrase`.
 * A TimeSpecError says what is accepted.
 */
export function parseWhen(text: string): WhenSpec {
  const parsed = parseWhenText(text);
  const words = normalizeWhenText(text);
  switch (parsed.type) {
    case 'duration':
      return { kind: 'in', duration: words.startsWith('in ') ? words.slice(3) : words };
    case 'business_days':
      return { kind: 'business_days', days: parsed.days };
    case 'moment':
      return parsed.day.kind === 'date' || typeof parsed.time === 'object'
        ? { kind: 'at', local: words }
        : { kind: 'phrase', phrase: words };
  }
}

/**
 * The one moment `spec` names, seen from `now` in the account's zone (docs/time.md has the rules).
 * Relative specs (in, business days, phrases, a bare time) are always after `now`; an explicit date
 * or "today 9:00" that has passed is a TimeSpecError, as is anything unreadable or too far ahead.
 */
export function resolveWhen(spec: WhenSpec, now: Date, settings: TimeSettings): Date {
  if (!(now instanceof Date) || Number.isNaN(now.getTime())) throw new TimeSpecError('now: not a valid date');
  const s = checkTimeSettings(settings);
  const parsed = parsedOf(spec);
  const at =
    parsed.type === 'duration'
      ? afterDuration(now, parsed.parts, s.zone)
      : parsed.type === 'business_days'
        ? addBusinessDays(now, parsed.days, s)
        : atMoment(parsed.day, parsed.time, now, s);
  if (at.getTime() - now.getTime() > MAX_AHEAD_DAYS * DAY_MS) {
    throw new TimeSpecError(`${describeLocal(at, s.zone)} is more than ${MAX_AHEAD_DAYS / 366} years ahead`);
  }
  return at;
}

function parsedOf(spec: WhenSpec): ParsedWhen {
  switch (spec?.kind) {
    case 'in': {
      const parsed = parseWhenText(String(spec.duration));
      if (parsed.type === 'moment')
        throw new TimeSpecError(
          `--in: expected a duration such as 3d, 2h, 90 minutes or 1 week (got ${JSON.stringify(String(spec.duration).slice(0, 100))})`,
        );
      return parsed;
    }
    case 'at': {
      const parsed = parseWhenText(String(spec.local));
      if (parsed.type !== 'moment')
        throw new TimeSpecError(
          `--at: expected a date or time such as "2026-12-01 09:00", "09:00" or "tomorrow 9:00" (got ${JSON.stringify(String(spec.local).slice(0, 100))}; use --in for a duration)`,
        );
      return parsed;
    }
    case 'phrase':
      return parseWhenText(String(spec.phrase));
    case 'business_days':
      return { type: 'business_days', days: spec.days };
    default:
      throw new TimeSpecError(`unknown time request ${JSON.stringify(spec)?.slice(0, 100)}`);
  }
}

/**
 * Months, weeks and days are calendar steps in the account's zone (the same wall-clock time, even
 * across a daylight-saving change); hours, minutes and seconds are elapsed time.
 */
function afterDuration(now: Date, parts: DurationParts, zone: string): Date {
  let at = now;
  if (parts.months || parts.weeks || parts.days) {
    const start = inZone(now, zone);
    const floating = DateTime.utc(
      start.year,
      start.month,
      start.day,
      start.hour,
      start.minute,
      start.second,
      start.millisecond,
    );
    at = momentAt(fields(floating.plus({ months: parts.months, weeks: parts.weeks, days: parts.days })), zone);
  }
  return new Date(at.getTime() + ((parts.hours * 60 + parts.minutes) * 60 + parts.seconds) * 1000);
}

const fields = (d: DateTime): LocalDateTime => ({
  year: d.year,
  month: d.month,
  day: d.day,
  hour: d.hour,
  minute: d.minute,
  second: d.second,
  millisecond: d.millisecond,
});

/** A named or dated day at a time of day; days are counted on a zone-free calendar of the account's dates. */
function atMoment(day: DayRef, time: TimeOfDay | undefined, now: Date, s: TimeSettings): Date {
  const local = inZone(now, s.zone);
  const today = DateTime.utc(local.year, local.month, local.day);
  const { hour, minute } =
    time === undefined || time === 'morning'
      ? { hour: s.morningHour, minute: 0 }
      : time === 'evening'
        ? { hour: s.eveningHour, minute: 0 }
        : time;
  const on = (d: DateTime) => momentAtAfter({ year: d.year, month: d.month, day: d.day, hour, minute }, s.zone, now);
  /** That day's moment, which must still be ahead. */
  const fixed = (d: DateTime): Date => {
    const at = on(d);
    if (at) return at;
    throw new TimeSpecError(
      `that time has passed: ${describeLocal(momentAt({ year: d.year, month: d.month, day: d.day, hour, minute }, s.zone), s.zone)}`,
    );
  };
  /** The first day from `start` that `fits` and whose moment is still ahead. */
  const first = (start: DateTime, fits: (d: DateTime) => boolean): Date => {
    for (let i = 0; i <= 14; i++) {
      const d = start.plus({ days: i });
      const at = fits(d) ? on(d) : undefined;
      if (at) return at;
    }
    throw new TimeSpecError('no such day in the next two weeks');
  };
  switch (day.kind) {
    case 'today':
      return fixed(today);
    case 'tomorrow':
      return fixed(today.plus({ days: 1 }));
    case 'next_time':
      return first(today, () => true);
    case 'weekday':
      return first(today, (d) => d.weekday === day.weekday);
    case 'weekend':
      if (s.weekend.length === 0) throw new TimeSpecError('"weekend": the account has no weekend days');
      return first(today, (d) => s.weekend.includes(d.weekday));
    case 'next_week':
      return fixed(nextWeekStart(today, s.weekend));
    case 'next_month':
      return fixed(today.plus({ months: 1 }).set({ day: 1 }));
    case 'date':
      return onDate(day, today, on, fixed);
  }
}

/** The first business day after the next weekend: Monday for a Saturday–Sunday weekend (with none, Monday). */
function nextWeekStart(today: DateTime, weekend: number[]): DateTime {
  for (let i = 1; ; i++) {
    const d = today.plus({ days: i });
    const prev = d.minus({ days: 1 }).weekday;
    if (weekend.length === 0 ? d.weekday === 1 : !weekend.includes(d.weekday) && weekend.includes(prev)) return d;
  }
}

/** A date with its year: that day. Without ("dec 1"): the next such date whose moment is ahead. */
function onDate(
  day: Extract<DayRef, { kind: 'date' }>,
  today: DateTime,
  on: (d: DateTime) => Date | undefined,
  fixed: (d: DateTime) => Date,
): Date {
  const dateIn = (year: number) => DateTime.utc(year, day.month, day.day);
  if (day.year !== undefined) {
    const d = dateIn(day.year);
    if (!d.isValid || d.day !== day.day)
      throw new TimeSpecError(`${day.year}-${pad(day.month)}-${pad(day.day)} is not a date`);
    return fixed(d);
  }
  // 29 February waits for a leap year; any other date is this year's or next year's.
  for (let year = today.year; year <= today.year + 8; year++) {
    const d = dateIn(year);
    const at = d.isValid && d.day === day.day ? on(d) : undefined;
    if (at) return at;
  }
  throw new TimeSpecError(`month ${day.month}, day ${day.day}: no such date`);
}

const pad = (n: number) => String(n).padStart(2, '0');
