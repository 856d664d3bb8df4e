// What a scheduled run wants changed in Gmail becomes an action of the thread it names, under the
// same policy, journal and approvals as the thread's own: the run hands the proposal to the thread's
// workflow (running, or started for it), which judges, journals and carries it out or waits for the
// user. Real dev server, Postgres, Gmail and Anthropic emulators (a scripted tool-use conversation).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideAction } from '../../src/thread/decide.js';
import { listActions, updateSafetySettings } from '../../src/actions/journal.js';
import { saveAgentProfile } from '../../src/agent/profiles.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { scheduleIdOf } from '../../src/schedules/contracts.js';
import { listScheduleRuns } from '../../src/schedules/schedule-store.js';
import { addUserSchedule } from '../../src/schedules/user-schedules.js';
import { deliver, deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { recordHistory, recordWorkflowHistory } from '../helpers/histories.js';
import { waitUntil } from '../helpers/wait-until.js';

let h: InboxHarness;
const db = () => prismaExecutor(h.prisma);

beforeAll(async () => {
  h = await startInboxHarness({ env: { SCHEDULE_JITTER: '0s' } });
  await h.startWorkers();
}, 60_000);

afterAll(async () => {
  for (const s of (await h?.prisma.agentSchedule.findMany({ where: { accountId: h.accountId } })) ?? []) {
    await h.client.schedule.getHandle(scheduleIdOf(s.id)).delete().catch(() => {});
  }
  await h?.close();
});

const actionsOf = (threadId: string) => listActions(db(), { accountId: h.accountId, threadId, ascending: true });
/** The thread's mail in Gmail (not its drafts). */
const inGmail = async (threadId: string) => (await h.gmail.control.getState(h.email)).messages.filter((m) => m.threadId === threadId && !m.labelIds.includes('DRAFT'));

describe('a scheduled run that changes Gmail', () => {
  it('proposes actions to the threads it names: archive waits for approval under the policy, a label runs, a reply is never sent without approval', async () => {
    // The policy: Ann is a protected sender (never archived without the user).
    await updateSafetySettings(db(), h.accountId, { protectedSenders: ['ann@protected.example'] });
    // Ann's thread is running already (ingested, classified); Bo's has never been seen by a thread workflow.
    const ann = await deliverAndIngest(h, { from: 'Ann <ann@protected.example>', subject: 'Clause 4', text: 'Could you check clause 4 of the contract?' });
    await h.waitFor(ann.threadId, (s) => s.state !== 'pending' && s.pendingEvents === 0, 60_000);
    const bo = await deliver(h, { from: 'Bo <bo@friends.example>', subject: 'Dinner on Saturday?', text: 'Are you free on Saturday?' });

    const marker = h.anthropic.script('scheduled-actions', [
      {
        text: 'Tidying up.',
        toolCalls: [
          { name: 'archive', input: { thread_id: ann.threadId } },
          { name: 'add_label', input: { thread_id: ann.threadId, label: 'Reviewed' } },
          { name: 'send_reply', input: { thread_id: bo.threadId, body: 'Saturday works, see you then.' } },
          { name: 'archive', input: { thread_id: 'nosuchthread0' } },
        ],
      },
      { text: 'Proposed: archive the clause question, label it Reviewed, and answer Bo.' },
    ]);
    await saveAgentProfile(db(), {
      name: 'test-tidy',
      description: 'tidies the inbox',
      instructions: `Tidy the inbox. ${marker}`,
      tools: ['search_mailbox', 'archive', 'add_label', 'send_reply', 'read_thread'],
      maxSteps: 4,
      sendsNeedApproval: false,
    });
    const row = await addUserSchedule(h.client, db(), {
      accountId: h.accountId, name: 'Tidy', profile: 'test-tidy', prompt: 'Tidy my inbox.', timing: { at: '08:00', days: ['mon'] },
      timeZone: null, label: 'Brief', discord: false,
    }, { catchupWindowMs: 3600_000, jitterMs: 0, taskQueues: { workflow: h.cfg.TEMPORAL_TASK_QUEUE, gmail: h.cfg.GMAIL_TASK_QUEUE, llm: h.cfg.LLM_TASK_QUEUE } });
    await h.client.schedule.getHandle(scheduleIdOf(row.id)).trigger();
    const [run] = await waitUntil('the run to finish', async () => {
      const runs = await listScheduleRuns(db(), row.id);
      return runs.some((r) => r.finishedAt) && runs;
    }, { timeoutMs: 60_000 });
    expect(run).toMatchObject({ status: 'delivered' });

    // The archive waits for the user; the label ran; both are Ann's thread's journal rows.
    const annActions = await actionsOf(ann.threadId);
    const archive = annActions.find((a) => a.kind === 'archive')!;
    expect(archive).toMatchObject({ state: 'awaiting_approval', messageId: ann.messageId, reason: { source: 'agent', profile: 'test-tidy', step: 1 } });
    expect(archive.because).toContain('ann@protected.example is a protected sender: never archived without you');
    expect(annActions.find((a) => a.kind === 'add_label')).toMatchObject({ argument: 'Reviewed', state: 'done' });
    expect((await inGmail(ann.threadId)).every((m) => m.labelIds.includes('INBOX'))).toBe(true);
    // The thread holds the approval (its status shows it open).
    const annStatus = await h.waitFor(ann.threadId, (s) => (s.openActions ?? []).some((a) => a.id === archive.id));
    expect(annStatus.decisions.map((d) => d.detail)).toEqual(expect.arrayContaining(['schedule Tidy proposes archive', 'schedule Tidy proposes add_label Reviewed']));

    // The reply: judged by the policy (a scheduled run reads other mail), waiting; nothing sent.
    const [reply] = await actionsOf(bo.threadId);
    expect(reply).toMatchObject({ kind: 'auto_reply', state: 'awaiting_approval', recipients: ['bo@friends.example'] });
    expect(reply!.because).toContain('agent test-tidy can read your other mail and send: what it sends always waits for you');
    expect((await inGmail(bo.threadId)).some((m) => m.labelIds.includes('SENT'))).toBe(false);

    // The model was told what became of each; the report lists them with their states.
    const steps = await h.prisma.agentStep.findMany({ where: { scheduleId: row.id }, orderBy: { seq: 'asc' } });
    expect(steps.map((s) => [s.name, s.result])).toEqual([
      ['model', expect.anything()],
      ['archive', expect.stringContaining(`archive on thread ${ann.threadId}: waits for the user's approval`)],
      ['add_label', `add_label Reviewed on thread ${ann.threadId}: done`],
      ['send_reply', expect.stringContaining(`auto_reply on thread ${bo.threadId}: waits for the user's approval`)],
      ['archive', 'there is no thread nosuchthread0 in the mailbox: nothing was done'],
      ['model', expect.anything()],
    ]);
    const { gmail } = await h.accountGmail();
    const report = (await gmail.getMessage(run!.gmailMessageId!)).body;
    expect(report).toContain('Proposed: archive the clause question');
    expect(report).toContain('Actions proposed:');
    expect(report).toContain(`- archive on thread ${ann.threadId}: waits for the user's approval`);
    expect(report).toContain(`- add_label Reviewed on thread ${ann.threadId}: done: "Clause 4"`);
    expect(report).toContain(`- auto_reply on thread ${bo.threadId}: waits for the user's approval`);
    expect(report).toContain(`#all/${bo.threadId}`);

    // Approved, the archive is the thread's to carry out: once.
    const deps = { client: h.client, db: db(), taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE };
    expect((await decideAction(deps, archive.id, 'approve', 'test')).action?.state).toBe('done');
    expect((await inGmail(ann.threadId)).some((m) => m.labelIds.includes('INBOX'))).toBe(false);
    // Rejected, the reply never goes out.
    expect((await decideAction(deps, reply!.id, 'reject', 'test')).action?.state).toBe('rejected');
    expect((await inGmail(bo.threadId)).some((m) => m.labelIds.includes('SENT'))).toBe(false);

    await recordWorkflowHistory(h.client.workflow.getHandle(run!.workflowId), 'scheduled-agent-proposes');
    await recordHistory(h, ann.threadId, 'thread-scheduled-proposal-approved');
  }, 150_000);
});
