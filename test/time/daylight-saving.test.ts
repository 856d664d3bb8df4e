// The two days a year a wall-clock time is not one moment (docs/time.md, "Daylight saving").
// Europe/Berlin: 29 March 2026 02:00 CET → 03:00 CEST (02:00–02:59 does not exist);
// 25 October 2026 03:00 CEST → 02:00 CET (02:00–02:59 happens twice).
import { describe, expect, it } from 'vitest';
import { addBusinessDays, momentAt, momentsAt, resolveWhen, type TimeSettings } from '../../src/time/index.js';

const berlin: TimeSettings = { zone: 'Europe/Berlin', morningHour: 8, eveningHour: 18, weekend: [6, 7] };
const iso = (d: Date) => d.toISOString();

describe('a time that does not exist (clocks go forward)', () => {
  it('is one moment: the same wall-clock distance after the gap (02:30 → 03:30 CEST = 01:30 UTC)', () => {
    const moments = momentsAt({ year: 2026, month: 3, day: 29, hour: 2, minute: 30 }, 'Europe/Berlin');
    expect(moments.map(iso)).toEqual(['2026-03-29T01:30:00.000Z']);
  });

  it('resolves so from a date, a day phrase and a bare time alike', () => {
    const saturday = new Date('2026-03-28T12:00:00Z');
    expect(iso(resolveWhen({ kind: 'at', local: '2026-03-29 02:30' }, saturday, berlin))).toBe(
      '2026-03-29T01:30:00.000Z',
    );
    expect(iso(resolveWhen({ kind: 'at', local: 'tomorrow 2:30' }, saturday, berlin))).toBe('2026-03-29T01:30:00.000Z');
    // A bare "02:30" asked on the Saturday evening: the next 02:30 is the one in the gap.
    expect(iso(resolveWhen({ kind: 'at', local: '02:30' }, new Date('2026-03-28T20:00:00Z'), berlin))).toBe(
      '2026-03-29T01:30:00.000Z',
    );
  });

  it('a follow-up counted across the change keeps its wall-clock time', () => {
    // Thursday 26 March 10:00 CET + 2 business days = Monday 30 March 10:00 CEST (08:00 UTC, not 09:00).
    expect(iso(addBusinessDays(new Date('2026-03-26T09:00:00Z'), 2, berlin))).toBe('2026-03-30T08:00:00.000Z');
  });

  it('a business day landing in the gap moves forward by the gap', () => {
    // A Sunday-only weekend is not skipped here: weekend = [6] makes Sunday 29 March a business day.
    const sixDayWeek = { ...berlin, weekend: [6] };
    expect(iso(addBusinessDays(new Date('2026-03-27T01:30:00Z'), 1, sixDayWeek))).toBe('2026-03-29T01:30:00.000Z'); // Fri 02:30 CET → Sun 03:30 CEST
  });
});

describe('a time that happens twice (clocks go back)', () => {
  const repeated = { year: 2026, month: 10, day: 25, hour: 2, minute: 30 };

  it('has two moments; the one taken is the earlier (02:30 CEST = 00:30 UTC)', () => {
    expect(momentsAt(repeated, 'Europe/Berlin').map(iso)).toEqual([
      '2026-10-25T00:30:00.000Z',
      '2026-10-25T01:30:00.000Z',
    ]);
    expect(iso(momentAt(repeated, 'Europe/Berlin'))).toBe('2026-10-25T00:30:00.000Z');
    expect(iso(resolveWhen({ kind: 'at', local: '2026-10-25 02:30' }, new Date('2026-10-24T12:00:00Z'), berlin))).toBe(
      '2026-10-25T00:30:00.000Z',
    );
  });

  it('once the earlier has passed, the later is the one still ahead', () => {
    // Asked at 02:10 CET (the second 02:10): the first 02:30 is gone, the second still to come.
    const now = new Date('2026-10-25T01:10:00Z');
    expect(iso(resolveWhen({ kind: 'at', local: '02:30' }, now, berlin))).toBe('2026-10-25T01:30:00.000Z');
    expect(iso(resolveWhen({ kind: 'at', local: '2026-10-25 02:30' }, now, berlin))).toBe('2026-10-25T01:30:00.000Z');
  });

  it('a follow-up due in the repeated hour is due once, at the earlier', () => {
    // Saturday 24 October 02:30 CEST + 1 business day, with Sunday a business day: Sunday's first 02:30.
    const sundayWorks = { ...berlin, weekend: [6] };
    expect(iso(addBusinessDays(new Date('2026-10-24T00:30:00Z'), 1, sundayWorks))).toBe('2026-10-25T00:30:00.000Z');
  });

  it('"1 day" from 02:30 CEST the day before is 24 hours later, the first 02:30', () => {
    expect(iso(resolveWhen({ kind: 'in', duration: '1 day' }, new Date('2026-10-24T00:30:00Z'), berlin))).toBe(
      '2026-10-25T00:30:00.000Z',
    );
  });
});

describe('other zones’ rules come from the zone data, not from us', () => {
  it('New York’s gap is at 02:00 on the second Sunday of March', () => {
    expect(momentsAt({ year: 2026, month: 3, day: 8, hour: 2, minute: 15 }, 'America/New_York').map(iso)).toEqual([
      '2026-03-08T07:15:00.000Z',
    ]);
  });
  it('Lord Howe moves its clocks by half an hour', () => {
    // 5 April 2026 02:00 LHDT (UTC+11) → 01:30 LHST (UTC+10:30): 01:45 happens twice.
    expect(momentsAt({ year: 2026, month: 4, day: 5, hour: 1, minute: 45 }, 'Australia/Lord_Howe').map(iso)).toEqual([
      '2026-04-04T14:45:00.000Z',
      '2026-04-04T15:15:00.000Z',
    ]);
  });
});
