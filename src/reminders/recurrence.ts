// When a reminder is due: RFC 5545 recurrence (the `rrule` library) in the reminder's IANA time zone
// (luxon). Pure: the activities and the CLI call it; workflow code never does.
//
// The rule runs in floating local time (rrule's own advice for zoned rules): DTSTART and every
// occurrence are wall-clock times of the zone, and each is turned into an instant afterwards. So
// "09:00" stays 09:00 across daylight saving, and the two edges are decided here, once:
// - a wall-clock time that does not exist (clocks go forward, 02:30 on the last Sunday of March in
//   Europe/Berlin) is moved forward by the gap: 03:30, one occurrence;
// - a wall-clock time that happens twice (clocks go back, 02:30 on the last Sunday of October) is
//   the earlier of the two: 02:30 summer time, one occurrence, never two
// (src/time's momentAt, the rules of docs/time.md).
// Two occurrences that land on the same instant (an hourly rule on the gap's hour) are one.
import { DateTime } from 'luxon';
import rrulePackage from 'rrule';
import type { Options as RRuleOptions, RRule as RRuleType } from 'rrule';
import { isValidZone, momentAt } from '../time/index.js';

export { isValidZone };

// rrule's ESM build is not what Node loads (its package.json has no "exports"): the CommonJS default.
const { RRule } = rrulePackage;

/** A reminder's recurrence as stored: the RRULE (no DTSTART, no TZID) and DTSTART as local wall-clock time. */
export interface Recurrence {
  rrule: string;
  /** `YYYY-MM-DDTHH:MM:SS`, wall-clock time of the reminder's zone. */
  startLocal: string;
}

export interface Occurrence {
  /** The instant it is due. */
  at: Date;
  /** The wall-clock time in the zone when it is due, `YYYY-MM-DDTHH:MM` (seconds when not zero). */
  local: string;
}

export class RecurrenceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecurrenceError';
  }
}

const WEEKDAYS = { monday: 'MO', tuesday: 'TU', wednesday: 'WE', thursday: 'TH', friday: 'FR', saturday: 'SA', sunday: 'SU' } as const;
const ORDINALS = { first: 1, second: 2, third: 3, fourth: 4, fifth: 5, last: -1 } as const;
const FREQUENCIES = { day: 'DAILY', week: 'WEEKLY', month: 'MONTHLY', year: 'YEARLY' } as const;

export type Every = keyof typeof FREQUENCIES;
export const EVERY_VALUES = Object.keys(FREQUENCIES) as Every[];

/** What `reminders add` is told. */
export interface RecurrenceSpec {
  /** Time of day, `HH:MM` or `HH:MM:SS` (24 h). */
  at: string;
  /** Unset: once. */
  every?: Every;
  /** Which days (see docs): `1`..`31` or `last` (month), `last-friday` / `first-monday` (month), `mon,thu` (week), `12-24` (year). */
  on?: string;
  /** Every N days/weeks/months/years. */
  interval?: number;
  /** The first day it may fire, `YYYY-MM-DD`; default: today (once: today, or tomorrow when the time has passed). */
  start?: string;
  /** A whole RFC 5545 RRULE instead of every/on/interval, e.g. `FREQ=MONTHLY;BYDAY=-1FR`. */
  rrule?: string;
}

/** The recurrence a spec describes, anchored in `zone` at `now`. Throws RecurrenceError for bad input. */
export function recurrenceFromSpec(spec: RecurrenceSpec, zone: string, now: Date): Recurrence {
  const time = parseTime(spec.at);
  const today = DateTime.fromJSDate(now, { zone });
  let startDay = spec.start === undefined ? today.startOf('day') : parseDay(spec.start, zone);
  const startLocal = `${startDay.toISODate()}T${time.text}`;
  if (spec.rrule !== undefined) {
    if (spec.every !== undefined || spec.on !== undefined || spec.interval !== undefined) {
      throw new RecurrenceError('--rrule replaces --every, --on and --interval: give one or the other');
    }
    return checked({ rrule: normalizeRrule(spec.rrule), startLocal }, zone);
  }
  const parts: string[] = [];
  if (spec.every === undefined) {
    if (spec.on !== undefined || spec.interval !== undefined) throw new RecurrenceError('--on and --interval need --every');
    // Once: on the start day, or, without one, at the next such time.
    if (spec.start === undefined && instantOf(startDay.set(time.fields), zone) <= now) startDay = startDay.plus({ days: 1 });
    return checked({ rrule: `FREQ=DAILY;COUNT=1;BYHOUR=${time.fields.hour};BYMINUTE=${time.fields.minute};BYSECOND=${time.fields.second}`, startLocal: `${startDay.toISODate()}T${time.text}` }, zone);
  }
  parts.push(`FREQ=${FREQUENCIES[spec.every]}`);
  if (spec.interval !== undefined) {
    if (!Number.isInteger(spec.interval) || spec.interval < 1 || spec.interval > 1000) throw new RecurrenceError('--interval: expected a whole number from 1 to 1000');
    if (spec.interval > 1) parts.push(`INTERVAL=${spec.interval}`);
  }
  if (spec.on !== undefined) parts.push(...daysPart(spec.every, spec.on));
  parts.push(`BYHOUR=${time.fields.hour}`, `BYMINUTE=${time.fields.minute}`, `BYSECOND=${time.fields.second}`);
  return checked({ rrule: parts.join(';'), startLocal }, zone);
}

/** The BY... parts for --on. Day 29..31 of a month means that day, or the month's last day when it is shorter. */
function daysPart(every: Every, on: string): string[] {
  const text = on.trim().toLowerCase();
  if (every === 'day') throw new RecurrenceError('--on does not apply to --every day');
  if (every === 'week') {
    const days = text.split(',').map((d) => weekdayCode(d.trim()));
    return [`BYDAY=${days.join(',')}`];
  }
  if (every === 'year') {
    const m = /^(\d{1,2})-(\d{1,2})$/.exec(text);
    if (!m) throw new RecurrenceError(`--on for --every year: expected MM-DD, e.g. 12-24 (got ${JSON.stringify(on)})`);
    const month = Number(m[1]);
    const day = Number(m[2]);
    const longest = DateTime.utc(2024, month, 1).daysInMonth; // a leap year: 02-29 is allowed
    if (month < 1 || month > 12 || longest === undefined || day < 1 || day > longest) throw new RecurrenceError(`--on ${on}: no such day`);
    return [`BYMONTH=${month}`, ...monthDays(day)];
  }
  if (text === 'last') return ['BYMONTHDAY=-1'];
  if (/^\d{1,2}$/.test(text)) {
    const day = Number(text);
    if (day < 1 || day > 31) throw new RecurrenceError(`--on ${on}: a day of the month is 1 to 31`);
    return monthDays(day);
  }
  const m = /^(first|second|third|fourth|fifth|last)-([a-z]+)$/.exec(text);
  if (!m) throw new RecurrenceError(`--on for --every month: expected a day 1-31, last, or e.g. last-friday, first-monday (got ${JSON.stringify(on)})`);
  return [`BYDAY=${ORDINALS[m[1] as keyof typeof ORDINALS]}${weekdayCode(m[2]!)}`];
}

/** Day N of the month; past the 28th, "or the month's last day" (RFC 5545 alone would skip short months). */
function monthDays(day: number): string[] {
  if (day <= 28) return [`BYMONTHDAY=${day}`];
  const candidates = Array.from({ length: day - 27 }, (_, i) => 28 + i);
  return [`BYMONTHDAY=${candidates.join(',')}`, 'BYSETPOS=-1'];
}

function weekdayCode(name: string): string {
  const match = (Object.keys(WEEKDAYS) as (keyof typeof WEEKDAYS)[]).find((d) => name.length >= 2 && d.startsWith(name));
  if (!match) throw new RecurrenceError(`expected a weekday (monday ... sunday, or mo, tu, ...), got ${JSON.stringify(name)}`);
  return WEEKDAYS[match];
}

function parseTime(text: string): { text: string; fields: { hour: number; minute: number; second: number } } {
  const m = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(text.trim());
  const [hour, minute, second] = m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : [NaN, NaN, NaN];
  if (!m || hour > 23 || minute > 59 || second > 59) throw new RecurrenceError(`--at: expected a time of day HH:MM (24 h), got ${JSON.stringify(text)}`);
  const pad = (n: number) => String(n).padStart(2, '0');
  return { text: `${pad(hour)}:${pad(minute)}:${pad(second)}`, fields: { hour, minute, second } };
}

function parseDay(text: string, zone: string): DateTime {
  const day = /^\d{4}-\d{2}-\d{2}$/.test(text.trim()) ? DateTime.fromISO(text.trim(), { zone }) : undefined;
  if (!day?.isValid) throw new RecurrenceError(`--start: expected a date YYYY-MM-DD, got ${JSON.stringify(text)}`);
  return day.startOf('day');
}

/** An RRULE as the user gave it, checked: FREQ required; DTSTART and TZID come from --start/--at and --tz. */
function normalizeRrule(text: string): string {
  const body = text.trim().replace(/^RRULE:/i, '');
  if (body.length === 0 || body.length > 500 || /[\r\n]/.test(body)) throw new RecurrenceError('--rrule: expected one RRULE line, e.g. FREQ=MONTHLY;BYDAY=-1FR');
  if (/(^|;)\s*(DTSTART|TZID)\s*[=:]/i.test(body)) throw new RecurrenceError('--rrule: give the start with --start/--at and the zone with --tz, not in the rule');
  let options: Partial<RRuleOptions>;
  try {
    options = RRule.parseString(body);
  } catch (err) {
    throw new RecurrenceError(`--rrule: ${(err as Error).message}`);
  }
  if (options.freq === undefined) throw new RecurrenceError('--rrule: FREQ is required');
  return new RRule(options).toString().replace(/^RRULE:/, '');
}

/** A recurrence that parses and has the zone it needs. */
function checked(recurrence: Recurrence, zone: string): Recurrence {
  if (!isValidZone(zone)) throw new RecurrenceError(`not an IANA time zone: ${JSON.stringify(zone)} (e.g. Europe/Berlin)`);
  ruleOf(recurrence);
  return recurrence;
}

function ruleOf(recurrence: Recurrence): RRuleType {
  const start = DateTime.fromISO(recurrence.startLocal, { zone: 'utc' });
  if (!start.isValid) throw new RecurrenceError(`bad start ${JSON.stringify(recurrence.startLocal)}`);
  try {
    return new RRule({ ...RRule.parseString(recurrence.rrule), dtstart: start.toJSDate() });
  } catch (err) {
    throw new RecurrenceError(`bad rule ${JSON.stringify(recurrence.rrule)}: ${(err as Error).message}`);
  }
}

/** A wall-clock time of the zone as an instant, by the rules of src/time: a gap moves it forward, an overlap takes the earlier. */
function instantOf(local: DateTime, zone: string): Date {
  return momentAt({ year: local.year, month: local.month, day: local.day, hour: local.hour, minute: local.minute, second: local.second }, zone);
}

/** The wall-clock time the clock shows at the instant (03:30 for a 02:30 moved past the gap). */
function localText(at: Date, zone: string): string {
  const local = DateTime.fromJSDate(at, { zone });
  return local.toFormat(local.second === 0 ? "yyyy-MM-dd'T'HH:mm" : "yyyy-MM-dd'T'HH:mm:ss");
}

/**
 * The next `limit` occurrences strictly after `after`, in order. The search starts a few hours
 * before `after` in floating time, since the wall clock and the instant differ by the zone's offset.
 */
export function occurrencesAfter(recurrence: Recurrence, zone: string, after: Date, limit: number): Occurrence[] {
  if (!isValidZone(zone)) throw new RecurrenceError(`not an IANA time zone: ${JSON.stringify(zone)}`);
  const rule = ruleOf(recurrence);
  const wallAfter = DateTime.fromJSDate(after, { zone });
  // Floating form of `after`, less a margin wider than any offset change (zones move by at most 2 h at once).
  let cursor = new Date(Date.UTC(wallAfter.year, wallAfter.month - 1, wallAfter.day, wallAfter.hour, wallAfter.minute, wallAfter.second) - 3 * 3600_000);
  const found: Occurrence[] = [];
  let last = after.getTime();
  for (let guard = 0; found.length < limit && guard < limit + 1000; guard++) {
    const next = rule.after(cursor, false);
    if (!next) break;
    cursor = next;
    const at = instantOf(DateTime.fromJSDate(next, { zone: 'utc' }), zone);
    if (at.getTime() <= last) continue; // before `after`, or the same instant as the one before
    last = at.getTime();
    found.push({ at, local: localText(at, zone) });
  }
  return found;
}

export function nextOccurrence(recurrence: Recurrence, zone: string, after: Date): Occurrence | undefined {
  return occurrencesAfter(recurrence, zone, after, 1)[0];
}

/** The rule in words, as rrule says it, with the time of day: "every month on the 1st at 09:00". */
export function describeRecurrence(recurrence: Recurrence): string {
  const rule = ruleOf(recurrence);
  const { byhour, byminute, bysecond, freq } = rule.options;
  if (freq === RRule.HOURLY || freq === RRule.MINUTELY || freq === RRule.SECONDLY) return rule.toText();
  const pad = (n: number) => String(n).padStart(2, '0');
  const [hour, minute, second] = [byhour ?? [], byminute ?? [], bysecond ?? []];
  const at =
    hour.length === 1 && minute.length === 1
      ? `${pad(hour[0]!)}:${pad(minute[0]!)}${second[0] ? `:${pad(second[0])}` : ''}`
      : recurrence.startLocal.slice(11, 16);
  return `${rule.toText()} at ${at}`;
}
