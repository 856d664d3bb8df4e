// The agentProposal signal's boundary (plain checks, no schema library in workflow code): pure, no Temporal.
import { describe, expect, it } from 'vitest';
import { parseAgentProposal } from '../../src/thread/agent-proposals.js';

const reason = { source: 'agent', profile: 'triage', step: 2 };
const event = (actions: unknown[], more: Record<string, unknown> = {}) => ({
  type: 'agent_proposal',
  requestId: 'r1',
  messageId: 'm1',
  sender: 'a@example.com',
  subject: 'Hello',
  actions,
  by: 'schedule Morning brief',
  ...more,
});

describe('agent proposals at the boundary', () => {
  it('takes a well-formed proposal: labels trimmed, only the fields each kind has', () => {
    const parsed = parseAgentProposal(
      event(
        [
          { kind: 'add_label', argument: '  Clients ', reason, extra: 1 },
          { kind: 'archive', argument: 'ignored', reason: { ...reason, readsMailbox: true } },
          { kind: 'auto_reply', result: { body: 'Thanks!', mailboxRead: ['m0'] }, reason },
        ],
        { sendsNeedApproval: 'profile asks', unknown: true },
      ),
    );
    expect(parsed).toEqual({
      event: event(
        [
          { kind: 'add_label', argument: 'Clients', reason },
          { kind: 'archive', reason: { ...reason, readsMailbox: true } },
          { kind: 'auto_reply', result: { body: 'Thanks!', mailboxRead: ['m0'] }, reason },
        ],
        { sendsNeedApproval: 'profile asks' },
      ),
    });
  });

  it.each([
    ['a Gmail system label', event([{ kind: 'add_label', argument: 'INBOX', reason }]), 'actions.0.argument'],
    ['a kind an agent may not propose', event([{ kind: 'trash', reason }]), 'actions.0.kind'],
    ['no actions', event([]), 'actions'],
    ['six actions', event(Array.from({ length: 6 }, () => ({ kind: 'archive', reason }))), 'actions'],
    ['a reason from elsewhere', event([{ kind: 'archive', reason: { ...reason, source: 'rules' } }]), 'actions.0.reason.source'],
    ['a step that is not a whole number', event([{ kind: 'archive', reason: { ...reason, step: 1.5 } }]), 'actions.0.reason.step'],
    ['an empty reply', event([{ kind: 'auto_reply', result: { body: '' }, reason }]), 'actions.0.result.body'],
    ['no request id', { ...event([{ kind: 'archive', reason }]), requestId: undefined }, 'requestId'],
    ['not an object', 'archive everything', 'input'],
  ])('refuses %s, saying where', (_what, raw, path) => {
    const parsed = parseAgentProposal(raw);
    expect(parsed).toHaveProperty('error');
    expect((parsed as { error: string }).error.startsWith(`${path}: `)).toBe(true);
  });
});
