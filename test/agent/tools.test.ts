// The agent's tool schemas: what a model's call must pass before the workflow runs it.
import { describe, expect, it } from 'vitest';
import { readsMailboxAndSends } from '../../src/agent/contracts.js';
import { checkToolInput, toolDefinitions } from '../../src/agent/tools.js';
import { GMAIL_SYSTEM_LABELS } from '../../src/gmail/system-labels.js';

describe('agent tools', () => {
  it("refuse Gmail's system labels in add_label and remove_label, in any case", () => {
    const names = [...GMAIL_SYSTEM_LABELS, ...GMAIL_SYSTEM_LABELS.map((l) => l.toLowerCase()), 'Trash', ' SPAM ', 'Inbox', 'CATEGORY_RESERVATIONS'];
    for (const tool of ['add_label', 'remove_label'] as const) {
      for (const label of names) {
        const checked = checkToolInput(tool, { label });
        expect(checked.ok, `${tool} ${label}`).toBe(false);
        if (!checked.ok) expect(checked.message).toBe(`invalid input for ${tool}: label: ${label.trim()} is a Gmail system label: label tools take your own labels only (use archive to archive, escalate for the rest)`);
      }
    }
  });

  it("take the user's own labels, trimmed", () => {
    expect(checkToolInput('add_label', { label: ' Clients ' })).toEqual({ ok: true, input: { label: 'Clients' } });
    expect(checkToolInput('remove_label', { label: 'Trash later' })).toEqual({ ok: true, input: { label: 'Trash later' } });
  });

  it('tell the model which labels it may not use', () => {
    const [add] = toolDefinitions(['add_label']);
    expect(add!.description).toMatch(/system labels \(INBOX, TRASH, SPAM/);
    expect(add!.input_schema).toMatchObject({ type: 'object', required: ['label'] });
  });
});

describe("a scheduled run's tools (mailbox scope)", () => {
  it('name the thread they act on, and leave out the tools that only make sense inside a thread', () => {
    const defs = toolDefinitions(['read_thread', 'sender_history', 'write_draft', 'search_mailbox', 'archive', 'add_label', 'send_reply'], 'mailbox');
    expect(defs.map((d) => d.name)).toEqual(['search_mailbox', 'archive', 'add_label', 'send_reply']);
    expect(defs.find((d) => d.name === 'archive')!.input_schema).toMatchObject({ required: ['thread_id'], additionalProperties: false });
    expect(checkToolInput('archive', { thread_id: '1a2b3c' }, 'mailbox')).toEqual({ ok: true, input: { thread_id: '1a2b3c' } });
    expect(checkToolInput('archive', {}, 'mailbox').ok).toBe(false);
    const odd = checkToolInput('send_reply', { thread_id: '../other-account', body: 'hi' }, 'mailbox');
    expect(odd.ok).toBe(false);
    // In a thread the same tools take no thread: they act on the one the mail started.
    expect(checkToolInput('archive', { thread_id: '1a2b3c' }).ok).toBe(false);
  });
});

describe('profiles that read the mailbox and send', () => {
  it('are the ones with send_reply and search_mailbox or sender_history', () => {
    expect(readsMailboxAndSends({ tools: ['read_thread', 'search_mailbox', 'send_reply'] })).toBe(true);
    expect(readsMailboxAndSends({ tools: ['sender_history', 'send_reply'] })).toBe(true);
    expect(readsMailboxAndSends({ tools: ['read_thread', 'send_reply', 'write_draft'] })).toBe(false);
    expect(readsMailboxAndSends({ tools: ['search_mailbox', 'sender_history', 'write_draft'] })).toBe(false);
  });
});
