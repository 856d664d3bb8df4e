// The demo's triage lesson: two demo newsletters in the Gmail emulator, their moved-back corrections
// seeded in Postgres, and the real derivation proposes "do not archive" for the demo shop, once.
// The demo's writing lesson, all through the real path: the demo questions reach thread workflows
// through the sync's inbox scan, the demo user edits our drafts' greeting and sends them in the Gmail
// emulator, the sync reads the sends, the threads keep the evidence, and the learning workflow
// proposes the greeting lesson, announced on Discord (the emulator), once.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { startGmailEmulator, type RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { startDiscordEmulator, type RunningDiscordEmulator } from '../../emulators/discord/index.js';
import { DEMO_NEWS_SENDER, DEMO_QUESTIONS, deliverDemoNewsletters, deliverDemoQuestions, ensureDemoTriageLesson, ensureDemoWritingLesson, type DemoWritingDeps } from '../../src/dev/demo-lessons.js';
import { lessonAspect } from '../../src/learning/auto-accept.js';
import { lessonEvents, listLessons } from '../../src/learning/memory.js';
import { requestFullScan } from '../../src/sync/notify.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';

const settings = { enabled: true, triageLessonAfter: 2, lookbackMs: 60 * 86_400_000, dryRunWindowMs: 30 * 86_400_000 };
const email = `demo-${randomUUID().slice(0, 8)}@durable-inbox.test`;
let gmail: RunningGmailEmulator;
let prisma: PrismaClient;
let accountId: string;

beforeAll(async () => {
  gmail = await startGmailEmulator({ quota: false });
  await gmail.control.createAccount({ email, name: 'Demo User' });
  prisma = createPrismaClient(inject('databaseUrl'));
  accountId = (await prisma.account.create({ data: { email } })).id;
});

afterAll(async () => {
  await prisma?.lesson.deleteMany({ where: { accountId } });
  await prisma?.account.deleteMany({ where: { id: accountId } });
  await prisma?.$disconnect();
  await gmail?.close();
});

describe('the demo triage lesson', () => {
  it('waits for the user after the demo newsletters, once', async () => {
    expect(await ensureDemoTriageLesson(gmail, prisma, accountId, email, settings)).toEqual([]); // no newsletters yet
    await deliverDemoNewsletters(gmail, email);
    const [id] = await ensureDemoTriageLesson(gmail, prisma, accountId, email, settings);
    const lessons = await listLessons(prismaExecutor(prisma), { accountId });
    expect(lessons).toHaveLength(1);
    expect(lessons[0]).toMatchObject({ id, state: 'proposed', scopeRef: DEMO_NEWS_SENDER });
    expect(lessons[0]!.current.text).toBe(`mail from ${DEMO_NEWS_SENDER}: do not archive (still newsletter; then: add_label:Newsletters)`);
    expect(lessons[0]!.current.evidence.map((e) => e.source)).toEqual(['moved_back', 'moved_back']);
    // A restart seeds and proposes nothing again.
    expect(await ensureDemoTriageLesson(gmail, prisma, accountId, email, settings)).toEqual([]);
    expect(await listLessons(prismaExecutor(prisma), { accountId })).toHaveLength(1);
  });
});

describe('the demo writing lesson', () => {
  let h: InboxHarness;
  let discord: RunningDiscordEmulator;
  let webhookId: string;
  let deps: DemoWritingDeps;

  beforeAll(async () => {
    discord = await startDiscordEmulator();
    const webhook = await discord.control.createWebhook({ name: 'Durable Inbox' });
    webhookId = webhook.id;
    h = await startInboxHarness({ env: { DISCORD_WEBHOOK_URL: webhook.url } });
    await h.startWorkers();
    const sync = { client: h.client, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE };
    deps = {
      gmail: h.gmail,
      prisma: h.prisma,
      client: h.client,
      sync,
      accountId: h.accountId,
      email: h.email,
      queues: { workflow: h.cfg.TEMPORAL_TASK_QUEUE, llm: h.cfg.LLM_TASK_QUEUE, gmail: h.cfg.GMAIL_TASK_QUEUE },
      timeoutMs: 45_000,
    };
  });

  afterAll(async () => {
    await h?.prisma.lesson.deleteMany({ where: { accountId: h.accountId } });
    await h?.prisma.writingEvidence.deleteMany({ where: { accountId: h.accountId } });
    await h?.close();
    await discord?.close();
  });

  it('waits for the user once the demo user answered the demo questions with their own greeting, once', async () => {
    expect(await ensureDemoWritingLesson(deps)).toEqual([]); // no demo questions yet
    await deliverDemoQuestions(h.gmail, h.email);
    await requestFullScan(deps.sync, h.accountId, { days: 7 }); // as connecting the demo account does

    const ids = await ensureDemoWritingLesson(deps);
    expect(ids).toHaveLength(1);
    const lessons = await listLessons(prismaExecutor(h.prisma), { accountId: h.accountId });
    expect(lessons).toHaveLength(1);
    expect(lessons[0]).toMatchObject({ id: ids[0], kind: 'preference', scope: 'account', state: 'proposed', current: { text: 'Open every reply with "Hello" and the first name.' } });
    expect(lessonAspect(lessons[0]!)).toBe('greeting');
    const evidence = lessons[0]!.current.evidence;
    expect(evidence.map((e) => [e.source, e.kind, e.argument])).toEqual([['sent', 'sent_edited', '+1 -1 line(s)'], ['sent', 'sent_edited', '+1 -1 line(s)']]);
    expect(evidence.map((e) => e.sender).sort()).toEqual(DEMO_QUESTIONS.map((q) => q.from.email).sort());
    // What the user sent, as the thread workflows kept it beside our drafts.
    const kept = await h.prisma.writingEvidence.findMany({ where: { accountId: h.accountId }, orderBy: { createdAt: 'asc' } });
    expect(kept.map((e) => (e.diff as { opens?: string }).opens).sort()).toEqual(['Hello Nina,', 'Hello Tom,']);
    // Announced on Discord, once.
    expect((await discord.control.messages(webhookId)).filter((m) => m.message.content.includes(ids[0]!))).toHaveLength(1);
    expect((await lessonEvents(prismaExecutor(h.prisma), ids[0]!)).map((e) => e.event)).toEqual(['proposed', 'notified']);

    // A restart answers nothing again and proposes nothing again.
    const sent = (await h.gmail.control.getState(h.email)).messages.filter((m) => m.labelIds.includes('SENT')).length;
    expect(await ensureDemoWritingLesson(deps)).toEqual([]);
    expect((await h.gmail.control.getState(h.email)).messages.filter((m) => m.labelIds.includes('SENT'))).toHaveLength(sent);
    expect(await listLessons(prismaExecutor(h.prisma), { accountId: h.accountId })).toHaveLength(1);
  });
});
