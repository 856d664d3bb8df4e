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

// ---- the rule in words ---------------------------------------------------------------------

const DAY_NAMES: Record<string, string> = { MO: 'Monday', TU: 'Tuesday', WE: 'Wednesday', TH: 'Thursday', FR: 'Friday', SA: 'Saturday', SU: 'Sunday' };
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const UNITS: Record<string, string> = { YEARLY: 'year', MONTHLY: 'month', WEEKLY: 'week', DAILY: 'day', HOURLY: 'hour', MINUTELY: 'minute', SECONDLY: 'second' };
/** The parts describeRecurrence puts in words (WKST changes no occurrence of the rules it describes). */
const DESCRIBED = new Set(['FREQ', 'INTERVAL', 'COUNT', 'UNTIL', 'BYDAY', 'BYMONTHDAY', 'BYMONTH', 'BYSETPOS', 'BYHOUR', 'BYMINUTE', 'BYSECOND', 'WKST']);

/** `a`, `a and b`, `a, b and c`. */
function inWords(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** After "on": Monday and Thursday; weekdays. */
function onDays(names: string[]): string {
  return names.length === 1 && names[0] === 'weekday' ? 'weekdays' : inWords(names);
}

/** 1st, 2nd, 3rd, 11th, 22nd ... */
function ordinal(n: number): string {
  const [tens, ones] = [n % 100, n % 10];
  const suffix = tens >= 11 && tens <= 13 ? 'th' : ones === 1 ? 'st' : ones === 2 ? 'nd' : ones === 3 ? 'rd' : 'th';
  return `${n}${suffix}`;
}

/** A day of the month counted from its end (-1: the last day). */
function fromTheEnd(n: number, what: string): string {
  return n === -1 ? `the last ${what}` : n === -2 ? `the second-to-last ${what}` : `the ${ordinal(-n)}-to-last ${what}`;
}

const WEEKDAY_CODES = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];

/** A BYDAY token: `MO` → Monday; `-1FR` → n -1, Friday. */
function weekdayOf(token: string): { n?: number; name: string } | undefined {
  const m = /^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/.exec(token);
  if (!m) return undefined;
  return m[1] === undefined ? { name: DAY_NAMES[m[2]!]! } : { n: Number(m[1]), name: DAY_NAMES[m[2]!]! };
}

/** the last Friday, the second Tuesday, the 20th Monday. */
function nthWeekdayWords({ n, name }: { n?: number; name: string }): string {
  const nth = ['first', 'second', 'third', 'fourth', 'fifth'][n! - 1];
  return n! < 0 ? fromTheEnd(n!, name) : nth ? `the ${nth} ${name}` : `the ${ordinal(n!)} ${name}`;
}

/** After "29 February" and the like: what happens in a year whose month is shorter. */
function shorterMonthNote(day: number, months: number[]): string {
  if (months.length === 1 && months[0] === 2 && day === 29) return ' (28 February in other years)';
  const shortest = Math.min(...months.map((m) => DateTime.utc(2023, m, 1).daysInMonth ?? 31));
  return day > shortest ? " (or the month's last day when it is shorter)" : '';
}

function numbers(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  const list = value.split(',').map(Number);
  return list.every(Number.isInteger) ? list : undefined;
}

/**
 * The CLI's "day N, or the month's last day when it is shorter" (BYMONTHDAY=28,...,N;BYSETPOS=-1, N
 * past 28): N; otherwise undefined.
 */
function dayOrLastDay(days: number[], setpos: number[] | undefined): number | undefined {
  const last = days.at(-1)!;
  const shape = setpos?.length === 1 && setpos[0] === -1 && days.every((d, i) => d === 28 + i) && last > 28;
  return shape ? last : undefined;
}

/** Days of the month: `the 1st and 15th`, `the last day`, `the 31st (or the last day of a shorter month)`. */
function monthDayWords(days: number[], setpos: number[] | undefined): string | undefined {
  if (setpos !== undefined) {
    const day = dayOrLastDay(days, setpos);
    return day === undefined ? undefined : `the ${ordinal(day)} (or the last day of a shorter month)`;
  }
  const positive = days.filter((d) => d > 0).map(ordinal);
  const negative = days.filter((d) => d < 0).map((d) => fromTheEnd(d, 'day'));
  return positive.length > 0 ? inWords([`the ${inWords(positive)}`, ...negative]) : inWords(negative);
}

function clock(hour: number, minute: number, second: number): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(hour)}:${pad(minute)}${second ? `:${pad(second)}` : ''}`;
}

/**
 * The rule in words a person would use, from its parts, the time of day said once: "every day at
 * 15:47", "every Monday and Thursday at 08:15", "every month on the last Friday at 17:00", "every
 * year on 24 December at 07:00", "once on 2026-12-01 at 09:00". Parts it cannot put in words are
 * shown as the rule itself, after the words. The one describer of `reminders add`, `list`, `show`
 * and the reminder e-mail.
 */
export function describeRecurrence(recurrence: Pick<Recurrence, 'rrule' | 'startLocal'>): string {
  const rule = ruleOf({ rrule: recurrence.rrule, startLocal: recurrence.startLocal });
  const parts = new Map(
    recurrence.rrule
      .replace(/^RRULE:/i, '')
      .split(';')
      .filter((p) => p.includes('='))
      .map((p) => [p.slice(0, p.indexOf('=')).toUpperCase(), p.slice(p.indexOf('=') + 1).toUpperCase()] as [string, string]),
  );
  const start = DateTime.fromISO(recurrence.startLocal, { zone: 'utc' });
  const freq = parts.get('FREQ') ?? '';
  const unit = UNITS[freq] ?? 'day';
  const interval = Number(parts.get('INTERVAL') ?? 1);
  const count = Number(parts.get('COUNT') ?? 0);
  const untouched = [...parts.keys()].filter((k) => !DESCRIBED.has(k));
  let unsaid = untouched.length > 0;

  const byday = parts.get('BYDAY')?.split(',').map(weekdayOf);
  if (byday?.some((d) => d === undefined)) unsaid = true;
  const days = (byday ?? []).filter((d): d is { n?: number; name: string } => d !== undefined);
  const plainNames = days.filter((d) => d.n === undefined).map((d) => d.name);
  const workWeek = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'];
  const plainDays = plainNames.length === 5 && workWeek.every((d) => plainNames.includes(d)) ? ['weekday'] : plainNames;
  const nthDays = days.filter((d) => d.n !== undefined).map(nthWeekdayWords);
  if (plainDays.length > 0 && nthDays.length > 0) unsaid = true;
  const monthDays = numbers(parts.get('BYMONTHDAY'));
  const months = numbers(parts.get('BYMONTH'))?.map((m) => MONTH_NAMES[m - 1] ?? String(m));
  const setpos = numbers(parts.get('BYSETPOS'));
  const dayOfMonth = monthDays ? monthDayWords(monthDays, setpos) : undefined;
  if ((monthDays && !dayOfMonth) || (setpos && !monthDays)) unsaid = true;
  const every = interval > 1 ? `every ${interval} ${unit}s` : `every ${unit}`;
  // Plain weekdays in a monthly or yearly rule: every such day of the months it runs in.
  const everyPlainDay = interval > 1 ? `${every}, on every ${inWords(plainDays)}` : `every ${inWords(plainDays)}`;

  let words: string;
  const subDaily = freq === 'HOURLY' || freq === 'MINUTELY' || freq === 'SECONDLY';
  if (count === 1) {
    const first = rule.after(new Date(start.toMillis() - 1), true);
    words = `once on ${first ? DateTime.fromJSDate(first, { zone: 'utc' }).toISODate() : start.toISODate()}`;
  } else if (untouched.length > 0) {
    words = every; // parts this describer does not know: the rule itself says when
  } else if (subDaily) {
    words = `${every} from ${clock(start.hour, start.minute, start.second)}`;
    if (['BYDAY', 'BYMONTHDAY', 'BYMONTH', 'BYHOUR', 'BYMINUTE', 'BYSECOND'].some((k) => parts.has(k))) unsaid = true;
  } else if (freq === 'WEEKLY') {
    const names = plainDays.length > 0 ? plainDays : [DAY_NAMES[WEEKDAY_CODES[start.weekday - 1]!]!];
    words = interval > 1 ? `${every} on ${onDays(names)}` : `every ${inWords(names)}`;
    if (nthDays.length > 0 || monthDays || months) unsaid = true;
  } else if (freq === 'DAILY') {
    words = plainDays.length === 0 ? every : interval > 1 ? `${every}, on ${onDays(plainDays)}` : `every ${inWords(plainDays)}`;
    if (dayOfMonth) words += ` on ${dayOfMonth}`;
    if (months) words += ` in ${inWords(months)}`;
    if (nthDays.length > 0) unsaid = true;
  } else if (freq === 'MONTHLY') {
    if (dayOfMonth) words = `${every} on ${dayOfMonth}${plainDays.length > 0 ? ` when it is a ${inWords(plainDays).replace(/ and (\w+)$/, ' or $1')}` : ''}`;
    else if (nthDays.length > 0) words = `${every} on ${inWords(nthDays)}`;
    else if (plainDays.length > 0) words = everyPlainDay;
    else words = `${every} on the ${ordinal(start.day)}`;
    if (months) words += ` in ${inWords(months)}`;
    if (dayOfMonth && nthDays.length > 0) unsaid = true;
  } else {
    // Yearly: a date (24 December), a weekday of a month (the last Friday of November), a day of a month.
    const monthList = inWords(months ?? [MONTH_NAMES[start.month - 1]!]);
    const single = monthDays?.length === 1 && monthDays[0]! > 0 && !setpos ? monthDays[0] : undefined;
    const orLast = monthDays && setpos ? dayOrLastDay(monthDays, setpos) : undefined;
    if (nthDays.length > 0 && !monthDays) words = `${every} on ${inWords(nthDays)} of ${months ? monthList : 'the year'}`;
    else if (plainDays.length > 0 && !monthDays) words = `${everyPlainDay}${months ? ` in ${monthList}` : ''}`;
    else if (single !== undefined) words = `${every} on ${single} ${monthList}`;
    else if (orLast !== undefined) words = `${every} on ${orLast} ${monthList}${shorterMonthNote(orLast, months ? numbers(parts.get('BYMONTH'))! : [start.month])}`;
    else if (dayOfMonth) words = `${every} on ${dayOfMonth} of ${monthList}`;
    else words = `${every} on ${start.day} ${monthList}`;
    if (days.length > 0 && monthDays) unsaid = true;
  }

  if (!subDaily) {
    const hours = numbers(parts.get('BYHOUR')) ?? [start.hour];
    const minutes = numbers(parts.get('BYMINUTE')) ?? [start.minute];
    const seconds = numbers(parts.get('BYSECOND')) ?? [start.second];
    const times = hours.flatMap((h) => minutes.flatMap((m) => seconds.map((sec) => [h, m, sec] as const)));
    times.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
    words += ` at ${inWords(times.map(([h, m, sec]) => clock(h, m, sec)))}`;
  }
  if (count > 1) words += `, ${count} times`;
  const until = parts.get('UNTIL');
  if (until) {
    const end = DateTime.fromFormat(until.replace(/Z$/, ''), until.length > 8 ? "yyyyMMdd'T'HHmmss" : 'yyyyMMdd', { zone: 'utc' });
    if (end.isValid) words += `, until ${end.toISODate()}${end.hour || end.minute || end.second ? ` ${clock(end.hour, end.minute, end.second)}` : ''}`;
    else unsaid = true;
  }
  return unsaid ? `${words} (as the rule says: ${recurrence.rrule})` : words;
}
