// Corrections the thread sees in Gmail, end to end: real thread workflows archive and label
// newsletters in the Gmail emulator; the user moves threads back to the inbox, removes our label, and
// files threads under a label of their own, in the emulator; the sync reads the history
// (syncHistoryPage, as the account's sync workflow runs it) and hands the changes to the threads,
// which record them as corrections and derive the account's triage lessons at once: proposals wait
// in Postgres with their evidence, and our own changes (our labels, an undo) are no corrections.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runActionsCli } from '../../src/cli/actions.js';
import { listActions } from '../../src/actions/journal.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { listLessons } from '../../src/learning/memory.js';
import { widens } from '../../src/learning/contracts.js';
import { startDiscordEmulator, type RunningDiscordEmulator } from '../../emulators/discord/index.js';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { recordHistory } from '../helpers/histories.js';
import { newsletterCorrections, type NewsletterCorrections } from '../helpers/newsletter-corrections.js';
import { waitUntil } from '../helpers/wait-until.js';

const tag = randomUUID().slice(0, 8);
const domain = `shop-${tag}.example`;
const movedBack = `news@${domain}`;
const unlabelled = `deals@${domain}`;
const filed = `receipts@${domain}`;
let h: InboxHarness;
let discord: RunningDiscordEmulator;
let webhookId: string;
let world: NewsletterCorrections;

const db = () => prismaExecutor(h.prisma);
const journal = (threadId: string) => listActions(db(), { accountId: h.accountId, threadId, ascending: true });
const corrections = (threadId?: string) =>
  h.prisma.learningCorrection.findMany({ where: { accountId: h.accountId, ...(threadId ? { gmailThreadId: threadId } : {}) }, orderBy: { id: 'asc' } });
const lessonFor = async (sender: string) => (await listLessons(db(), { accountId: h.accountId })).find((l) => l.scopeRef === sender);

/** The sync reads the mailbox's history since the last call and hands the changes to the threads. */
const syncNow = () => world.syncNow();

/** A newsletter from `from`, handled by its thread workflow until its label and archive are done. */
async function newsletter(from: string, subject: string): Promise<string> {
  const { threadId } = await deliverAndIngest(h, { from: `Shop <${from}>`, subject, text: 'This week in the shop.' });
  await waitUntil(`${subject}: actions done`, async () => (await journal(threadId)).filter((a) => a.state === 'done').length === 2, { timeoutMs: 30_000 });
  return threadId;
}

const userChanges = (threadId: string, change: { add?: string[]; remove?: string[] }) => h.gmail.control.modifyLabels(h.email, { threadId, ...change });

beforeAll(async () => {
  discord = await startDiscordEmulator();
  const webhook = await discord.control.createWebhook({ name: 'Durable Inbox' });
  webhookId = webhook.id;
  h = await startInboxHarness({ env: { TRIAGE_LESSON_AFTER: '2', DISCORD_WEBHOOK_URL: webhook.url, PUBLIC_BASE_URL: 'http://127.0.0.1:3999' } });
  await h.startWorkers();
  world = await newsletterCorrections(h, domain);
});

afterAll(async () => {
  await world?.cleanUp();
  await h?.close();
  await discord?.close();
});

describe('corrections of triage seen in Gmail', () => {
  it('a newsletter moved back to the inbox twice proposes "do not archive"; our own labels and an undo are no corrections', async () => {
    const threads = [await newsletter(movedBack, 'Issue 1'), await newsletter(movedBack, 'Issue 2')];
    await syncNow(); // our own label and archive come back through history: nothing to learn
    await userChanges(threads[0]!, { add: ['INBOX'] });
    await syncNow();
    await waitUntil('first correction', async () => (await corrections(threads[0])).length === 1, { timeoutMs: 30_000 });
    expect(await lessonFor(movedBack)).toBeUndefined(); // once is not a habit

    await userChanges(threads[1]!, { add: ['INBOX'] });
    await syncNow();
    const lesson = await waitUntil('lesson proposed', () => lessonFor(movedBack), { timeoutMs: 30_000 });
    expect(lesson).toMatchObject({ kind: 'triage', scope: 'sender', state: 'proposed', current: { rule: { category: 'newsletter', actions: [{ kind: 'add_label', argument: 'Newsletters' }] } } });
    expect(lesson.current.text).toBe(`mail from ${movedBack}: do not archive (still newsletter; then: add_label:Newsletters)`);
    expect(lesson.current.evidence.map((e) => [e.source, e.kind, e.threadId]).sort()).toEqual(threads.map((t) => ['moved_back', 'archive', t]).sort());
    expect(lesson.current.evidence.every((e) => e.actionId !== undefined)).toBe(true);

    const rows = await corrections();
    expect(rows.map((r) => [r.gmailThreadId, r.source, r.kind, r.sender])).toEqual(threads.map((t) => [t, 'moved_back', 'archive', movedBack]));
    // The thread's decision log says what it saw and what it proposed.
    const status = await h.waitFor(threads[1]!, (s) => s.decisions.some((d) => d.kind === 'correction' && d.source === 'system'));
    expect(status.decisions.filter((d) => d.kind === 'correction').map((d) => d.detail)).toEqual([
      'you moved it back to the inbox after we archived it',
      `lesson(s) proposed: ${lesson.id}`,
    ]);
    // Discord is told once, with the lesson's text and a signed link to it on the approvals page.
    const posted = await waitUntil('discord message', async () => {
      const messages = (await discord.control.messages(webhookId)).filter((m) => m.message.content.includes(lesson.id));
      return messages.length > 0 && messages;
    }, { timeoutMs: 30_000 });
    expect(posted).toHaveLength(1);
    expect(posted[0]!.message.content).toContain(`do not archive (still newsletter; then: add\\_label:Newsletters)`);
    expect(posted[0]!.message.content).toMatch(new RegExp(`<http://127\\.0\\.0\\.1:3999/approvals/l/${lesson.id}\\?exp=\\d+&sig=[\\w-]+>`));
    await recordHistory(h, threads[1]!, 'thread-correction-moved-back');

    // The same history read again (a redelivered page) records nothing twice.
    const before = await world.loadCursor();
    expect(before).toBe(world.cursor);
    await h.ingest(threads[0]!, { type: 'labels_changed', messageId: 'm', changeId: 'again', added: [], removed: [], inboxAdded: true });
    await h.waitFor(threads[0]!, (s) => s.pendingEvents === 0);
    expect(await corrections()).toHaveLength(2);

    // An archive the user undid through us comes back to the inbox through us: not a moved-back correction.
    const third = await newsletter(movedBack, 'Issue 3');
    const archive = (await journal(third)).find((a) => a.kind === 'archive')!;
    expect(await runActionsCli(h.cfg, ['undo', archive.id], { out: () => undefined })).toBe(0);
    await waitUntil('undone', async () => (await journal(third)).find((a) => a.kind === 'archive')?.state === 'undone', { timeoutMs: 30_000 });
    await syncNow();
    await h.waitFor(third, (s) => s.pendingEvents === 0);
    expect(await corrections(third)).toEqual([]);
    expect((await discord.control.messages(webhookId)).filter((m) => m.message.content.includes(lesson.id))).toHaveLength(1);
  });

  it('our label removed twice proposes "do not add_label"; a label the user files twice proposes adding it, never widening', async () => {
    const plain = [await newsletter(unlabelled, 'Deal 1'), await newsletter(unlabelled, 'Deal 2')];
    const receipts = [await newsletter(filed, 'Receipt 1'), await newsletter(filed, 'Receipt 2')];
    await syncNow();
    for (const t of plain) await userChanges(t, { remove: ['Newsletters'] });
    for (const t of receipts) await userChanges(t, { add: ['Receipts'] });
    await syncNow();

    const dropped = await waitUntil('label lesson', () => lessonFor(unlabelled), { timeoutMs: 30_000 });
    expect(dropped.current.text).toBe(`mail from ${unlabelled}: do not add_label:Newsletters (still newsletter; then: archive)`);
    expect(dropped.current.evidence.map((e) => e.source)).toEqual(['label_removed', 'label_removed']);

    const added = await waitUntil('filed lesson', () => lessonFor(filed), { timeoutMs: 30_000 });
    expect(added.current.text).toBe(`mail from ${filed}: also add_label:Receipts, as you filed it (still newsletter; then: add_label:Newsletters,archive,add_label:Receipts)`);
    expect(added.current.rule!.actions).toEqual([{ kind: 'add_label', argument: 'Newsletters' }, { kind: 'archive' }, { kind: 'add_label', argument: 'Receipts' }]);
    expect(widens([{ kind: 'add_label', argument: 'Newsletters' }, { kind: 'archive' }], added.current.rule!.actions)).toBe(false);
    expect(added.current.evidence.map((e) => [e.source, e.argument, e.actionId])).toEqual([
      ['label_added', 'Receipts', undefined],
      ['label_added', 'Receipts', undefined],
    ]);
    // The label our own action put on (Newsletters) never counted as one the user added.
    expect((await corrections()).filter((c) => c.source === 'label_added').map((c) => c.argument)).toEqual(['Receipts', 'Receipts']);
  });
});
