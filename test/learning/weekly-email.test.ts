// The weekly "what I learned" e-mail through the real path: the learning workflow on the dev server
// (its Schedule's arguments), the Gmail worker inserting into the Gmail emulator's inbox, PostgreSQL.
// Run twice in one week it puts one e-mail there (unread, labelled Lessons, holding the proposal's
// text), which the built-in rule files as fyi; an account with nothing to report gets none.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { learningWorkflow } from '../../src/learning/learning-workflow.js';
import { proposeLesson } from '../../src/learning/memory.js';
import { createWeeklyEmailActivities, LESSONS_REPORT_HEADER, weeklyReportMessageId } from '../../src/learning/weekly-email-activities.js';
import { BUILTIN_RULES, evaluateRules } from '../../src/rules/rules.js';
import { LEARNING_SCHEDULE_ID, scheduleDefinitions } from '../../src/schedules/schedules.js';
import { isoWeekOf, parseWeeklyTime, type WeeklyTime } from '../../src/time/index.js';
import { recordWorkflowHistory } from '../helpers/histories.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';

const tag = randomUUID().slice(0, 8);
const LESSON = `Mention the PO number ${tag} in every invoice reply.`;
let h: InboxHarness;

/** The learning workflow with the arguments its Schedule starts it with. */
async function learn() {
  const [schedule] = scheduleDefinitions({
    retentionDays: 30,
    taskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
    learning: { every: '1 hour', llmTaskQueue: h.cfg.LLM_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE },
  }).filter((s) => s.scheduleId === LEARNING_SCHEDULE_ID);
  const [scheduled] = (schedule!.action as unknown as { args: Parameters<typeof learningWorkflow> }).args;
  // Only this test's account: the shared test database holds other files' accounts, whose emulators are gone.
  const args: Parameters<typeof learningWorkflow> = [{ ...scheduled, accountIds: [h.accountId] }];
  const handle = await h.client.workflow.start(learningWorkflow, { taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, workflowId: `learning-${tag}-${randomUUID().slice(0, 8)}`, args });
  return { handle, result: await handle.result() };
}

/** Every message in the mailbox: the gate's calls must not add one. */
const mailsNow = async () => (await h.gmail.control.getState(h.email)).messages.length;
const lessonsMail = async () => (await h.gmail.control.getState(h.email)).messages.filter((m) => m.subject.startsWith('[durable-inbox] What I learned this week'));

beforeAll(async () => {
  // From the start of each week, so the e-mail is due whenever this runs (the gate has its own test below).
  h = await startInboxHarness({ env: { LEARNING_WEEKLY_EMAIL: 'mon 00:00' } });
  await h.startWorkers();
});

afterAll(async () => {
  await h?.prisma.lesson.deleteMany({ where: { accountId: h.accountId } });
  await h?.close();
});

describe('the weekly "what I learned" e-mail', () => {
  it('an account with no lessons gets none', async () => {
    const { result } = await learn();
    expect(result.weekly?.filter((w) => w.accountId === h.accountId)).toEqual([]);
    expect(await lessonsMail()).toEqual([]);
  });

  it('the learning workflow run twice in the same week inserts one e-mail holding the proposal', async () => {
    await proposeLesson(prismaExecutor(h.prisma), {
      accountId: h.accountId,
      kind: 'procedure',
      scope: 'account',
      text: LESSON,
      evidence: [{ source: 'sent', threadId: 't1', kind: 'sent_edited', sender: 'ann@client.example', at: new Date().toISOString(), link: 'https://mail.google.com/mail/u/0/#all/t1' }],
      createdBy: 'learning',
    });
    const week = isoWeekOf(new Date(), 'UTC');

    const first = await learn();
    const mine = (r: typeof first.result) => r.weekly?.find((w) => w.accountId === h.accountId);
    expect(mine(first.result)).toMatchObject({ week, inserted: true, gmailMessageId: expect.any(String) });
    await recordWorkflowHistory(first.handle, 'learning-weekly-email');

    const second = await learn();
    expect(mine(second.result)).toEqual({ ...mine(first.result), inserted: false });
    expect(first.result.skipped.concat(second.result.skipped).filter((s) => s.accountId === h.accountId)).toEqual([]);

    const mails = await lessonsMail();
    expect(mails).toHaveLength(1);
    const { gmail } = await h.accountGmail();
    const labels = new Map((await gmail.listLabels()).map((l) => [l.id, l.name]));
    expect(mails[0]!.labelIds.map((id) => labels.get(id) ?? id).sort()).toEqual(['INBOX', 'Lessons', 'UNREAD']);

    const message = await gmail.getMessage(mails[0]!.id);
    expect(message.body).toContain(`Waiting for you (1):\n- ${LESSON}`);
    expect(message.body).toContain('npm run cli -- memory accept <lesson id>');
    expect(message.headers['message-id']).toBe(weeklyReportMessageId(h.accountId, week));
    expect(message.headers[LESSONS_REPORT_HEADER.toLowerCase()]).toBe(week);

    // The rules file it as mail to read: fyi, no action, left unread in the inbox.
    const decision = evaluateRules(BUILTIN_RULES, { from: h.email, to: h.email, subject: mails[0]!.subject, date: '', body: message.body, headers: message.headers, sender: h.email });
    expect(decision).toMatchObject({ decided: true, category: 'fyi', ruleId: 'builtin:own-lessons' });
  });

  it('waits for its weekday and time in the account\'s zone, and never goes out when off', async () => {
    await h.prisma.account.update({ where: { id: h.accountId }, data: { timeZone: 'Europe/Berlin' } });
    try {
      const activity = (sendFrom: WeeklyTime | null, now: string) =>
        createWeeklyEmailActivities({ db: prismaExecutor(h.prisma), accounts: h.gmailAccounts(), label: 'Lessons', sendFrom, now: () => new Date(now) });
      const before = await mailsNow();
      // Monday 30 November 2026, 06:30 UTC is 07:30 in Berlin: half an hour before Monday 08:00 there.
      const early = await activity(parseWeeklyTime('mon 08:00'), '2026-11-30T06:30:00Z').deliverWeeklyReport({ accountId: h.accountId });
      expect(early).toEqual({ accountId: h.accountId, week: '2026-W49', gmailMessageId: null, inserted: false, note: 'not yet: it goes out from Mon 30 Nov 2026 08:00 Europe/Berlin (07:00 UTC)' });
      const off = await activity(null, '2026-11-30T09:00:00Z').deliverWeeklyReport({ accountId: h.accountId });
      expect(off.note).toBe('the weekly e-mail is off (LEARNING_WEEKLY_EMAIL)');
      expect(off.gmailMessageId).toBeNull();
      expect(await mailsNow()).toBe(before);
    } finally {
      await h.prisma.account.update({ where: { id: h.accountId }, data: { timeZone: null } });
    }
  });
});
