// The timers' boundary (zod) and the sync's reading of timer labels in history: pure, no Temporal.
import { describe, expect, it } from 'vitest';
import { parseTimerRequest } from '../../src/thread/timer-requests.js';
import { timerLabelsAdded } from '../../src/sync/history-events.js';
import { indexedOf, openRecord } from '../../src/thread/thread-record.js';

const event = (request: unknown, more: Record<string, unknown> = {}) => ({ type: 'timer_request', requestId: 'r1', by: 'user', request, ...more });

describe('timer requests at the boundary', () => {
  it('takes a request its signal carries', () => {
    expect(parseTimerRequest('snooze', event({ kind: 'snooze', at: 1_800_000_000_000 }))).toEqual({ event: event({ kind: 'snooze', at: 1_800_000_000_000 }) });
    expect(parseTimerRequest('cancelTimer', event({ kind: 'cancel', timer: 'remind' }))).toHaveProperty('event');
  });

  it.each([
    ['another signal’s request', 'remind', event({ kind: 'snooze', at: 1 })],
    ['a time that is not a whole number of ms', 'snooze', event({ kind: 'snooze', at: 1.5 })],
    ['a time in seconds read as ms centuries away', 'snooze', event({ kind: 'snooze', at: 1_800_000_000_000_000 })],
    ['an unknown timer to cancel', 'cancelTimer', event({ kind: 'cancel', timer: 'everything' })],
    ['no request id', 'unsnooze', { type: 'timer_request', by: 'user', request: { kind: 'unsnooze' } }],
    ['a note of 10,000 characters', 'remind', event({ kind: 'remind', at: 5, note: 'x'.repeat(10_000) })],
  ])('refuses %s, saying why', (_what, signal, raw) => {
    const parsed = parseTimerRequest(signal as Parameters<typeof parseTimerRequest>[0], raw);
    expect(parsed).toHaveProperty('error');
    expect((parsed as { error: string }).error.length).toBeGreaterThan(0);
  });
});

describe('what the Web UI shows of a thread with timers', () => {
  it('InboxState snoozed while a snooze is pending, WakeAt the earliest timer', () => {
    const record = openRecord(undefined, { state: 'drafted', reworkCount: 0, handledMessageIds: [] });
    record.wakes = [
      { actionId: 'a', kind: 'remind', at: 200, by: 'user' },
      { actionId: 'b', kind: 'snooze', at: 100, by: 'label' },
    ];
    expect(indexedOf(record)).toMatchObject({ state: 'snoozed', wakeAt: 100 });
    record.wakes = [{ actionId: 'a', kind: 'remind', at: 200, by: 'user' }];
    expect(indexedOf(record)).toMatchObject({ state: 'drafted', wakeAt: 200 });
  });
});

describe('timer labels in history', () => {
  it('finds the timer labels added, one request id per change', () => {
    const records = [
      {
        id: '10',
        messagesAdded: [],
        messagesDeleted: [],
        labelsAdded: [{ message: { id: 'm1', threadId: 't1' }, labelIds: ['Label_snooze', 'STARRED'] }],
        labelsRemoved: [{ message: { id: 'm1', threadId: 't1' }, labelIds: ['Label_snooze'] }],
      },
    ];
    expect(timerLabelsAdded(records as never, new Set(['Label_snooze']))).toEqual([
      { threadId: 't1', messageId: 'm1', labelId: 'Label_snooze', changeId: 'label:h10:m1:Label_snooze' },
    ]);
    expect(timerLabelsAdded(records as never, new Set())).toEqual([]);
  });
});
