// Reading what a user types or puts in a label ("3 days", "tomorrow 9:00", "next week") into a
// structure; resolving it to a moment is when.ts's job. A small fixed grammar (docs/time.md lists it):
// the text is bounded, lower-cased and split into words; no regular expression is built from it.
import { TimeSpecError } from './local-time.js';

/** Longest text read; a longer one is refused before any parsing. */
export const MAX_WHEN_TEXT = 100;

export interface DurationParts {
  months: number;
  weeks: number;
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
}

/** A time of day, or the account's morning / evening hour. */
export type TimeOfDay = { hour: number; minute: number } | 'morning' | 'evening';

/** Which day a moment is on, before the account's zone and the current time say which date that is. */
export type DayRef =
  | { kind: 'date'; year?: number; month: number; day: number } // 2026-12-01, 1 dec 2026, dec 1
  | { kind: 'today' }
  | { kind: 'tomorrow' }
  | { kind: 'next_time' } // a bare time: today if still ahead, else tomorrow
  | { kind: 'weekday'; weekday: number } // the next such day (today if the time is still ahead)
  | { kind: 'weekend' } // the next weekend day whose time is ahead
  | { kind: 'next_week' } // the first business day after the next weekend (Monday for a Sat/Sun weekend)
  | { kind: 'next_month' }; // the 1st of next month

export type ParsedWhen =
  | { type: 'duration'; parts: DurationParts }
  | { type: 'business_days'; days: number }
  | { type: 'moment'; day: DayRef; time?: TimeOfDay };

const HELP =
  'expected a duration (3d, 2 hours, 1 week), business days (3 business days), a date or time ' +
  '(2026-12-01 09:00, 09:00, 9am, tomorrow 9:00, monday 8:00) or a phrase (tomorrow, next week, this evening, weekend)';

export function cannotRead(text: string, why = HELP): TimeSpecError {
  return new TimeSpecError(`cannot read ${JSON.stringify(text.slice(0, MAX_WHEN_TEXT))} as a time: ${why}`);
}

/** The words of a text: trimmed, lower case, single spaces; refused when empty or too long. */
export function normalizeWhenText(text: string): string {
  if (text.length > MAX_WHEN_TEXT * 2) throw cannotRead(text, `longer than ${MAX_WHEN_TEXT} characters`);
  const words = text
    .trim()
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .join(' ')
    .replace(/^(\d{4}-\d{2}-\d{2})t(?=\d)/, '$1 '); // ISO 8601's "T" between date and time
  if (words.length === 0) throw new TimeSpecError(`an empty time: ${HELP}`);
  if (words.length > MAX_WHEN_TEXT) throw cannotRead(text, `longer than ${MAX_WHEN_TEXT} characters`);
  return words;
}

/** Reads any accepted form; a TimeSpecError says what is accepted. */
export function parseWhenText(text: string): ParsedWhen {
  const words = normalizeWhenText(text);
  const relative = words.startsWith('in ') ? words.slice(3) : undefined;
  const business = readBusinessDays(relative ?? words);
  if (business !== undefined) return { type: 'business_days', days: business };
  const duration = readDuration(relative ?? words);
  if (duration) return { type: 'duration', parts: duration };
  if (relative !== undefined)
    throw cannotRead(text, 'expected a duration after "in" (in 3 days, in 2 hours, in 3 business days)');
  const moment = readMoment(words);
  if (moment) return moment;
  throw cannotRead(text);
}

// ---- durations ---------------------------------------------------------------------------------

// Maps, not object literals: a word such as "constructor" must not find Object.prototype's members.
const UNITS = new Map<string, keyof DurationParts>(
  Object.entries({
    seconds: ['s', 'sec', 'secs', 'second', 'seconds'],
    minutes: ['m', 'min', 'mins', 'minute', 'minutes'],
    hours: ['h', 'hr', 'hrs', 'hour', 'hours'],
    days: ['d', 'day', 'days'],
    weeks: ['w', 'wk', 'wks', 'week', 'weeks'],
    months: ['mo', 'mos', 'month', 'months'],
  } satisfies Record<keyof DurationParts, string[]>).flatMap(([unit, names]) =>
    names.map((n) => [n, unit as keyof DurationParts]),
  ),
);

/** "3d", "90 minutes", "1h30m", "1 day 2 hours", "a week"; undefined when the text is not a duration. */
export function readDuration(words: string): DurationParts | undefined {
  const text = words.replace(/^an? (?=[a-z])/, '1 ');
  const parts: DurationParts = { months: 0, weeks: 0, days: 0, hours: 0, minutes: 0, seconds: 0 };
  // One "<number> <unit>" at a time, each anchored where the last ended (sticky): linear, no backtracking.
  const part = /(\d{1,4}) ?([a-z]{1,7})(?:,? and |, | )?/y;
  let seen = 0;
  while (part.lastIndex < text.length) {
    const m = part.exec(text);
    if (!m) return undefined;
    const unit = UNITS.get(m[2]!);
    if (!unit) return undefined;
    parts[unit] += Number(m[1]);
    seen++;
  }
  if (seen === 0) return undefined;
  if (Object.values(parts).every((n) => n === 0)) throw cannotRead(words, 'a duration must be longer than zero');
  return parts;
}

/** "3 business days", "1 working day"; undefined otherwise. */
function readBusinessDays(words: string): number | undefined {
  const w = words.split(' ');
  if (
    w.length !== 3 ||
    !/^\d{1,3}$/.test(w[0]!) ||
    !['business', 'working', 'work'].includes(w[1]!) ||
    !['day', 'days'].includes(w[2]!)
  )
    return undefined;
  const days = Number(w[0]);
  if (days < 1) throw cannotRead(words, 'business days must be at least 1');
  return days;
}

// ---- moments: [day] [at] [time] ------------------------------------------------------------------

const WEEKDAYS = new Map<string, number>(
  [
    ['mon', 'monday'],
    ['tue', 'tues', 'tuesday'],
    ['wed', 'wednesday'],
    ['thu', 'thur', 'thurs', 'thursday'],
    ['fri', 'friday'],
    ['sat', 'saturday'],
    ['sun', 'sunday'],
  ].flatMap((names, i) => names.map((n) => [n, i + 1] as const)),
);
const MONTHS = new Map<string, number>(
  [
    ['jan', 'january'],
    ['feb', 'february'],
    ['mar', 'march'],
    ['apr', 'april'],
    ['may'],
    ['jun', 'june'],
    ['jul', 'july'],
    ['aug', 'august'],
    ['sep', 'sept', 'september'],
    ['oct', 'october'],
    ['nov', 'november'],
    ['dec', 'december'],
  ].flatMap((names, i) => names.map((n) => [n, i + 1] as const)),
);

function readMoment(words: string): ParsedWhen | undefined {
  // A trailing bare number is an hour after a day ("tomorrow 9") but a day after a month ("dec 1").
  return readMomentWith(words, true) ?? readMomentWith(words, false);
}

function readMomentWith(words: string, bareHour: boolean): ParsedWhen | undefined {
  const w = words.split(' ');
  const time = takeTime(w, bareHour);
  if (w[w.length - 1] === 'at') w.pop();
  const day = readDay(w, time);
  if (!day) return undefined;
  if (day === 'evening') return { type: 'moment', day: { kind: 'next_time' }, time: time ?? 'evening' };
  if (day === 'tonight')
    return { type: 'moment', day: time ? { kind: 'today' } : { kind: 'next_time' }, time: time ?? 'evening' };
  return { type: 'moment', day, ...(time ? { time } : {}) };
}

/** Removes a trailing time of day from the words ("9:00", "9am", "9 pm", "noon", "morning"); returns it. */
function takeTime(w: string[], bareHour: boolean): TimeOfDay | undefined {
  const last = w[w.length - 1];
  if (last === undefined) return undefined;
  if (last === 'morning' || last === 'evening' || last === 'noon') {
    // "this evening" and a lone "evening" are a day phrase, read by readDay.
    if (last === 'evening' && (w.length === 1 || (w.length === 2 && w[0] === 'this'))) return undefined;
    w.pop();
    return last === 'noon' ? { hour: 12, minute: 0 } : last;
  }
  if ((last === 'am' || last === 'pm') && w.length >= 2) {
    const t = clockTime(`${w[w.length - 2]}${last}`, w.length > 2);
    if (t) w.splice(-2, 2);
    return t;
  }
  const t = clockTime(last, bareHour && w.length > 1);
  if (t) w.pop();
  return t;
}

/** "9:00", "09:30", "9.30", "9am", "9:30pm"; a bare hour ("9") only after a day ("tomorrow 9"). */
function clockTime(token: string, afterDay: boolean): { hour: number; minute: number } | undefined {
  const m = /^(\d{1,2})(?:[:.](\d{2}))?(am|pm)?$/.exec(token);
  if (!m) return undefined;
  const [, h, min, meridiem] = m;
  if (min === undefined && meridiem === undefined && !afterDay) return undefined;
  let hour = Number(h);
  const minute = min === undefined ? 0 : Number(min);
  if (minute > 59) throw cannotRead(token, 'minutes go to 59');
  if (meridiem) {
    if (hour < 1 || hour > 12) throw cannotRead(token, 'a 12-hour clock time runs from 1 to 12 (am/pm)');
    hour = (hour % 12) + (meridiem === 'pm' ? 12 : 0);
  } else if (hour > 23) {
    throw cannotRead(token, 'hours go to 23');
  }
  return { hour, minute };
}

function readDay(w: string[], time: TimeOfDay | undefined): DayRef | 'evening' | 'tonight' | undefined {
  const text = w.join(' ');
  switch (text) {
    case '':
      return time ? { kind: 'next_time' } : undefined;
    case 'today':
      return { kind: 'today' };
    case 'tomorrow':
    case 'tmrw':
      return { kind: 'tomorrow' };
    case 'tonight':
      return 'tonight';
    case 'evening':
    case 'this evening':
      return time ? undefined : 'evening';
    case 'next week':
      return { kind: 'next_week' };
    case 'weekend':
    case 'this weekend':
      return { kind: 'weekend' };
    case 'next month':
      return { kind: 'next_month' };
  }
  const named = w[0] === 'next' || w[0] === 'this' || w[0] === 'on' ? w.slice(1) : w;
  const weekday = named.length === 1 ? WEEKDAYS.get(named[0]!) : undefined;
  if (weekday !== undefined) return { kind: 'weekday', weekday };
  return readDate(w);
}

/** "2026-12-01", "1 dec 2026", "1 december", "dec 1", "dec 1 2026". */
function readDate(w: string[]): DayRef | undefined {
  if (w.length === 1) {
    const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(w[0]!);
    return iso ? { kind: 'date', year: Number(iso[1]), month: Number(iso[2]), day: Number(iso[3]) } : undefined;
  }
  if (w.length !== 2 && w.length !== 3) return undefined;
  const [a, b, c] = w as [string, string, string | undefined];
  const [dayText, monthText] = MONTHS.has(b) ? [a, b] : [b, a];
  const month = MONTHS.get(monthText);
  if (month === undefined || !/^\d{1,2}$/.test(dayText) || (c !== undefined && !/^\d{4}$/.test(c))) return undefined;
  return { kind: 'date', month, day: Number(dayText), ...(c !== undefined ? { year: Number(c) } : {}) };
}
