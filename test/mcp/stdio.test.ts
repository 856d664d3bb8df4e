// The MCP server over stdio through the SDK's own client: `npm run mcp` spawned as a client spawns it,
// against the real dev server, PostgreSQL and the Gmail and Anthropic emulators. What waits is listed
// with the mail marked as data; an auto-reply approved through MCP is sent once and journaled as
// decided by mcp; a snoozed thread leaves the inbox and comes back; rules are added, tried, removed;
// bad arguments are refused with the reason and change nothing.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listActions, loadAction } from '../../src/actions/journal.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { UNTRUSTED_TAG, untrustedData } from '../../src/mcp/untrusted.js';
import { projectRoot } from '../../src/temporal/project-root.js';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { actionSettings, actionUntil, HOSTILE_SUBJECT, inInbox, sentIn, textOf, waitingAutoReply } from '../helpers/mcp.js';

let h: InboxHarness;
let stdio: Client;
const db = () => prismaExecutor(h.prisma);

beforeAll(async () => {
  h = await startInboxHarness({ settings: { actions: actionSettings } });
  await h.startWorkers();
  // `npm run mcp`, started as a client starts it (docs/mcp.md), with the harness's configuration.
  stdio = new Client({ name: 'mcp-test', version: '1.0.0' });
  await stdio.connect(
    new StdioClientTransport({
      command: 'npm',
      args: ['run', '--silent', 'mcp'],
      cwd: projectRoot(),
      env: { ...(process.env as Record<string, string>), ...h.env },
      stderr: 'inherit',
    }),
  );
});

afterAll(async () => {
  await stdio?.close();
  await h?.close();
});

describe('over stdio', () => {
  it('lists its tools, each with a description and an input schema', async () => {
    const { tools } = await stdio.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ['list_threads', 'show_thread', 'list_actions', 'show_action', 'list_lessons', 'list_reminders', 'list_schedules', 'approve_action', 'reject_action', 'undo_action', 'snooze_thread', 'unsnooze_thread', 'remind_thread', 'send_later', 'cancel_timer', 'accept_lesson', 'reject_lesson', 'revert_lesson', 'add_rule', 'test_rules', 'remove_rule', 'trigger_schedule']) {
      expect(names).toContain(name);
    }
    for (const t of tools) {
      expect(t.description!.length, t.name).toBeGreaterThan(20);
      expect(t.inputSchema.type).toBe('object');
    }
  });

  it('lists what waits, with what it would send marked as mail data; approving sends it once, journaled as decided by mcp', async () => {
    const { threadId, action } = await waitingAutoReply(h, 'mcp-stdio.example');
    const listed = await stdio.callTool({ name: 'list_actions', arguments: {} });
    expect(listed.isError).toBeFalsy();
    const text = textOf(listed);
    // The mail sits inside one tag, escaped: its subject can neither close the tag nor open another.
    expect(text.split(`<${UNTRUSTED_TAG}>`)).toHaveLength(2);
    expect(text.split(`</${UNTRUSTED_TAG}>`)).toHaveLength(2);
    expect(text.trimEnd().endsWith(`</${UNTRUSTED_TAG}>`)).toBe(true);
    const waiting = untrustedData(text) as { id: string; kind: string; sendsTo: string[]; wouldSend: string; state: string; subject: string }[];
    const mine = waiting.find((a) => a.id === action.id)!;
    expect(mine).toMatchObject({ kind: 'auto_reply', state: 'awaiting_approval', sendsTo: ['jo@mcp-stdio.example'], subject: HOSTILE_SUBJECT });
    expect(mine.wouldSend.trim()).toBe(action.result!.body!.trim());

    const approved = await stdio.callTool({ name: 'approve_action', arguments: { action_id: action.id } });
    expect(approved.isError, textOf(approved)).toBeFalsy();
    const done = await actionUntil(h, threadId, 'auto_reply', (a) => a.state === 'done');
    expect(done.decidedBy).toBe('mcp');
    expect((await sentIn(h, threadId)).map((m) => m.id)).toEqual([done.result!.sentMessageId]);

    // Approving again changes nothing: the reason comes back as an error.
    const again = await stdio.callTool({ name: 'approve_action', arguments: { action_id: action.id } });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toMatch(/cannot approve action .*it is done/);
    expect(await sentIn(h, threadId)).toHaveLength(1);
  });

  it('snoozes a thread (out of the inbox, journaled as mcp) and brings it back', async () => {
    const { threadId } = await deliverAndIngest(h, { from: 'Bob <bob@partner.example>', subject: 'Office closed', text: 'Just so you know: closed on Monday.' });
    await h.waitFor(threadId, (s) => s.pendingEvents === 0);
    const snoozed = await stdio.callTool({ name: 'snooze_thread', arguments: { thread_id: threadId, until: '2030-01-15 09:00' } });
    expect(snoozed.isError, textOf(snoozed)).toBeFalsy();
    await h.waitFor(threadId, (s) => (s.wakes ?? []).some((w) => w.kind === 'snooze') && s.pendingEvents === 0);
    expect(await inInbox(h, threadId)).toBe(false);
    const snooze = await actionUntil(h, threadId, 'snooze', (a) => a.state === 'scheduled');
    expect(snooze.decidedBy).toBe('mcp');

    const shown = untrustedData(textOf(await stdio.callTool({ name: 'show_thread', arguments: { thread_id: threadId } }))) as { waitsFor: { timer: string; at: string }[] };
    expect(shown.waitsFor).toEqual([expect.objectContaining({ timer: 'snooze', at: '2030-01-15T09:00:00.000Z' })]);

    const back = await stdio.callTool({ name: 'unsnooze_thread', arguments: { thread_id: threadId } });
    expect(back.isError, textOf(back)).toBeFalsy();
    await h.waitFor(threadId, (s) => !(s.wakes ?? []).some((w) => w.kind === 'snooze') && s.pendingEvents === 0);
    expect(await inInbox(h, threadId)).toBe(true);
    expect(await loadAction(db(), snooze.id)).toMatchObject({ state: 'undone', decidedBy: 'mcp', note: 'cancelled (mcp)' });
  });

  it('sends a thread’s draft later (journaled as mcp) and cancels it before it goes', async () => {
    const { threadId } = await deliverAndIngest(h, { from: 'Carol <carol@partner.example>', subject: 'Quarterly numbers', text: 'Hi,\n\nCould you send me the quarterly numbers by Friday?\n\nThanks, Carol' });
    await h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0);
    const later = await stdio.callTool({ name: 'send_later', arguments: { thread_id: threadId, at: '2030-01-15 09:00' } });
    expect(later.isError, textOf(later)).toBeFalsy();
    const scheduled = await actionUntil(h, threadId, 'send_later', (a) => a.state === 'scheduled');
    expect(scheduled.decidedBy).toBe('mcp');

    const cancelled = await stdio.callTool({ name: 'cancel_timer', arguments: { thread_id: threadId, timer: 'send_later' } });
    expect(cancelled.isError, textOf(cancelled)).toBeFalsy();
    const undone = await actionUntil(h, threadId, 'send_later', (a) => a.state === 'undone');
    expect(undone).toMatchObject({ id: scheduled.id, decidedBy: 'mcp' });
    expect(await sentIn(h, threadId)).toHaveLength(0);
  });

  it('refuses a bad argument with the reason, changing nothing', async () => {
    const { threadId } = await deliverAndIngest(h, { from: 'Bob <bob@partner.example>', subject: 'Later', text: 'No rush.' });
    await h.waitFor(threadId, (s) => s.pendingEvents === 0);
    const unreadable = await stdio.callTool({ name: 'snooze_thread', arguments: { thread_id: threadId, until: 'when pigs fly' } });
    expect(unreadable.isError).toBe(true);
    expect(textOf(unreadable)).toMatch(/^refused: --until: .*when pigs fly.*; nothing changed$/s);
    const noThread = await stdio.callTool({ name: 'snooze_thread', arguments: { thread_id: 'no-such-thread', until: 'tomorrow' } });
    expect(textOf(noThread)).toBe('refused: no thread no-such-thread; nothing changed');
    // Outside the schema: the SDK refuses before any of our code runs.
    const badTimer = await stdio.callTool({ name: 'cancel_timer', arguments: { thread_id: threadId, timer: 'nap' } });
    expect(badTimer.isError).toBe(true);
    expect(textOf(badTimer)).toMatch(/Input validation error.*expected one of "follow_up"\|"snooze"\|"remind"\|"send_later" at timer/);
    const noId = await stdio.callTool({ name: 'approve_action', arguments: {} });
    expect(noId.isError).toBe(true);
    expect(textOf(noId)).toMatch(/Input validation error.*action_id/);
    const status = await h.waitFor(threadId, (s) => s.pendingEvents === 0);
    expect(status.wakes ?? []).toEqual([]);
    expect((await listActions(db(), { accountId: h.accountId, threadId })).filter((a) => a.reason.source === 'user')).toEqual([]);
  });
});

describe('rules over stdio', () => {
  it('adds a rule, tests an email against it, refuses a malformed one, and removes it', async () => {
    const sender = 'Billing <billing@mcp-rules.example>';
    const bad = await stdio.callTool({ name: 'add_rule', arguments: { scope: 'global', ref: 'mcp-rules.example', category: 'automated' } });
    expect(textOf(bad)).toBe('refused: --ref: global rules take no --ref; account, domain and sender rules need one; nothing changed');
    const added = await stdio.callTool({ name: 'add_rule', arguments: { scope: 'sender', ref: 'billing@mcp-rules.example', category: 'automated', subject: 'invoice' } });
    expect(added.isError, textOf(added)).toBeFalsy();
    const ruleId = /^added rule (\S+):/.exec(textOf(added))![1]!;
    const row = await h.prisma.rule.findUniqueOrThrow({ where: { id: ruleId } });
    expect(row).toMatchObject({ scope: 'sender', scopeRef: 'billing@mcp-rules.example', action: 'automated', conditions: { subject: 'invoice' } });

    const decided = await stdio.callTool({ name: 'test_rules', arguments: { from: sender, subject: 'Invoice 7' } });
    expect(textOf(decided)).toContain(`decided by rule ${ruleId}: automated`);
    expect(textOf(await stdio.callTool({ name: 'test_rules', arguments: { from: sender, subject: 'Lunch?' } }))).toContain('no rule decides: the LLM classifies it');

    const removed = await stdio.callTool({ name: 'remove_rule', arguments: { rule_id: ruleId } });
    expect(textOf(removed)).toBe(`Removed rule ${ruleId}; it takes effect with the next email.`);
    expect(await h.prisma.rule.findUnique({ where: { id: ruleId } })).toBeNull();
    expect(textOf(await stdio.callTool({ name: 'remove_rule', arguments: { rule_id: ruleId } }))).toMatch(/^refused: no rule /);
  });
});

