// Gmail's search syntax (the agent's search_mailbox) read into the neutral search IMAP can run.
import { describe, expect, it } from 'vitest';
import { readMailQuery } from '../../src/mail/mail-query.js';

const now = new Date('2026-11-28T12:00:00Z');

describe('readMailQuery', () => {
  it('reads the operators IMAP can say, and searches the other words as text', () => {
    expect(readMailQuery('from:alice@example.com subject:"quarterly numbers" budget is:unread newer_than:2d', now)).toEqual({
      search: { in: 'ALL', from: 'alice@example.com', subject: 'quarterly numbers', unread: true, since: new Date('2026-11-26T12:00:00Z'), text: ['budget'] },
      ignored: [],
      readAsWords: [],
    });
  });

  it('a domain narrows to From at that domain; a name becomes text', () => {
    expect(readMailQuery('from:@partner.example', now).search).toEqual({ in: 'ALL', fromDomain: 'partner.example' });
    expect(readMailQuery('from:alice', now).search).toEqual({ in: 'ALL', text: ['alice'] });
  });

  it('dates, places and labels', () => {
    expect(readMailQuery('after:2026/11/01 before:2026-11-15 in:sent label:Receipts', now).search).toEqual({
      in: 'SENT',
      since: new Date('2026-11-01T00:00:00Z'),
      before: new Date('2026-11-15T00:00:00Z'),
      labelId: 'Receipts',
    });
    expect(readMailQuery('older_than:1y in:anywhere', now).search).toEqual({ in: 'ANYWHERE', before: new Date('2025-11-28T12:00:00Z') });
  });

  it('leaves out what no IMAP search can say, and says so', () => {
    expect(readMailQuery('has:attachment larger:5M report', now)).toEqual({ search: { in: 'ALL', text: ['report'] }, ignored: ['has:attachment', 'larger:5M'], readAsWords: [] });
  });

  it('names the Gmail syntax it can only read as words (negation, OR, grouping): the search would mean something else', () => {
    const read = readMailQuery('from:news@shop.example -subject:"the receipt" {sale deal} OR (weekly)', now);
    expect(read.readAsWords).toEqual(['-subject:"the receipt"', '{sale', 'deal}', 'OR', '(weekly)']);
    expect(read.search.from).toBe('news@shop.example');
  });
});
