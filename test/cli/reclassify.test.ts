// `threads reclassify` after the user changed a rule, end to end: the real dev server, Postgres and
// the emulators. The thread classifies its latest message again, the decision log keeps both
// decisions, the new category's actions run once, and asking again changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listActions } from '../../src/actions/journal.js';
import { runThreadsCli } from '../../src/cli/threads.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { recordHistory } from '../helpers/histories.js';
import { waitUntil } from '../helpers/wait-until.js';

let h: InboxHarness;
const ruleIds: string[] = [];

async function cli(...argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runThreadsCli(h.cfg, argv, { out: (l) => lines.push(l) });
  return { code, out: lines.join('\n') };
}

const decisionsOf = (threadId: string) =>
  h.prisma.decision.findMany({ where: { accountId: h.accountId, thread: { gmailThreadId: threadId } }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });

const doneActions = async (threadId: string) =>
  (await listActions(prismaExecutor(h.prisma), { accountId: h.accountId, threadId, ascending: true })).filter((a) => a.state === 'done');

beforeAll(async () => {
  h = await startInboxHarness();
  await h.startWorkers();
});

afterAll(async () => {
  await h?.prisma.rule.deleteMany({ where: { id: { in: ruleIds } } });
  await h?.close();
});

describe('threads reclassify', () => {
  it('classifies again with the new rule, keeps both decisions, acts once, and a second request changes nothing', async () => {
    const { threadId } = await deliverAndIngest(h, {
      from: 'Vendor Updates <updates@vendor.example>',
      subject: 'Your invoice',
      text: 'Could you confirm the invoice total by Friday?',
    });
    // The model takes it for an automated notice: no draft, read, labelled Notifications.
    await waitUntil('the automated actions done', async () => (await doneActions(threadId)).some((a) => a.kind === 'add_label'));
    await h.waitFor(threadId, (s) => s.state === 'skipped' && s.pendingEvents === 0);
    await waitUntil('the decisions saved', async () => (await decisionsOf(threadId)).some((d) => d.kind === 'skip'));
    expect((await decisionsOf(threadId)).filter((d) => d.kind === 'classify').map((d) => d.source)).toEqual(['llm']);
    // Live mail goes first (priority 1 of 1..5), with the account as its fairness key.
    expect((await h.handle(threadId).describe()).priority).toMatchObject({ priorityKey: 1, fairnessKey: h.accountId });

    // The user says this sender's mail needs a response, and asks for the thread to be classified again.
    const rule = await h.prisma.rule.create({ data: { scope: 'domain', scopeRef: 'vendor.example', kind: 'deterministic', action: 'needs_response' } });
    ruleIds.push(rule.id);
    const asked = await cli('reclassify', threadId, '--account', h.email);
    expect(asked.code).toBe(0);
    expect(asked.out).toContain(`reclassifying  ${threadId} (skipped)`);

    await h.waitFor(threadId, (s) => s.state === 'drafted');
    await waitUntil('the new decisions saved', async () => (await decisionsOf(threadId)).some((d) => d.kind === 'draft'));
    const decisions = await decisionsOf(threadId);
    expect(decisions.filter((d) => d.kind === 'classify').map((d) => d.source)).toEqual(['llm', 'rules']);
    expect(decisions.find((d) => d.kind === 'reclassify')?.detail).toMatchObject({ text: 'classify again (was automated)' });
    const row = await h.prisma.thread.findFirstOrThrow({ where: { accountId: h.accountId, gmailThreadId: threadId } });
    expect(row.category).toBe('needs_response');
    const drafts = async () => (await h.gmail.control.getState(h.email)).drafts.filter((d) => d.threadId === threadId);
    expect(await drafts()).toHaveLength(1);

    // The same verdict again: recorded, nothing more done.
    const before = (await doneActions(threadId)).length;
    expect((await cli('reclassify', threadId)).code).toBe(0);
    await waitUntil('the second request recorded', async () =>
      (await decisionsOf(threadId)).some((d) => d.kind === 'skip' && (d.detail as { text?: string }).text === 'still needs_response: nothing changes'),
    );
    expect((await doneActions(threadId)).length).toBe(before);
    expect(await drafts()).toHaveLength(1);
    const shown = await cli('show', threadId);
    expect(shown.out).toMatch(/classify\s+llm\s+automated/);
    expect(shown.out).toMatch(/classify\s+rules\s+needs_response/);
    await recordHistory(h, threadId, 'thread-reclassified');
  });

  it('reclassifies every open thread of an account touched since, and leaves closed ones as they are', async () => {
    const a = await deliverAndIngest(h, { from: 'Ann <ann@since.example>', subject: 'Lunch?', text: 'Are you free for lunch on Tuesday?' });
    const b = await deliverAndIngest(h, { from: 'Ben <ben@since.example>', subject: 'Report', text: 'Can you review the report today?' });
    await h.waitFor(a.threadId, (s) => s.state === 'drafted');
    await h.waitFor(b.threadId, (s) => s.state === 'drafted');
    await h.prisma.thread.updateMany({ where: { accountId: h.accountId, gmailThreadId: b.threadId }, data: { state: 'archived' } });

    const asked = await cli('reclassify', '--account', h.email, '--since', '1h');
    expect(asked.code).toBe(0);
    expect(asked.out).toContain(`reclassifying  ${a.threadId}`);
    expect(asked.out).toContain(`left as it is  ${b.threadId} (archived)`);
    await waitUntil('thread a classified again', async () => (await decisionsOf(a.threadId)).some((d) => d.kind === 'reclassify'));
    expect((await decisionsOf(b.threadId)).some((d) => d.kind === 'reclassify')).toBe(false);
  });

  it('refuses bad arguments with the usage and changes nothing', async () => {
    expect(await cli('reclassify')).toMatchObject({ code: 2, out: expect.stringContaining('needs a thread id, or --account and --since') });
    expect(await cli('reclassify', '--since', '2d')).toMatchObject({ code: 2, out: expect.stringContaining('--since needs --account') });
    expect(await cli('reclassify', 'x', '--since', '2d')).toMatchObject({ code: 2, out: expect.stringContaining('not both') });
    expect(await cli('reclassify', '--account', h.email, '--since', 'soon')).toMatchObject({ code: 2, out: expect.stringContaining('expected a duration') });
    expect(await cli('reclassify', 'no-such-thread')).toMatchObject({ code: 2, out: expect.stringContaining('no thread no-such-thread') });
  });
});
