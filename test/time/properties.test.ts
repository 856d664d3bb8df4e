// Properties of the time module over many zones, moments and requests (fast-check).
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import {
  addBusinessDays,
  momentsAt,
  parseWhen,
  resolveWhen,
  TimeSpecError,
  type TimeSettings,
  type WhenSpec,
} from '../../src/time/index.js';

// Zones with daylight saving north and south, half-hour offsets, a Friday–Saturday weekend, and UTC.
const zones = [
  'Europe/Berlin',
  'America/New_York',
  'America/Los_Angeles',
  'Australia/Sydney',
  'Australia/Lord_Howe',
  'Asia/Kolkata',
  'America/Santiago',
  'Asia/Dubai',
  'Pacific/Auckland',
  'UTC',
];
const settings = fc.record<TimeSettings>({
  zone: fc.constantFrom(...zones),
  morningHour: fc.integer({ min: 0, max: 23 }),
  eveningHour: fc.integer({ min: 0, max: 23 }),
  weekend: fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { maxLength: 3 }),
});
// 2020–2040, at any millisecond: every daylight-saving change of those years is in range.
const moment = fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2040, 0, 1) }).map((ms) => new Date(ms));
const clock = fc
  .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
  .map(([h, m]) => `${h}:${String(m).padStart(2, '0')}`);
const relative: fc.Arbitrary<WhenSpec> = fc.oneof(
  fc
    .tuple(
      fc.integer({ min: 1, max: 100 }),
      fc.constantFrom('m', 'minutes', 'h', 'hours', 'd', 'days', 'w', 'weeks', 'months'),
    )
    .map(([n, u]) => ({ kind: 'in' as const, duration: `${n} ${u}` })),
  fc.integer({ min: 1, max: 60 }).map((days) => ({ kind: 'business_days' as const, days })),
  fc
    .constantFrom(
      'tomorrow',
      'next week',
      'this evening',
      'tonight',
      'weekend',
      'next month',
      'monday',
      'friday evening',
      'tomorrow morning',
    )
    .map((phrase) => ({ kind: 'phrase' as const, phrase })),
  clock.map((local) => ({ kind: 'at' as const, local })),
  fc
    .tuple(fc.constantFrom('tomorrow', 'sunday', 'wednesday'), clock)
    .map(([d, t]) => ({ kind: 'at' as const, local: `${d} ${t}` })),
);

describe('properties', () => {
  it('a relative request always resolves to one moment after now', () => {
    fc.assert(
      fc.property(relative, moment, settings, (spec, now, s) => {
        // "weekend" for an account without one is refused (tested in when.test.ts).
        fc.pre(!(spec.kind === 'phrase' && spec.phrase === 'weekend' && s.weekend.length === 0));
        const at = resolveWhen(spec, now, s);
        expect(at.getTime()).toBeGreaterThan(now.getTime());
        expect(resolveWhen(spec, now, s)).toEqual(at); // pure: the same answer every time
      }),
      { numRuns: 2000 },
    );
  });

  it('business days never land on the account’s weekend, and count exactly n business days', () => {
    fc.assert(
      fc.property(moment, fc.integer({ min: 1, max: 30 }), settings, (from, n, s) => {
        const due = addBusinessDays(from, n, s);
        const local = DateTime.fromJSDate(due, { zone: s.zone });
        expect(s.weekend).not.toContain(local.weekday);
        // The calendar days strictly after the start day, up to the due day, hold exactly n business days.
        const start = DateTime.fromJSDate(from, { zone: s.zone }).startOf('day');
        let count = 0;
        for (let d = start.plus({ days: 1 }); d.toISODate()! <= local.toISODate()!; d = d.plus({ days: 1 }))
          if (!s.weekend.includes(d.weekday)) count++;
        expect(count).toBe(n);
      }),
      { numRuns: 500 },
    );
  });

  it('every wall-clock time is one or two moments, each showing that wall-clock time or the gap-shifted one', () => {
    fc.assert(
      fc.property(
        moment,
        fc.constantFrom(...zones),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 0, max: 59 }),
        (day, zone, hour, minute) => {
          const d = DateTime.fromJSDate(day, { zone: 'UTC' });
          const local = { year: d.year, month: d.month, day: d.day, hour, minute };
          const moments = momentsAt(local, zone);
          expect(moments.length).toBeGreaterThanOrEqual(1);
          expect(moments.length).toBeLessThanOrEqual(2);
          for (const m of moments) {
            const shown = DateTime.fromJSDate(m, { zone });
            if (moments.length === 2) expect([shown.hour, shown.minute]).toEqual([hour, minute]);
            // In a gap the time moves forward by the gap (at most 2 hours anywhere), never back.
            const asked = DateTime.fromObject(local, { zone: 'UTC' }).toMillis();
            const got = DateTime.fromObject(
              { year: shown.year, month: shown.month, day: shown.day, hour: shown.hour, minute: shown.minute },
              { zone: 'UTC' },
            ).toMillis();
            expect(got - asked).toBeGreaterThanOrEqual(0);
            expect(got - asked).toBeLessThanOrEqual(2 * 3600_000);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('any text either parses to a spec that resolves, or is refused with a TimeSpecError', () => {
    const words = fc.constantFrom(
      'in',
      'at',
      'tomorrow',
      'next',
      'week',
      '3',
      '9:00',
      'pm',
      'dec',
      'days',
      'business',
      'monday',
      'evening',
      '2026-12-01',
      'a',
      'and',
      'h',
      '1h30m',
      '/',
      '.*',
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 40 }),
          fc.array(words, { maxLength: 5 }).map((w) => w.join(' ')),
        ),
        moment,
        (text, now) => {
          try {
            resolveWhen(parseWhen(text), now, {
              zone: 'Europe/Berlin',
              morningHour: 8,
              eveningHour: 18,
              weekend: [6, 7],
            });
          } catch (err) {
            expect(err).toBeInstanceOf(TimeSpecError);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});
