// The cold-email gate's signals and verdict (src/rules/cold-email.ts), and the allowlist's stored
// form (src/rules/cold-email-allowlist.ts): pure functions, no I/O.
import { describe, expect, it } from 'vitest';
import { allowValue, InvalidAllowEntryError } from '../../src/rules/cold-email-allowlist.js';
import { coldEmailGate, coldEmailSignals } from '../../src/rules/cold-email.js';
import type { RuleEmail } from '../../src/rules/contracts.js';

const email = (fields: Partial<RuleEmail>): RuleEmail => ({ from: '', to: '', subject: '', date: '', body: '', headers: {}, sender: 'a@x.example', ...fields });
const firstContact = { earlierThread: false };

describe('cold-email signals', () => {
  it('finds outreach phrases across line breaks and case, and bulk-sender headers by name and value', () => {
    const signals = coldEmailSignals(
      email({ subject: 'Book a DEMO', body: 'Have\n15   minutes?', headers: { 'X-Mailer': 'Apollo.io sender', Precedence: 'bulk', 'Feedback-ID': '1:2' } }),
    );
    expect(signals).toEqual({ wording: ['book a demo', '15 minutes'], bulkHeaders: ['precedence', 'feedback-id', 'x-mailer'] });
    expect(coldEmailSignals(email({ body: 'See you at lunch', headers: { 'X-Mailer': 'Apple Mail', Precedence: 'first-class' } }))).toEqual({ wording: [], bulkHeaders: [] });
  });
});

describe('the gate', () => {
  const two = { wording: ['book a demo', 'quick call'], bulkHeaders: [] };
  it('decides with two phrases, or a phrase and a bulk header; asks the model on one signal; says nothing on none', () => {
    expect(coldEmailGate(two, firstContact)).toEqual({ gate: 'cold', reason: 'rule builtin:cold-email: first contact, "book a demo", "quick call"' });
    expect(coldEmailGate({ wording: ['quick call'], bulkHeaders: ['list-unsubscribe'] }, firstContact).gate).toBe('cold');
    expect(coldEmailGate({ wording: ['quick call'], bulkHeaders: [] }, firstContact)).toEqual({ gate: 'ask', reason: 'first contact, "quick call"' });
    expect(coldEmailGate({ wording: [], bulkHeaders: ['x-campaign'] }, firstContact).gate).toBe('ask');
    expect(coldEmailGate({ wording: [], bulkHeaders: [] }, firstContact)).toEqual({ gate: 'none' });
  });

  it('never gates an allowlisted sender or one with an earlier thread, whatever the signals', () => {
    expect(coldEmailGate(two, { allowedBy: 'domain x.example', earlierThread: false })).toEqual({ gate: 'exempt', reason: 'allowlisted (domain x.example)' });
    expect(coldEmailGate(two, { earlierThread: true })).toEqual({ gate: 'exempt', reason: 'an earlier thread with the sender' });
  });
});

describe('allowlist entries', () => {
  it('stores canonical addresses and ASCII domains, and refuses anything else', () => {
    expect(allowValue('sender', ' Ada@Exämple.COM ')).toBe('ada@xn--exmple-cua.com');
    expect(allowValue('domain', '@Partner.Example')).toBe('partner.example');
    for (const [kind, raw] of [['sender', 'not an address'], ['domain', 'a@b.example'], ['domain', 'localhost'], ['domain', '']] as const) {
      expect(() => allowValue(kind, raw)).toThrow(InvalidAllowEntryError);
    }
  });
});
