// `npm run cli -- actions ...` against the real dev server, Postgres and emulators: the journal
// listed and shown, approve and undo --since through the thread workflows, the kill switch, the
// category defaults and the policy settings, and bad arguments refused with a clear error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runActionsCli } from '../../src/cli/actions.js';
import { sinceDate } from '../../src/cli/command.js';
import { listActions } from '../../src/actions/journal.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';

let h: InboxHarness;

beforeAll(async () => {
  h = await startInboxHarness({
    settings: { actions: { sendDelayMs: 1000, approvalExpiryMs: 600_000, pauseLabel: 'Assistant Paused', awaitingApprovalLabel: 'Awaiting Approval' } },
  });
  await h.startWorkers();
});

afterAll(async () => {
  await h?.prisma.rule.deleteMany({ where: { scopeRef: { in: ['cli-news.example', 'cli-protected.example'] } } });
  await h?.prisma.safetySettings.deleteMany({ where: { scopeRef: h.accountId } });
  await h?.prisma.categoryActions.deleteMany({ where: { scopeRef: h.accountId } });
  await h?.close();
});

async function cli(...argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runActionsCli(h.cfg, argv, { out: (l) => lines.push(l) });
  return { code, out: lines.join('\n') };
}

const journal = (threadId: string) => listActions(prismaExecutor(h.prisma), { accountId: h.accountId, threadId, ascending: true });

describe('actions CLI', () => {
  it('changes a category default for one account, lists and shows the journal, and undoes the last hour', async () => {
    const set = await cli('defaults', '--account', h.email, '--category', 'newsletter', '--set', 'add_label:Reading,archive,mark_read');
    expect(set).toEqual({ code: 0, out: `newsletter mail of ${h.email} now gets: add_label:Reading,archive,mark_read` });
    expect((await cli('defaults', '--account', h.email)).out).toMatch(/newsletter\s+add_label:Reading,archive,mark_read/);

    await h.prisma.rule.create({ data: { scope: 'domain', scopeRef: 'cli-news.example', kind: 'deterministic', action: 'newsletter' } });
    const { threadId } = await deliverAndIngest(h, { from: 'Digest <d@cli-news.example>', subject: 'Digest', text: 'Reading list.' });
    await waitUntil('three actions done', async () => (await journal(threadId)).filter((a) => a.state === 'done').length === 3, { timeoutMs: 30_000 });

    const listed = await cli('list', '--account', h.email, '--thread', threadId);
    expect(listed.code).toBe(0);
    expect(listed.out).toMatch(/add_label Reading\s+-\s+done/);
    expect(listed.out).toMatch(/archive\s+-\s+done/);
    const [label] = await journal(threadId);
    const shown = await cli('show', label!.id);
    expect(shown.out).toContain(`undo       npm run cli -- actions undo ${label!.id}`);
    expect(shown.out).toMatch(/policy {5}run: add_label is not a dangerous action/);

    const undone = await cli('undo', '--account', h.email, '--since', '1h');
    expect(undone.code).toBe(0);
    expect(undone.out.split('\n').filter((l) => l.startsWith('undone'))).toHaveLength(3);
    expect((await journal(threadId)).map((a) => a.state)).toEqual(['undone', 'undone', 'undone']);
  });

  it('approves an action that waits, through its thread workflow', async () => {
    await cli('policy', '--account', h.email, '--protect', 'cli-protected.example');
    await h.prisma.rule.create({ data: { scope: 'domain', scopeRef: 'cli-protected.example', kind: 'deterministic', action: 'newsletter' } });
    const { threadId } = await deliverAndIngest(h, { from: 'VIP <vip@cli-protected.example>', subject: 'Letter', text: 'Hello.' });
    const archive = await waitUntil('archive waiting', async () => (await journal(threadId)).find((a) => a.kind === 'archive' && a.state === 'awaiting_approval'), { timeoutMs: 30_000 });
    expect((await cli('list', '--state', 'awaiting_approval', '--account', h.email)).out).toContain(archive.id);
    const approved = await cli('approve', archive.id);
    expect(approved).toEqual({ code: 0, out: `archive on thread ${threadId} (${archive.id}): done` });
    const again = await cli('approve', archive.id);
    expect(again.code).toBe(1);
    expect(again.out).toMatch(/cannot approve action .*: it is done/);
  });

  it('pauses and resumes every automatic action', async () => {
    expect((await cli('pause', '--account', h.email)).out).toMatch(/^paused for .*drafting goes on/);
    expect((await cli('policy', '--account', h.email)).out).toMatch(/PAUSED/);
    expect((await cli('resume', '--account', h.email)).out).toMatch(/^resumed/);
    expect((await cli('policy', '--account', h.email)).out).not.toMatch(/PAUSED/);
  });

  it('sets the policy: allowances, forward addresses, the send cap', async () => {
    const out = (await cli('policy', '--account', h.email, '--allow', 'forward:sender:Boss@Corp.example', '--forward-to', 'me@home.example', '--sends-per-hour', '3')).out;
    expect(out).toMatch(/allowed without approval\s+forward:sender:boss@corp\.example/);
    expect(out).toMatch(/forwards only to\s+me@home\.example/);
    expect(out).toMatch(/automatic sends per hour\s+3/);
  });

  it.each([
    [['list', '--state', 'nope'], /--state: expected one of queued, /],
    [['list', '--limit', '0'], /--limit: expected 1 to 1000/],
    [['undo', '--since', '1h'], /undo --since needs --account/],
    [['undo', '--account', 'x@y.example', '--since', 'yesterday'], /no account|--since: expected a duration/],
    [['defaults', '--category', 'newsletter', '--set', 'forward'], /--set: action 1: forward needs an argument/],
    [['defaults', '--category', 'newsletter', '--set', 'add_label:INBOX'], /is a Gmail system label/],
    [['defaults', '--category', 'newsletter', '--set', 'add_label:spam'], /add_label: spam is a Gmail system label/],
    [['defaults', '--category', 'newsletter', '--set', 'remove_label:CATEGORY_PROMOTIONS'], /is a Gmail system label/],
    [['policy', '--allow', 'forward:domain'], /--allow: domain needs a reference/],
    [['show', 'not-an-id'], /no action not-an-id/],
    [['frobnicate'], /^usage: npm run cli -- actions list/],
  ])('refuses %j with a clear error (exit 2)', async (argv, message) => {
    const result = await cli(...argv);
    expect(result.code).toBe(2);
    expect(result.out).toMatch(message);
  });

  it('reads --since durations', () => {
    expect(sinceDate('90m', 10_000_000).getTime()).toBe(10_000_000 - 90 * 60_000);
    expect(sinceDate('2d', 1e12).getTime()).toBe(1e12 - 2 * 86_400_000);
  });
});
