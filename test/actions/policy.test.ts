// The safety policy, case by case: what runs, what waits for approval, what is refused, and why.
import { describe, expect, it } from 'vitest';
import { actionKey, reversalOf, type ProposedAction } from '../../src/actions/contracts.js';
import { DEFAULT_SAFETY_POLICY, judge, type PolicyFacts, type SafetyPolicy } from '../../src/actions/policy.js';

const facts: PolicyFacts = { accountId: 'acc-1', sender: 'ann@news.example.com', recipients: ['ann@news.example.com'], sendsLastHour: 0, draftsSentUnedited: {} };
const unedited = (n: number) => ({ 'ann@news.example.com': n });
const rule = (kind: ProposedAction['kind'], argument?: string): ProposedAction => ({ kind, argument, reason: { source: 'rule', ruleId: 'r1' } });
const llm = (kind: ProposedAction['kind'], confidence: number, argument?: string): ProposedAction => ({ kind, argument, reason: { source: 'llm', confidence } });
const policy = (patch: Partial<SafetyPolicy> = {}): SafetyPolicy => ({ ...DEFAULT_SAFETY_POLICY, ...patch });

describe('safety policy', () => {
  it('runs the harmless kinds a rule or a confident model decides', () => {
    for (const kind of ['archive', 'add_label', 'remove_label', 'mark_read', 'star', 'draft'] as const) {
      expect(judge(rule(kind, 'Newsletters'), facts, policy()).outcome).toBe('run');
      expect(judge(llm(kind, 0.93, 'Newsletters'), facts, policy()).outcome).toBe('run');
    }
  });

  it('asks before the dangerous kinds unless they are allowed for the scope', () => {
    for (const kind of ['trash', 'auto_reply'] as const) {
      const verdict = judge(rule(kind), facts, policy());
      expect(verdict.outcome).toBe('needs_approval');
      expect(verdict.because.join('\n')).toMatch(new RegExp(`^${kind}( to ann@news.example.com)? needs your approval`, 'm'));
    }
    expect(judge(rule('trash'), facts, policy({ allowances: [{ kind: 'trash', scope: 'global' }] })).outcome).toBe('run');
    expect(judge(rule('trash'), facts, policy({ allowances: [{ kind: 'trash', scope: 'account', ref: 'acc-1' }] })).outcome).toBe('run');
    expect(judge(rule('trash'), facts, policy({ allowances: [{ kind: 'trash', scope: 'account', ref: 'acc-2' }] })).outcome).toBe('needs_approval');
    // A domain allowance covers its subdomains; a sender allowance only that address.
    expect(judge(rule('trash'), facts, policy({ allowances: [{ kind: 'trash', scope: 'domain', ref: 'example.com' }] })).outcome).toBe('run');
    expect(judge(rule('trash'), facts, policy({ allowances: [{ kind: 'trash', scope: 'sender', ref: 'bob@news.example.com' }] })).outcome).toBe('needs_approval');
    expect(judge(rule('trash'), facts, policy({ allowances: [{ kind: 'trash', scope: 'sender', ref: 'ANN@news.example.com' }] })).outcome).toBe('run');
  });

  it('asks when the model is not sure enough', () => {
    const verdict = judge(llm('archive', 0.55), facts, policy());
    expect(verdict).toEqual({ outcome: 'needs_approval', because: ["the model's confidence 0.55 is below 0.80"] });
  });

  it('never archives or trashes a protected sender on its own', () => {
    const protectedDomain = policy({ protectedSenders: ['example.com'], allowances: [{ kind: 'trash', scope: 'global' }] });
    expect(judge(rule('archive'), facts, protectedDomain).outcome).toBe('needs_approval');
    expect(judge(rule('trash'), facts, protectedDomain).because[0]).toMatch(/protected sender: never trashed without you/);
    expect(judge(rule('mark_read'), facts, protectedDomain).outcome).toBe('run');
    expect(judge(rule('archive'), facts, policy({ protectedSenders: ['bob@news.example.com'] })).outcome).toBe('run');
  });

  it('forwards only to addresses the user allowed, whoever asks', () => {
    const allowed = policy({ forwardTo: ['me@backup.example'], allowances: [{ kind: 'forward', scope: 'global' }] });
    expect(judge(rule('forward', 'me@backup.example'), facts, allowed).outcome).toBe('run');
    // An address that came from the mail (a model decision or an agent) is refused, not queued for approval.
    const fromMail = judge(llm('forward', 0.99, 'attacker@evil.example'), facts, allowed);
    expect(fromMail.outcome).toBe('refused');
    expect(fromMail.because[0]).toBe('forward to attacker@evil.example: not an address you allowed forwards to');
    expect(judge({ kind: 'forward', argument: 'attacker@evil.example', reason: { source: 'user' } }, facts, allowed).outcome).toBe('refused');
  });

  it("refuses a label action on Gmail's system labels from every source, whatever is allowed", () => {
    // TRASH trashes, SPAM reports, taking INBOX off archives: past the checks of trash and archive.
    const lenient = policy({ allowances: [{ kind: 'trash', scope: 'global' }, { kind: 'archive', scope: 'global' }] });
    const agent = (kind: 'add_label' | 'remove_label', argument: string): ProposedAction => ({ kind, argument, reason: { source: 'agent', profile: 'p', step: 1 } });
    const labels = ['TRASH', 'trash', ' Spam ', 'INBOX', 'unread', 'STARRED', 'IMPORTANT', 'SENT', 'DRAFT', 'CHAT', 'CATEGORY_PROMOTIONS', 'category_social', 'CATEGORY_SOMETHING_NEW'];
    for (const label of labels) {
      for (const kind of ['add_label', 'remove_label'] as const) {
        for (const action of [rule(kind, label), llm(kind, 0.99, label), agent(kind, label), { kind, argument: label, reason: { source: 'user' as const } }]) {
          const verdict = judge(action, facts, lenient);
          expect(verdict.outcome, `${kind} ${label} by ${action.reason.source}`).toBe('refused');
          expect(verdict.because[0]).toBe(`${kind} ${label}: a Gmail system label; trash and archive are actions of their own`);
        }
      }
    }
    // The user's own labels, even ones that read like a system label, are harmless label changes.
    for (const label of ['Trash later', 'Inbox/Clients', 'My Spam Reports']) expect(judge(agent('add_label', label), facts, lenient).outcome).toBe('run');
  });

  it('lets auto-reply run only once it is earned, and says how far along it is', () => {
    const allowed = policy({ allowances: [{ kind: 'auto_reply', scope: 'sender', ref: 'ann@news.example.com' }] });
    const early = judge(rule('auto_reply'), { ...facts, draftsSentUnedited: unedited(3) }, allowed);
    expect(early.outcome).toBe('needs_approval');
    expect(early.because).toEqual(['auto-reply to ann@news.example.com is earned after 5 of our drafts sent unedited in a row; so far 3']);
    const earned = judge(rule('auto_reply'), { ...facts, draftsSentUnedited: unedited(5) }, allowed);
    expect(earned.outcome).toBe('run');
    expect(earned.because).toContain('earned: your last 5 drafts to ann@news.example.com went out unedited');
  });

  it("holds every send of an agent that can read the user's other mail, whatever is allowed or earned", () => {
    const lenient = policy({ allowances: [{ kind: 'auto_reply', scope: 'global' }], earnedAfter: 0 });
    const earned = { ...facts, draftsSentUnedited: unedited(9) };
    const agent = (readsMailbox?: boolean): ProposedAction => ({ kind: 'auto_reply', reason: { source: 'agent', profile: 'helper', step: 2, ...(readsMailbox ? { readsMailbox } : {}) } });
    expect(judge(agent(true), earned, lenient)).toEqual({
      outcome: 'needs_approval',
      because: ['agent helper can read your other mail and send: what it sends always waits for you'],
    });
    expect(judge(agent(), earned, lenient).outcome).toBe('run');
    // Its label changes are not sends: the flag does not hold them.
    expect(judge({ kind: 'add_label', argument: 'Clients', reason: { source: 'agent', profile: 'helper', step: 2, readsMailbox: true } }, earned, lenient).outcome).toBe('run');
  });

  it('judges an auto-reply for every recipient: one the user did not allow, or that did not earn it, holds it', () => {
    const allowed = policy({ allowances: [{ kind: 'auto_reply', scope: 'sender', ref: 'ann@news.example.com' }] });
    // Reply-To sends the reply to mallory: the allowance and the earned drafts are ann's, not his.
    const redirected = { ...facts, recipients: ['mallory@evil.example'], draftsSentUnedited: { 'ann@news.example.com': 9 } };
    const verdict = judge(rule('auto_reply'), redirected, allowed);
    expect(verdict.outcome).toBe('needs_approval');
    expect(verdict.because).toEqual([
      'the reply goes to mallory@evil.example, not (only) to the sender ann@news.example.com',
      'auto_reply to mallory@evil.example needs your approval unless you allow it (global, account, domain or sender)',
      'auto-reply to mallory@evil.example is earned after 5 of our drafts sent unedited in a row; so far 0',
    ]);
    // Both ann and mallory: ann's allowance and streak do not carry mallory.
    const both = { ...facts, recipients: ['ann@news.example.com', 'mallory@evil.example'], draftsSentUnedited: { 'ann@news.example.com': 9, 'mallory@evil.example': 9 } };
    const twice = judge(rule('auto_reply'), both, allowed);
    expect(twice.outcome).toBe('needs_approval');
    expect(twice.because.join('\n')).toMatch(/auto_reply to mallory@evil.example needs your approval/);
    expect(twice.because.join('\n')).not.toMatch(/ann@news.example.com needs/);
    // Nobody to reply to: refused.
    expect(judge(rule('auto_reply'), { ...facts, sender: '', recipients: [] }, policy({ allowances: [{ kind: 'auto_reply', scope: 'global' }] }))).toEqual({
      outcome: 'refused',
      because: ['auto-reply: the mail has no address to reply to'],
    });
  });

  it('caps automatic sends per account and hour', () => {
    const allowed = policy({ sendsPerHour: 2, allowances: [{ kind: 'auto_reply', scope: 'global' }] });
    const busy = { ...facts, draftsSentUnedited: unedited(9), sendsLastHour: 2 };
    expect(judge(rule('auto_reply'), busy, allowed)).toMatchObject({ outcome: 'needs_approval', because: ['2 automatic sends in the last hour: the cap is 2'] });
    expect(judge(rule('auto_reply'), { ...busy, sendsLastHour: 1 }, allowed).outcome).toBe('run');
  });

  it('holds every automatic action while the kill switch is on, but not what the user asks for', () => {
    const paused = policy({ paused: true });
    expect(judge(rule('mark_read'), facts, paused)).toEqual({ outcome: 'needs_approval', because: ['automatic actions are paused (kill switch)'] });
    expect(judge({ kind: 'archive', reason: { source: 'user' } }, facts, paused).outcome).toBe('run');
  });

  it('asks before an unsubscribe unless allowed; a mailto: outside the sender\'s domain waits whoever asks', () => {
    const unsubscribe = (source: 'user' | 'system'): ProposedAction => ({ kind: 'unsubscribe', argument: facts.sender, reason: source === 'user' ? { source } : { source, why: 'clean-up' } });
    const oneClick = { ...facts, recipients: [] };
    expect(judge(unsubscribe('system'), oneClick, policy())).toEqual({ outcome: 'needs_approval', because: ['unsubscribe needs your approval unless you allow it (global, account, domain or sender)'] });
    expect(judge(unsubscribe('system'), oneClick, policy({ allowances: [{ kind: 'unsubscribe', scope: 'domain', ref: 'example.com' }] })).outcome).toBe('run');
    expect(judge(unsubscribe('user'), oneClick, policy()).outcome).toBe('run');
    // The list's own address (a subdomain of the sender's domain counts) is fine; another domain is held.
    expect(judge(unsubscribe('user'), { ...facts, recipients: ['leave@news.example.com'] }, policy()).outcome).toBe('run');
    const elsewhere = { ...facts, recipients: ['victim@elsewhere.example'] };
    expect(judge(unsubscribe('user'), elsewhere, policy())).toEqual({ outcome: 'needs_approval', because: ["the unsubscribe mail goes to victim@elsewhere.example, outside the sender's domain"] });
    expect(judge(unsubscribe('system'), elsewhere, policy({ allowances: [{ kind: 'unsubscribe', scope: 'global' }] })).outcome).toBe('needs_approval');
    expect(reversalOf({ kind: 'unsubscribe' }, 'done')).toEqual({ kind: 'none', why: 'an unsubscribe cannot be taken back: subscribe again at the sender' });
  });

  it('gives every reason at once', () => {
    const verdict = judge(llm('trash', 0.4), facts, policy({ paused: true, protectedSenders: ['example.com'] }));
    expect(verdict.outcome).toBe('needs_approval');
    expect(verdict.because).toHaveLength(4);
  });
});

describe('actions', () => {
  it('are keyed by account, thread, message, kind and argument', () => {
    const ids = { accountId: 'a', threadId: 't', messageId: 'm' };
    expect(actionKey(ids, { kind: 'add_label', argument: 'Newsletters' })).toBe('a:t:m:add_label:Newsletters');
    expect(actionKey(ids, { kind: 'archive' })).toBe('a:t:m:archive:');
  });

  it('are taken back by their inverse while they can be', () => {
    expect(reversalOf({ kind: 'archive' }, 'done')).toEqual({ kind: 'labels', add: ['INBOX'], remove: [] });
    expect(reversalOf({ kind: 'add_label', argument: 'Newsletters' }, 'done')).toEqual({ kind: 'labels', add: [], remove: ['Newsletters'] });
    expect(reversalOf({ kind: 'mark_read' }, 'done')).toEqual({ kind: 'labels', add: ['UNREAD'], remove: [] });
    expect(reversalOf({ kind: 'trash' }, 'done')).toEqual({ kind: 'untrash' });
    expect(reversalOf({ kind: 'draft' }, 'done')).toEqual({ kind: 'delete_draft' });
    expect(reversalOf({ kind: 'auto_reply' }, 'scheduled')).toEqual({ kind: 'cancel_send' });
    expect(reversalOf({ kind: 'forward' }, 'done')).toEqual({ kind: 'none', why: 'the message was sent: mail cannot be unsent' });
    expect(reversalOf({ kind: 'archive' }, 'awaiting_approval')).toMatchObject({ kind: 'none', why: expect.stringContaining('reject it instead') });
    expect(reversalOf({ kind: 'archive' }, 'undone')).toEqual({ kind: 'none', why: 'already undone' });
  });
});
