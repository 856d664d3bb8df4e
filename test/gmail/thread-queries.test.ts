import { describe, expect, it } from 'vitest';
import { findSentReplyAfter, latestInboundMessage, type ThreadMessage, type ThreadSnapshot } from '../../src/gmail/index.js';

function msg(id: string, from: string, internalDate: number, labelIds: string[]): ThreadMessage {
  return {
    id,
    threadId: 't1',
    labelIds,
    internalDate,
    historyId: '1',
    snippet: '',
    messageId: `<${id}@example.com>`,
    references: [],
    inReplyTo: '',
    from: { address: from },
    to: [],
    cc: [],
    replyTo: [],
    subject: 'Hello',
    date: '',
    body: '',
    bodySource: 'text/plain',
    attachments: [],
    headers: {},
    isFromUser: labelIds.includes('SENT') || labelIds.includes('DRAFT'),
    isDraft: labelIds.includes('DRAFT'),
    parseWarnings: [],
  };
}

const me = 'me@example.com';
const thread = (...messages: ThreadMessage[]): ThreadSnapshot => ({ threadId: 't1', historyId: '9', messages });

describe('findSentReplyAfter', () => {
  const inbound = msg('in1', 'bob@example.com', 1000, ['INBOX']);
  const earlierSent = msg('old', me, 1500, ['SENT']);
  const draft = msg('draft', me, 2000, ['DRAFT']);

  it('finds the SENT message the user sent after the draft was created', () => {
    const sent = msg('sent', 'Me@Example.com', 3000, ['SENT']);
    expect(findSentReplyAfter(thread(inbound, earlierSent, sent), 2000, me)?.id).toBe('sent');
  });

  it('returns null while only the draft exists, and ignores sends before the draft', () => {
    expect(findSentReplyAfter(thread(inbound, earlierSent, draft), 2000, me)).toBeNull();
  });

  it('ignores SENT messages from another address unless it is listed as the user’s', () => {
    const alias = msg('alias', 'support@example.com', 3000, ['SENT']);
    expect(findSentReplyAfter(thread(inbound, alias), 2000, me)).toBeNull();
    expect(findSentReplyAfter(thread(inbound, alias), 2000, [me, 'support@example.com'])?.id).toBe('alias');
  });

  it('picks the earliest qualifying send when the user sent twice', () => {
    const first = msg('first', me, 3000, ['SENT']);
    const second = msg('second', me, 4000, ['SENT']);
    expect(findSentReplyAfter(thread(second, first), 2000, me)?.id).toBe('first');
  });
});

describe('latestInboundMessage', () => {
  it('returns the newest message not sent by the user', () => {
    const a = msg('a', 'bob@example.com', 1000, ['INBOX']);
    const b = msg('b', 'carol@example.com', 2000, ['INBOX', 'UNREAD']);
    const mine = msg('mine', me, 3000, ['SENT']);
    const draft = msg('draft', me, 4000, ['DRAFT']);
    expect(latestInboundMessage(thread(a, b, mine, draft), me)?.id).toBe('b');
  });

  it('treats a message from the user without SENT (e.g. imported) as not inbound', () => {
    expect(latestInboundMessage(thread(msg('x', 'ME@example.com', 1000, ['INBOX'])), me)).toBeNull();
  });

  it('returns null for an empty thread', () => {
    expect(latestInboundMessage(thread(), me)).toBeNull();
  });
});
