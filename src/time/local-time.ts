// Wall-clock times in an account's IANA time zone, and the daylight-saving rules (docs/time.md).
// Offsets come from luxon (which asks the runtime's Intl time-zone data), never from our own arithmetic.
// Pure and free of Node built-ins: usable in activities and in workflow code.
import { DateTime, IANAZone } from 'luxon';

/** A bad time request: the message says what was wrong and what is accepted. */
export class TimeSpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TimeSpecError';
  }
}

/** A calendar day and a time of day, as the user says it, without a zone. */
export interface LocalDateTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second?: number;
  millisecond?: number;
}

/** A zone name the runtime knows (e.g. "Europe/Berlin", "UTC"), in any case. */
export function isValidZone(zone: string): boolean {
  return zone.length > 0 && zone.length <= 64 && IANAZone.isValidZone(zone);
}

/** The zone's canonical spelling ("europe/berlin" → "Europe/Berlin", "Etc/UTC" → "UTC"), or undefined when unknown. */
export function canonicalZone(zone: string): string | undefined {
  if (!isValidZone(zone)) return undefined;
  return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
}

/** The zone as luxon reads it; an unknown zone is a TimeSpecError (luxon itself would return an invalid date). */
export function requireZone(zone: string): string {
  if (!isValidZone(zone))
    throw new TimeSpecError(
      `unknown time zone ${JSON.stringify(zone.slice(0, 64))} (expected an IANA name such as Europe/Berlin or UTC)`,
    );
  return zone;
}

/** `at` as a date-time in the zone. */
export function inZone(at: Date, zone: string): DateTime {
  return DateTime.fromJSDate(at, { zone: requireZone(zone) });
}

/**
 * Every moment the wall-clock time names in the zone, earliest first:
 * - usually one;
 * - two when the clocks go back and the time happens twice (the earlier first);
 * - when the clocks go forward and the time does not exist, one: the same wall-clock distance after
 *   the gap (02:30 in a 02:00→03:00 gap is 03:30), as RFC 5545, java.time and TC39 Temporal's
 *   "compatible" disambiguation do.
 * An impossible date (31 February) is a TimeSpecError.
 */
export function momentsAt(local: LocalDateTime, zone: string): Date[] {
  const dt = DateTime.fromObject({ second: 0, millisecond: 0, ...local }, { zone: requireZone(zone) });
  if (!dt.isValid)
    throw new TimeSpecError(
      `${formatLocal(local)} is not a date (${dt.invalidExplanation ?? dt.invalidReason ?? 'invalid'})`,
    );
  // luxon gives the later moment of an ambiguous time; getPossibleOffsets lists both.
  return dt
    .getPossibleOffsets()
    .map((d) => d.toJSDate())
    .sort((a, b) => a.getTime() - b.getTime());
}

/** The one moment a wall-clock time names: the earliest of momentsAt (the earlier of a repeated time). */
export function momentAt(local: LocalDateTime, zone: string): Date {
  return momentsAt(local, zone)[0]!;
}

/**
 * The first moment the wall-clock time names that is after `now`, or undefined when all have passed.
 * On the day the clocks go back, a repeated time whose first occurrence has passed still has its second.
 */
export function momentAtAfter(local: LocalDateTime, zone: string, now: Date): Date | undefined {
  return momentsAt(local, zone).find((m) => m.getTime() > now.getTime());
}

/** The calendar day of `dt` as a LocalDateTime at the given time of day. */
export function onDay(dt: DateTime, hour: number, minute: number): LocalDateTime {
  return { year: dt.year, month: dt.month, day: dt.day, hour, minute };
}

export function formatLocal(local: LocalDateTime): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${local.year}-${p(local.month)}-${p(local.day)} ${p(local.hour)}:${p(local.minute)}`;
}

const DAY_FORMAT = 'ccc d LLL yyyy';

/**
 * A moment as a person reads it in the account's zone, with UTC alongside for logs and servers:
 * "Tue 1 Dec 2026 09:00 Europe/Berlin (08:00 UTC)"; the UTC day is named when it differs
 * ("Fri 4 Dec 2026 23:30 America/New_York (Sat 5 Dec 04:30 UTC)").
 */
export function describeLocal(at: Date, zone: string): string {
  const local = inZone(at, zone).setLocale('en-US');
  const utc = DateTime.fromJSDate(at, { zone: 'UTC' }).setLocale('en-US');
  const shown = `${local.toFormat(`${DAY_FORMAT} HH:mm`)} ${local.zoneName}`;
  if (local.offset === 0 && (local.zoneName === 'UTC' || local.zoneName === 'Etc/UTC')) return shown;
  const sameDay = local.toISODate() === utc.toISODate();
  return `${shown} (${utc.toFormat(sameDay ? 'HH:mm' : 'ccc d LLL HH:mm')} UTC)`;
}
