// The per-thread record's views, without Temporal: where a run starts from, the Postgres row, what
// continue-as-new carries, the search attributes, the status query, and what is left to write.
import { describe, expect, it } from 'vitest';
import type { CarriedThreadState, DecisionRecord, ThreadMemory } from '../../src/thread/contracts.js';
import {
  carriedOf,
  indexedOf,
  memoryOf,
  openRecord,
  savedAtStart,
  statusOf,
  unsaved,
} from '../../src/thread/thread-record.js';

const decision = (detail: string): DecisionRecord => ({ at: '2026-11-22T10:00:00.000Z', kind: 'classify', source: 'rules', detail });

const drafted: ThreadMemory = {
  state: 'drafted',
  category: 'needs_response',
  confidence: 0.9,
  draftId: 'r-1',
  draftMessageId: 'm-9',
  draftCreatedAt: 1_700_000_000_000,
  reworkCount: 1,
  handledMessageIds: ['m-1', 'm-2'],
};

describe('thread record', () => {
  it('starts a new thread pending, with nothing handled', () => {
    const record = openRecord(undefined, null);
    expect(record).toMatchObject({ state: 'pending', reworkCount: 0, handledMessageIds: [], decisions: [] });
    expect(savedAtStart(record, false)).toEqual({ row: '', decisions: 0 });
  });

  it('resumes an open thread from Postgres, without the draft body it cannot know', () => {
    const record = openRecord(undefined, drafted);
    expect(memoryOf(record)).toEqual(drafted);
    expect(record.lastDraftBody).toBeUndefined();
  });

  it('starts a closed thread afresh but keeps the messages it handled', () => {
    const record = openRecord(undefined, { ...drafted, state: 'sent' });
    expect(record).toMatchObject({ state: 'pending', draftId: undefined, reworkCount: 0, handledMessageIds: ['m-1', 'm-2'] });
  });

  it('hands continue-as-new the record, the duplicate filter and the pending events, and resumes from them', () => {
    const record = { ...openRecord(undefined, drafted), lastDraftBody: 'Hello', decisions: [decision('a')] };
    const pending = [{ type: 'sent_seen' as const, messageId: 's-1' }];
    const carried: CarriedThreadState = carriedOf(record, new Set(['k1', 'k2']), pending);
    expect(carried).toMatchObject({ ...drafted, lastDraftBody: 'Hello', seenEvents: ['k1', 'k2'], pending });
    expect(carried.decisions).toHaveLength(1);
    const next = openRecord(carried, null);
    expect(memoryOf(next)).toEqual(drafted);
    expect(next.lastDraftBody).toBe('Hello');
    // The next run starts with Postgres up to date: nothing to write until something changes.
    expect(unsaved(next, savedAtStart(next, true))).toBeUndefined();
  });

  it('carries no decisions out of a closed run, and caps what it carries', () => {
    const many = Array.from({ length: 700 }, (_, i) => `k${i}`);
    const record = { ...openRecord(undefined, drafted), decisions: Array.from({ length: 80 }, (_, i) => decision(`d${i}`)) };
    const open = carriedOf(record, many, []);
    expect(open.seenEvents).toHaveLength(500);
    expect(open.seenEvents.at(-1)).toBe('k699');
    expect(open.decisions).toHaveLength(50);
    expect(carriedOf({ ...record, state: 'archived' }, many, []).decisions).toEqual([]);
  });

  it('keeps the last 200 handled message ids in the row', () => {
    const ids = Array.from({ length: 250 }, (_, i) => `m-${i}`);
    const row = memoryOf({ ...openRecord(undefined, null), handledMessageIds: ids });
    expect(row.handledMessageIds).toHaveLength(200);
    expect(row.handledMessageIds[0]).toBe('m-50');
  });

  it('indexes state and category only', () => {
    expect(indexedOf(openRecord(undefined, drafted))).toEqual({ state: 'drafted', category: 'needs_response' });
  });

  it('answers the status query with the record, the pending events and what it waits for', () => {
    const record = { ...openRecord(undefined, drafted), decisions: [decision('a')] };
    const ids = { accountId: 'acc', threadId: 'thr' };
    expect(statusOf(ids, record, { pendingEvents: 2 })).toEqual({
      accountId: 'acc',
      threadId: 'thr',
      state: 'drafted',
      category: 'needs_response',
      confidence: 0.9,
      draftId: 'r-1',
      reworkCount: 1,
      pendingEvents: 2,
      decisions: [decision('a')],
    });
    expect(statusOf(ids, record, { pendingEvents: 0, waitingFor: 'readThread: GmailAuthError' }).waitingFor).toBe('readThread: GmailAuthError');
  });

  it('writes the row when it changed and each decision once, numbered in order', () => {
    const record = openRecord(undefined, null);
    record.decisions.push(decision('a'), decision('b'));
    const first = unsaved(record, savedAtStart(record, false))!;
    expect(first.memory.state).toBe('pending');
    expect(first.decisions.map((d) => [d.seq, d.decision.detail])).toEqual([[0, 'a'], [1, 'b']]);
    expect(unsaved(record, first.saved)).toBeUndefined();

    record.decisions.push(decision('c'));
    const second = unsaved(record, first.saved)!;
    expect(second.decisions.map((d) => d.seq)).toEqual([2]);

    record.state = 'skipped';
    expect(unsaved(record, second.saved)?.decisions).toEqual([]);
  });
});
