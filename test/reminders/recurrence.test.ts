// The recurrence the reminder workflow's planning activity computes (pure: rrule in floating local
// time, luxon for the zone). The daylight-saving edges and the short months, as docs say.
import { describe, expect, it } from 'vitest';
import { describeRecurrence, nextOccurrence, occurrencesAfter, RecurrenceError, recurrenceFromSpec, type Recurrence } from '../../src/reminders/recurrence.js';
import { reminderText } from '../../src/reminders/delivery-activities.js';

const iso = (d: Date) => d.toISOString();
const berlin = 'Europe/Berlin';
const upcoming = (r: Recurrence, zone: string, after: string, n: number) => occurrencesAfter(r, zone, new Date(after), n).map((o) => iso(o.at));

describe('reminder recurrence', () => {
  it('monthly on the 1st at 09:00 Europe/Berlin is 08:00 UTC in winter and 07:00 UTC in summer', () => {
    const rent = recurrenceFromSpec({ at: '09:00', every: 'month', on: '1' }, berlin, new Date('2026-11-25T12:00:00Z'));
    expect(rent).toEqual({ rrule: 'FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=9;BYMINUTE=0;BYSECOND=0', startLocal: '2026-11-25T09:00:00' });
    expect(upcoming(rent, berlin, '2026-11-25T12:00:00Z', 8)).toEqual([
      '2026-12-01T08:00:00.000Z',
      '2027-01-01T08:00:00.000Z',
      '2027-02-01T08:00:00.000Z',
      '2027-03-01T08:00:00.000Z',
      '2027-04-01T07:00:00.000Z', // summer time from 28 March 2027
      '2027-05-01T07:00:00.000Z',
      '2027-06-01T07:00:00.000Z',
      '2027-07-01T07:00:00.000Z',
    ]);
    expect(occurrencesAfter(rent, berlin, new Date('2026-11-25T12:00:00Z'), 1)[0]!.local).toBe('2026-12-01T09:00');
  });

  it('02:30 on the spring-forward day fires once, at 03:30 summer time; the days around it at 02:30', () => {
    const daily = recurrenceFromSpec({ at: '02:30', every: 'day', start: '2026-03-27' }, berlin, new Date('2026-03-20T00:00:00Z'));
    expect(upcoming(daily, berlin, '2026-03-27T12:00:00Z', 3)).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:30:00.000Z', // 02:30 does not exist on 29 March: 03:30 CEST, once
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
    expect(occurrencesAfter(daily, berlin, new Date('2026-03-28T12:00:00Z'), 1)[0]!.local).toBe('2026-03-29T03:30');
    const once = recurrenceFromSpec({ at: '02:30', start: '2026-03-29' }, berlin, new Date('2026-03-20T00:00:00Z'));
    expect(upcoming(once, berlin, '2026-03-20T00:00:00Z', 5)).toEqual(['2026-03-29T01:30:00.000Z']);
  });

  it('02:30 on the fall-back day fires once, at the first 02:30 (summer time)', () => {
    const daily = recurrenceFromSpec({ at: '02:30', every: 'day', start: '2026-10-24' }, berlin, new Date('2026-10-20T00:00:00Z'));
    expect(upcoming(daily, berlin, '2026-10-24T00:00:00Z', 3)).toEqual([
      '2026-10-24T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T00:30:00.000Z', // 02:30 happens twice on 25 October: the first (CEST), once
      '2026-10-26T01:30:00.000Z', // 02:30 CET
    ]);
    // Asked from between the two 02:30s, the next is the next day's: never a second one that night.
    expect(upcoming(daily, berlin, '2026-10-25T00:45:00Z', 1)).toEqual(['2026-10-26T01:30:00.000Z']);
  });

  it('an hourly rule over the gap and the overlap never fires twice at one instant', () => {
    const hourly: Recurrence = { rrule: 'FREQ=HOURLY;BYMINUTE=0;BYSECOND=0', startLocal: '2026-03-29T00:00:00' };
    const spring = upcoming(hourly, berlin, '2026-03-28T23:30:00Z', 4);
    expect(spring).toEqual(['2026-03-29T00:00:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-29T02:00:00.000Z', '2026-03-29T03:00:00.000Z']);
    expect(new Set(spring).size).toBe(spring.length);
  });

  it('the 31st: the month\'s last day in shorter months (February 28, or 29 in a leap year)', () => {
    const r = recurrenceFromSpec({ at: '09:00', every: 'month', on: '31' }, berlin, new Date('2027-01-01T00:00:00Z'));
    expect(occurrencesAfter(r, berlin, new Date('2027-01-01T00:00:00Z'), 5).map((o) => o.local)).toEqual([
      '2027-01-31T09:00',
      '2027-02-28T09:00',
      '2027-03-31T09:00',
      '2027-04-30T09:00',
      '2027-05-31T09:00',
    ]);
    const leap = recurrenceFromSpec({ at: '09:00', every: 'month', on: '30' }, berlin, new Date('2028-01-01T00:00:00Z'));
    expect(nextOccurrence(leap, berlin, new Date('2028-02-01T00:00:00Z'))!.local).toBe('2028-02-29T09:00');
    // A raw RRULE keeps RFC 5545's meaning: BYMONTHDAY=31 skips the months without one.
    const raw = recurrenceFromSpec({ at: '09:00', rrule: 'FREQ=MONTHLY;BYMONTHDAY=31' }, berlin, new Date('2027-01-01T00:00:00Z'));
    expect(occurrencesAfter(raw, berlin, new Date('2027-01-01T00:00:00Z'), 3).map((o) => o.local)).toEqual(['2027-01-31T09:00', '2027-03-31T09:00', '2027-05-31T09:00']);
  });

  it('the last Friday, by --on and by RRULE, gives the same days', () => {
    const byOn = recurrenceFromSpec({ at: '17:00', every: 'month', on: 'last-friday' }, berlin, new Date('2026-11-25T00:00:00Z'));
    const byRule = recurrenceFromSpec({ at: '17:00', rrule: 'FREQ=MONTHLY;BYDAY=-1FR' }, berlin, new Date('2026-11-25T00:00:00Z'));
    const days = (r: Recurrence) => occurrencesAfter(r, berlin, new Date('2026-11-25T00:00:00Z'), 4).map((o) => o.local);
    expect(days(byOn)).toEqual(['2026-11-27T17:00', '2026-12-25T17:00', '2027-01-29T17:00', '2027-02-26T17:00']);
    expect(days(byRule)).toEqual(days(byOn));
  });

  it('weekly and yearly rules; once at the next such time', () => {
    const weekly = recurrenceFromSpec({ at: '08:15', every: 'week', on: 'mon,thu' }, 'America/New_York', new Date('2026-11-25T00:00:00Z'));
    expect(weekly.rrule).toBe('FREQ=WEEKLY;BYDAY=MO,TH;BYHOUR=8;BYMINUTE=15;BYSECOND=0');
    expect(upcoming(weekly, 'America/New_York', '2026-11-25T00:00:00Z', 2)).toEqual(['2026-11-26T13:15:00.000Z', '2026-11-30T13:15:00.000Z']);
    const yearly = recurrenceFromSpec({ at: '07:00', every: 'year', on: '02-29' }, 'UTC', new Date('2026-11-25T00:00:00Z'));
    expect(occurrencesAfter(yearly, 'UTC', new Date('2026-11-25T00:00:00Z'), 2).map((o) => o.local)).toEqual(['2027-02-28T07:00', '2028-02-29T07:00']);
    const once = recurrenceFromSpec({ at: '09:00' }, berlin, new Date('2026-11-25T10:00:00Z')); // 11:00 in Berlin: tomorrow
    expect(upcoming(once, berlin, '2026-11-25T10:00:00Z', 3)).toEqual(['2026-11-26T08:00:00.000Z']);
  });

  it('refuses bad input with a reason', () => {
    const now = new Date('2026-11-25T00:00:00Z');
    const cases: Array<[Parameters<typeof recurrenceFromSpec>[0], string, RegExp]> = [
      [{ at: '25:00', every: 'day' }, berlin, /--at: expected a time of day/],
      [{ at: '09:00', every: 'month', on: '32' }, berlin, /1 to 31/],
      [{ at: '09:00', every: 'month', on: 'last-funday' }, berlin, /expected a weekday/],
      [{ at: '09:00', every: 'day', on: '1' }, berlin, /does not apply/],
      [{ at: '09:00', rrule: 'BYDAY=MO' }, berlin, /FREQ is required/],
      [{ at: '09:00', rrule: 'FREQ=DAILY;TZID=Europe/Paris' }, berlin, /--tz/],
      [{ at: '09:00', rrule: 'FREQ=DAILY', every: 'day' }, berlin, /replaces/],
      [{ at: '09:00', every: 'day' }, 'Mars/Olympus', /not an IANA time zone/],
      [{ at: '09:00', every: 'day', start: '2026-02-30' }, berlin, /--start/],
    ];
    for (const [spec, zone, message] of cases) expect(() => recurrenceFromSpec(spec, zone, now)).toThrow(message);
    expect(() => recurrenceFromSpec({ at: 'noon' }, berlin, now)).toThrow(RecurrenceError);
  });
});

describe('a reminder\'s rule in words', () => {
  const now = new Date('2026-11-25T12:00:00Z'); // a Wednesday
  const words = (spec: Parameters<typeof recurrenceFromSpec>[0]) => describeRecurrence(recurrenceFromSpec(spec, berlin, now));

  it.each<[Parameters<typeof recurrenceFromSpec>[0], string]>([
    [{ at: '15:47', every: 'day' }, 'every day at 15:47'],
    [{ at: '07:00:30', every: 'day', interval: 2 }, 'every 2 days at 07:00:30'],
    [{ at: '09:00' }, 'once on 2026-11-26 at 09:00'],
    [{ at: '13:00', start: '2027-01-04' }, 'once on 2027-01-04 at 13:00'],
    [{ at: '10:00', every: 'week' }, 'every Wednesday at 10:00'],
    [{ at: '08:15', every: 'week', on: 'mon,thu' }, 'every Monday and Thursday at 08:15'],
    [{ at: '10:00', every: 'week', interval: 2, on: 'mo,we,fr' }, 'every 2 weeks on Monday, Wednesday and Friday at 10:00'],
    [{ at: '09:00', every: 'month' }, 'every month on the 25th at 09:00'],
    [{ at: '09:00', every: 'month', on: '1' }, 'every month on the 1st at 09:00'],
    [{ at: '09:00', every: 'month', on: '22', interval: 3 }, 'every 3 months on the 22nd at 09:00'],
    [{ at: '09:00', every: 'month', on: '31' }, 'every month on the 31st (or the last day of a shorter month) at 09:00'],
    [{ at: '09:00', every: 'month', on: 'last' }, 'every month on the last day at 09:00'],
    [{ at: '17:00', every: 'month', on: 'last-friday' }, 'every month on the last Friday at 17:00'],
    [{ at: '17:00', every: 'month', on: 'first-monday' }, 'every month on the first Monday at 17:00'],
    [{ at: '07:00', every: 'year' }, 'every year on 25 November at 07:00'],
    [{ at: '07:00', every: 'year', on: '12-24' }, 'every year on 24 December at 07:00'],
    [{ at: '07:00', every: 'year', on: '02-29' }, 'every year on 29 February (28 February in other years) at 07:00'],
    [{ at: '17:00', rrule: 'FREQ=MONTHLY;BYDAY=-1FR' }, 'every month on the last Friday at 17:00'],
    [{ at: '09:00', rrule: 'FREQ=DAILY;BYHOUR=9,17;BYMINUTE=0' }, 'every day at 09:00 and 17:00'],
    [{ at: '09:00', rrule: 'FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR' }, 'every weekday at 09:00'],
    [{ at: '09:00', every: 'week', on: 'sat,sun' }, 'every Saturday and Sunday at 09:00'],
    [{ at: '09:00', every: 'week', interval: 2, on: 'mo,tu,we,th,fr' }, 'every 2 weeks on weekdays at 09:00'],
    [{ at: '09:00', rrule: 'FREQ=DAILY;COUNT=5' }, 'every day at 09:00, 5 times'],
    [{ at: '09:00', rrule: 'FREQ=WEEKLY;BYDAY=MO;UNTIL=20270101T000000' }, 'every Monday at 09:00, until 2027-01-01'],
    [{ at: '18:00', rrule: 'FREQ=YEARLY;BYMONTH=11;BYDAY=4TH' }, 'every year on the fourth Thursday of November at 18:00'],
    [{ at: '09:00', rrule: 'FREQ=HOURLY;INTERVAL=2' }, 'every 2 hours from 09:00'],
    [{ at: '09:00', rrule: 'FREQ=MINUTELY;INTERVAL=15' }, 'every 15 minutes from 09:00'],
  ])('%j: %s', (spec, expected) => {
    expect(words(spec)).toBe(expected);
  });

  it('says the time of day once, never an hour of its own ("at 15 at 15:47")', () => {
    for (const at of ['00:05', '09:30', '15:47', '23:59']) expect(words({ at, every: 'day' })).toBe(`every day at ${at}`);
  });

  it('shows a rule it cannot put in words as the rule itself', () => {
    expect(words({ at: '09:00', rrule: 'FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO' })).toBe('every year at 09:00 (as the rule says: FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO)');
  });

  it('is what the reminder e-mail says', () => {
    const recurrence = recurrenceFromSpec({ at: '15:47', every: 'day' }, berlin, now);
    expect(reminderText({ id: 'r1', title: 'Water the plants', ...recurrence }, '2026-11-25 15:47')).toContain('Due 2026-11-25 15:47 (every day at 15:47).');
  });
});
