// The time module's "when": what users type or label, resolved in the account's zone.
import { describe, expect, it } from 'vitest';
import {
  describeLocal,
  parseWhen,
  resolveWhen,
  TimeSpecError,
  type TimeSettings,
  type WhenSpec,
} from '../../src/time/index.js';

const berlin: TimeSettings = { zone: 'Europe/Berlin', morningHour: 9, eveningHour: 18, weekend: [6, 7] };
const at = (iso: string) => new Date(iso);
const resolve = (text: string, now: string, settings = berlin) =>
  resolveWhen(parseWhen(text), at(now), settings).toISOString();

describe('"tomorrow 9:00" in Europe/Berlin', () => {
  it('is 08:00 UTC in winter (CET, UTC+1)', () => {
    expect(resolveWhen({ kind: 'at', local: 'tomorrow 9:00' }, at('2026-12-10T15:00:00Z'), berlin).toISOString()).toBe(
      '2026-12-11T08:00:00.000Z',
    );
  });

  it('is 07:00 UTC in summer (CEST, UTC+2)', () => {
    expect(resolveWhen({ kind: 'at', local: 'tomorrow 9:00' }, at('2026-07-10T15:00:00Z'), berlin).toISOString()).toBe(
      '2026-07-11T07:00:00.000Z',
    );
  });

  it('counts "tomorrow" from the account’s date, not UTC’s: 00:30 Berlin is still the previous day in UTC', () => {
    // 2026-12-10 23:30 UTC is Friday 11 December 00:30 in Berlin: tomorrow is the 12th.
    expect(resolve('tomorrow 9:00', '2026-12-10T23:30:00Z')).toBe('2026-12-12T08:00:00.000Z');
  });

  it('"tomorrow" alone is the account’s morning hour, a setting', () => {
    expect(resolve('tomorrow', '2026-12-10T15:00:00Z')).toBe('2026-12-11T08:00:00.000Z');
    expect(resolve('tomorrow', '2026-12-10T15:00:00Z', { ...berlin, morningHour: 7 })).toBe('2026-12-11T06:00:00.000Z');
  });
});

describe('parseWhen', () => {
  it.each<[string, WhenSpec]>([
    ['3d', { kind: 'in', duration: '3d' }],
    ['in 2 hours', { kind: 'in', duration: '2 hours' }],
    ['90 Minutes', { kind: 'in', duration: '90 minutes' }],
    ['1 week', { kind: 'in', duration: '1 week' }],
    ['3 days', { kind: 'in', duration: '3 days' }],
    ['3 business days', { kind: 'business_days', days: 3 }],
    ['2 working days', { kind: 'business_days', days: 2 }],
    ['Tomorrow', { kind: 'phrase', phrase: 'tomorrow' }],
    ['Next week', { kind: 'phrase', phrase: 'next week' }],
    ['this  evening', { kind: 'phrase', phrase: 'this evening' }],
    ['monday', { kind: 'phrase', phrase: 'monday' }],
    ['Tomorrow 8:00', { kind: 'at', local: 'tomorrow 8:00' }],
    ['2026-12-01T09:00', { kind: 'at', local: '2026-12-01 09:00' }],
    ['09:00', { kind: 'at', local: '09:00' }],
    ['dec 1', { kind: 'at', local: 'dec 1' }],
  ])('%s → %j', (text, spec) => {
    expect(parseWhen(text)).toEqual(spec);
  });
});

describe('resolveWhen, from Wednesday 25 November 2026 16:00 in Berlin', () => {
  const now = '2026-11-25T15:00:00Z';
  it.each([
    ['3d', '2026-11-28T15:00:00.000Z'],
    ['1h30m', '2026-11-25T16:30:00.000Z'],
    ['2 days and 3 hours', '2026-11-27T18:00:00.000Z'],
    ['a week', '2026-12-02T15:00:00.000Z'],
    ['1 month', '2026-12-25T15:00:00.000Z'],
    ['next week', '2026-11-30T08:00:00.000Z'], // Monday morning
    ['this evening', '2026-11-25T17:00:00.000Z'],
    ['tonight', '2026-11-25T17:00:00.000Z'],
    ['tomorrow evening', '2026-11-26T17:00:00.000Z'],
    ['weekend', '2026-11-28T08:00:00.000Z'], // Saturday morning
    ['next month', '2026-12-01T08:00:00.000Z'],
    ['wednesday', '2026-12-02T08:00:00.000Z'], // today's morning has passed: next Wednesday
    ['wednesday 17:00', '2026-11-25T16:00:00.000Z'], // today, still ahead
    ['friday noon', '2026-11-27T11:00:00.000Z'],
    ['monday 8:00', '2026-11-30T07:00:00.000Z'],
    ['09:00', '2026-11-26T08:00:00.000Z'], // passed today: tomorrow
    ['9:30pm', '2026-11-25T20:30:00.000Z'],
    ['at 17:00', '2026-11-25T16:00:00.000Z'],
    ['tomorrow at 8pm', '2026-11-26T19:00:00.000Z'],
    ['2026-12-01 09:00', '2026-12-01T08:00:00.000Z'],
    ['2026-12-01', '2026-12-01T08:00:00.000Z'], // a date alone: its morning
    ['1 dec 2026 9am', '2026-12-01T08:00:00.000Z'],
    ['dec 1', '2026-12-01T08:00:00.000Z'],
    ['nov 1', '2027-11-01T08:00:00.000Z'], // passed this year: next year's
  ])('%s → %s', (text, expected) => {
    expect(resolve(text, now)).toBe(expected);
  });

  it('"this evening" after the evening hour is tomorrow evening', () => {
    expect(resolve('this evening', '2026-11-25T19:00:00Z')).toBe('2026-11-26T17:00:00.000Z');
  });

  it('"next week" on Sunday is the next day; on Monday, a week later', () => {
    expect(resolve('next week', '2026-11-29T12:00:00Z')).toBe('2026-11-30T08:00:00.000Z');
    expect(resolve('next week', '2026-11-30T06:00:00Z')).toBe('2026-12-07T08:00:00.000Z');
  });

  it('"next week" starts after the account’s weekend (Friday–Saturday: Sunday)', () => {
    expect(resolve('next week', now, { ...berlin, weekend: [5, 6] })).toBe('2026-11-29T08:00:00.000Z');
  });

  it('days in a duration are calendar days in the zone; hours are elapsed time', () => {
    // Berlin's clocks go forward on 29 March 2026: "1 day" from 12:00 on the 28th is 12:00 on the 29th (23 h later)…
    expect(resolve('1 day', '2026-03-28T11:00:00Z')).toBe('2026-03-29T10:00:00.000Z');
    // …while "24 hours" is 24 hours, 13:00 local.
    expect(resolve('24 hours', '2026-03-28T11:00:00Z')).toBe('2026-03-29T11:00:00.000Z');
  });
});

describe('describeLocal', () => {
  it('shows the account’s wall clock with UTC alongside', () => {
    expect(describeLocal(at('2026-12-01T08:00:00Z'), 'Europe/Berlin')).toBe(
      'Tue 1 Dec 2026 09:00 Europe/Berlin (08:00 UTC)',
    );
  });
  it('names the UTC day when it differs', () => {
    expect(describeLocal(at('2026-12-05T04:30:00Z'), 'America/New_York')).toBe(
      'Fri 4 Dec 2026 23:30 America/New_York (Sat 5 Dec 04:30 UTC)',
    );
  });
  it('is UTC alone for UTC', () => {
    expect(describeLocal(at('2026-12-01T08:00:00Z'), 'UTC')).toBe('Tue 1 Dec 2026 08:00 UTC');
  });
});

describe('bad input is a TimeSpecError saying what is wrong', () => {
  const now = at('2026-11-25T15:00:00Z');
  it.each<[WhenSpec, RegExp]>([
    [{ kind: 'phrase', phrase: 'someday' }, /cannot read "someday" as a time: expected a duration/],
    [{ kind: 'phrase', phrase: '   ' }, /an empty time/],
    [{ kind: 'phrase', phrase: 'next constructor' }, /cannot read "next constructor"/], // no prototype lookups
    [{ kind: 'phrase', phrase: '1 __proto__' }, /cannot read "1 __proto__"/],
    [{ kind: 'phrase', phrase: 'x'.repeat(500) }, /longer than 100 characters/],
    [{ kind: 'in', duration: 'tomorrow' }, /--in: expected a duration/],
    [{ kind: 'in', duration: '0 days' }, /longer than zero/],
    [{ kind: 'in', duration: '3 fortnights' }, /cannot read "3 fortnights"/],
    [{ kind: 'at', local: '3d' }, /--at: expected a date or time .* use --in for a duration/],
    [{ kind: 'at', local: '2026-02-30 09:00' }, /2026-02-30 is not a date/],
    [{ kind: 'at', local: '25:00' }, /hours go to 23/],
    [{ kind: 'at', local: '9:75' }, /minutes go to 59/],
    [{ kind: 'at', local: '13pm' }, /from 1 to 12/],
    [{ kind: 'at', local: '2020-01-01 09:00' }, /that time has passed: Wed 1 Jan 2020 09:00 Europe\/Berlin/],
    [{ kind: 'at', local: 'today 9:00' }, /that time has passed: Wed 25 Nov 2026 09:00/],
    [{ kind: 'at', local: '2099-01-01' }, /more than 10 years ahead/],
    [{ kind: 'business_days', days: 0 }, /business days: expected a whole number from 1/],
    [{ kind: 'business_days', days: 1.5 }, /business days: expected a whole number/],
    [{ kind: 'sometime' } as unknown as WhenSpec, /unknown time request/],
  ])('%j', (spec, message) => {
    expect(() => resolveWhen(spec, now, berlin)).toThrow(TimeSpecError);
    expect(() => resolveWhen(spec, now, berlin)).toThrow(message);
  });

  it('refuses unknown zones and impossible settings', () => {
    expect(() => resolveWhen({ kind: 'phrase', phrase: 'tomorrow' }, now, { ...berlin, zone: 'Mars/Olympus' })).toThrow(
      /unknown time zone "Mars\/Olympus"/,
    );
    expect(() => resolveWhen({ kind: 'phrase', phrase: 'tomorrow' }, now, { ...berlin, morningHour: 24 })).toThrow(
      /morningHour: expected an hour 0–23/,
    );
    expect(() =>
      resolveWhen({ kind: 'business_days', days: 1 }, now, { ...berlin, weekend: [1, 2, 3, 4, 5, 6, 7] }),
    ).toThrow(/at least one day/);
    expect(() => resolveWhen({ kind: 'in', duration: '1d' }, new Date(NaN), berlin)).toThrow(/now: not a valid date/);
    expect(() => resolveWhen({ kind: 'phrase', phrase: 'weekend' }, now, { ...berlin, weekend: [] })).toThrow(
      /the account has no weekend days/,
    );
  });
});
