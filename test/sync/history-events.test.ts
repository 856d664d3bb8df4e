// History records → thread events (pure), and the push envelope parser.
import { describe, expect, it } from 'vitest';
import { historyToThreadEvents } from '../../src/sync/history-events.js';
import { parsePushBody } from '../../src/sync/push-route.js';
import type { HistoryRecord } from '../../src/mail/message.js';
import type { LabelRole } from '../../src/thread/contracts.js';

const roles = new Map<string, LabelRole>([
  ['Label_1', 'outbox'],
  ['Label_2', 'done'],
  ['Label_3', 'rework'],
]);

function record(id: string, patch: Partial<HistoryRecord>): HistoryRecord {
  return { id, messages: [], messagesAdded: [], messagesDeleted: [], labelsAdded: [], labelsRemoved: [], ...patch };
}

describe('historyToThreadEvents', () => {
  it("given the user's labels, also hands over a move back to the inbox and their own labels added or removed", () => {
    const user = new Map([['Label_9', 'Receipts'], ['Label_8', 'Newsletters']]);
    const records = [
      record('20', {
        labelsAdded: [
          { message: { id: 'm1', threadId: 't1', labelIds: ['INBOX'] }, labelIds: ['INBOX', 'UNREAD'] },
          { message: { id: 'm2', threadId: 't2', labelIds: ['Label_9'] }, labelIds: ['Label_9', 'STARRED'] },
          { message: { id: 'm3', threadId: 't3', labelIds: ['STARRED'] }, labelIds: ['STARRED'] },
        ],
        labelsRemoved: [{ message: { id: 'm2', threadId: 't2', labelIds: [] }, labelIds: ['Label_8', 'Label_1'] }],
      }),
    ];
    expect(historyToThreadEvents(records, roles, user)).toEqual([
      { threadId: 't1', events: [{ type: 'labels_changed', messageId: 'm1', changeId: 'h20:m1', added: [], removed: [], inboxAdded: true }] },
      {
        threadId: 't2',
        events: [{ type: 'labels_changed', messageId: 'm2', changeId: 'h20:m2', added: [], removed: ['outbox'], userLabelsAdded: ['Receipts'], userLabelsRemoved: ['Newsletters'] }],
      },
    ]);
    // Without them (LEARNING off), only our labels' changes.
    expect(historyToThreadEvents(records, roles)).toEqual([
      { threadId: 't2', events: [{ type: 'labels_changed', messageId: 'm2', changeId: 'h20:m2', added: [], removed: ['outbox'] }] },
    ]);
  });

  it('asks once for a label the user put on several messages of a thread (its message and our draft), and again once it was taken off', () => {
    const rework = (id: string, message: string) => ({ message: { id: message, threadId: 't1', labelIds: ['Label_3'] }, labelIds: ['Label_3'] });
    const out = historyToThreadEvents(
      [
        // On IMAP one record per folder: INBOX, then Drafts, in one page.
        record('30', { labelsAdded: [rework('30', 'm1')] }),
        record('31', { labelsAdded: [rework('31', 'd1')] }),
        // Our redraft took it off; the user asks again.
        record('32', { labelsRemoved: [rework('32', 'm1')] }),
        record('33', { labelsAdded: [rework('33', 'm1'), rework('33', 'd1')] }),
      ],
      roles,
    );
    expect(out).toEqual([
      {
        threadId: 't1',
        events: [
          { type: 'labels_changed', messageId: 'm1', changeId: 'h30:m1', added: ['rework'], removed: [] },
          { type: 'labels_changed', messageId: 'm1', changeId: 'h32:m1', added: [], removed: ['rework'] },
          { type: 'labels_changed', messageId: 'm1', changeId: 'h33:m1', added: ['rework'], removed: [] },
        ],
      },
    ]);
  });

  it('maps inbox mail, sent mail, deletions and our label changes; skips drafts and foreign labels', () => {
    const out = historyToThreadEvents(
      [
        record('10', { messagesAdded: [{ id: 'm1', threadId: 't1', labelIds: ['INBOX', 'UNREAD'] }] }),
        record('11', { messagesAdded: [{ id: 'd1', threadId: 't1', labelIds: ['DRAFT'] }] }),
        record('12', {
          labelsAdded: [
            { message: { id: 'm1', threadId: 't1', labelIds: ['INBOX', 'Label_2'] }, labelIds: ['Label_2', 'STARRED'] },
            { message: { id: 'm9', threadId: 't9', labelIds: ['STARRED'] }, labelIds: ['STARRED'] },
          ],
          labelsRemoved: [{ message: { id: 'm1', threadId: 't1', labelIds: ['INBOX'] }, labelIds: ['Label_1'] }],
        }),
        record('13', { messagesDeleted: [{ id: 'd1', threadId: 't1' }] }),
        record('14', { messagesAdded: [{ id: 's1', threadId: 't2', labelIds: ['SENT'] }] }),
      ],
      roles,
    );
    expect(out).toEqual([
      {
        threadId: 't1',
        events: [
          { type: 'message_added', messageId: 'm1', labelIds: ['INBOX', 'UNREAD'] },
          { type: 'labels_changed', messageId: 'm1', changeId: 'h12:m1', added: ['done'], removed: ['outbox'] },
          { type: 'draft_gone', messageId: 'd1' },
        ],
      },
      { threadId: 't2', events: [{ type: 'sent_seen', messageId: 's1' }] },
    ]);
  });
});

describe('parsePushBody', () => {
  const body = (data: unknown) =>
    Buffer.from(JSON.stringify({ message: { data: Buffer.from(JSON.stringify(data)).toString('base64'), messageId: '7' }, subscription: 's' }));

  it('accepts historyId as a number or a string', () => {
    expect(parsePushBody(body({ emailAddress: 'u@example.com', historyId: 9876543210 }))).toEqual({
      ok: true,
      notification: { emailAddress: 'u@example.com', historyId: '9876543210' },
      messageId: '7',
    });
    expect(parsePushBody(body({ emailAddress: 'u@example.com', historyId: '123' }))).toMatchObject({ ok: true, notification: { historyId: '123' } });
  });

  it('names what is wrong with a malformed push', () => {
    expect(parsePushBody(Buffer.from('nope'))).toMatchObject({ ok: false, reason: 'malformed_json' });
    expect(parsePushBody(Buffer.from('{"message":{}}'))).toMatchObject({ ok: false, reason: 'malformed_envelope' });
    expect(parsePushBody(Buffer.from('{"message":{"data":"!!!"}}'))).toMatchObject({ ok: false, reason: 'malformed_data' });
    expect(parsePushBody(body({ emailAddress: 'u@example.com', historyId: 'abc' }))).toMatchObject({ ok: false, reason: 'malformed_notification' });
  });
});
