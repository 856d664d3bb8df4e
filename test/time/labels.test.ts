// Timer labels set in Gmail ("Snooze/Tomorrow", "Remind/3 days", "Send/Tomorrow 8:00") → a timer.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { timerLabelPrefixesFromConfig } from '../../src/config/settings.js';
import {
  DEFAULT_TIMER_LABEL_PREFIXES as prefixes,
  readTimerLabel,
  resolveWhen,
  timerFromLabel,
  type TimerFromLabel,
} from '../../src/time/index.js';

describe('timerFromLabel', () => {
  it.each<[string, TimerFromLabel]>([
    ['Snooze/Tomorrow', { kind: 'snooze', when: { kind: 'phrase', phrase: 'tomorrow' } }],
    ['Snooze/Next week', { kind: 'snooze', when: { kind: 'phrase', phrase: 'next week' } }],
    ['snooze/this evening', { kind: 'snooze', when: { kind: 'phrase', phrase: 'this evening' } }],
    ['Remind/3 days', { kind: 'remind', when: { kind: 'in', duration: '3 days' } }],
    ['Remind/2 business days', { kind: 'remind', when: { kind: 'business_days', days: 2 } }],
    ['Send/Tomorrow 8:00', { kind: 'send_later', when: { kind: 'at', local: 'tomorrow 8:00' } }],
    ['Send/Monday 9am', { kind: 'send_later', when: { kind: 'at', local: 'monday 9am' } }],
  ])('%s', (name, timer) => {
    expect(timerFromLabel(name, prefixes)).toEqual(timer);
  });

  it('resolves a label’s time in the account’s zone: Send/Tomorrow 8:00 in Berlin in winter is 07:00 UTC', () => {
    const timer = timerFromLabel('Send/Tomorrow 8:00', prefixes)!;
    const settings = { zone: 'Europe/Berlin', morningHour: 8, eveningHour: 18, weekend: [6, 7] };
    expect(resolveWhen(timer.when, new Date('2026-12-10T15:00:00Z'), settings).toISOString()).toBe(
      '2026-12-11T07:00:00.000Z',
    );
  });

  it('ignores labels that are not timers, the bare parents and over-long names', () => {
    for (const name of [
      'Outbox',
      'Snooze',
      'Snoozed/Tomorrow',
      'Work/Snooze/Tomorrow',
      'Sender/Tomorrow',
      'Reminders',
      `Snooze/${'x'.repeat(300)}`,
    ]) {
      expect(readTimerLabel(name, prefixes)).toBeUndefined();
    }
  });

  it('says why a timer label’s time cannot be read, and timerFromLabel gives none', () => {
    expect(readTimerLabel('Snooze/Someday', prefixes)).toEqual({
      kind: 'snooze',
      problem: expect.stringMatching(/^label "Snooze\/Someday": cannot read "Someday" as a time: expected a duration/),
    });
    expect(readTimerLabel('Remind/', prefixes)).toEqual({
      kind: 'remind',
      problem: expect.stringMatching(/an empty time/),
    });
    expect(timerFromLabel('Snooze/Someday', prefixes)).toBeUndefined();
  });

  it('uses the configured prefixes, matched case-insensitively, the longest first', () => {
    const cfg = loadConfig({
      SNOOZE_LABEL_PREFIX: 'Later',
      REMIND_LABEL_PREFIX: 'Erinnern',
      SEND_LATER_LABEL_PREFIX: 'Later/Send',
    });
    const custom = timerLabelPrefixesFromConfig(cfg);
    expect(custom).toEqual({ snooze: 'Later', remind: 'Erinnern', sendLater: 'Later/Send' });
    expect(timerFromLabel('later/Tomorrow', custom)?.kind).toBe('snooze');
    expect(timerFromLabel('Later/Send/Tomorrow 8:00', custom)).toEqual({
      kind: 'send_later',
      when: { kind: 'at', local: 'tomorrow 8:00' },
    });
    expect(timerFromLabel('ERINNERN/3d', custom)?.kind).toBe('remind');
    expect(timerFromLabel('Snooze/Tomorrow', custom)).toBeUndefined();
    expect(timerLabelPrefixesFromConfig(loadConfig({}))).toEqual(prefixes);
    expect(() => loadConfig({ SNOOZE_LABEL_PREFIX: 'Snooze/' })).toThrow(
      /^SNOOZE_LABEL_PREFIX: expected a label name without a trailing "\/"/,
    );
  });

  it('any label name gives a timer, a reason, or nothing, and never throws', () => {
    const name = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc
        .tuple(fc.constantFrom('Snooze', 'remind', 'SEND'), fc.string({ maxLength: 120 }))
        .map(([p, rest]) => `${p}/${rest}`),
    );
    fc.assert(
      fc.property(name, (n) => {
        const read = readTimerLabel(n, prefixes);
        if (read) expect('when' in read || 'problem' in read).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
