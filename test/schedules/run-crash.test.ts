// A scheduled run survives its worker: the LLM worker (its own OS process) is killed with SIGKILL
// while the run's second model turn is in flight; a new worker takes the turn over and the run goes
// on from the step it was in: the search it made is not repeated and one report is delivered.
// Real dev server, Postgres, Gmail and Anthropic emulators.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { saveAgentProfile } from '../../src/agent/profiles.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { scheduleIdOf } from '../../src/schedules/contracts.js';
import { listScheduleRuns } from '../../src/schedules/schedule-store.js';
import { addUserSchedule } from '../../src/schedules/user-schedules.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';
import { killWorker, spawnWorker } from '../helpers/worker-process.js';

let h: InboxHarness;
let scheduleId: string | undefined;

beforeAll(async () => {
  h = await startInboxHarness({ anthropicLatencyMs: 1500, settings: { activityTimeouts: { gmailMs: 10_000, llmMs: 5_000 } } });
  await h.startWorkers({ llm: false });
});

afterAll(async () => {
  if (scheduleId) await h?.client.schedule.getHandle(scheduleIdOf(scheduleId)).delete().catch(() => {});
  await h?.prisma.agentSchedule.deleteMany({ where: { accountId: h.accountId } });
  await h?.prisma.agentProfile.deleteMany({ where: { name: 'crash-brief' } });
  await h?.close();
});


it('resumes at the step it was in after a SIGKILL mid-run, and delivers one report', async () => {
  const marker = h.anthropic.script('crash-brief', [
    { toolCalls: [{ name: 'search_mailbox', input: { query: 'newer_than:1d' } }] },
    { text: 'Nothing needs you today.' },
  ]);
  await saveAgentProfile(prismaExecutor(h.prisma), {
    name: 'crash-brief', description: '', instructions: `Write the brief. ${marker}`, tools: ['search_mailbox'], maxSteps: 4, sendsNeedApproval: true,
  });
  const row = await addUserSchedule(h.client, prismaExecutor(h.prisma), {
    accountId: h.accountId, name: 'crash brief', profile: 'crash-brief', prompt: 'Brief me.', timing: { at: '07:30', days: ['mon'] }, timeZone: 'UTC', label: 'Brief', discord: false,
  }, { catchupWindowMs: 3600_000, jitterMs: 0, taskQueues: { workflow: h.cfg.TEMPORAL_TASK_QUEUE, gmail: h.cfg.GMAIL_TASK_QUEUE, llm: h.cfg.LLM_TASK_QUEUE }, activityTimeouts: { llmMs: 5_000 } });
  scheduleId = row.id;

  let worker = spawnWorker(h, 'llm-worker');
  try {
    await h.client.schedule.getHandle(scheduleIdOf(row.id)).trigger();
    const steps = () => h.prisma.agentStep.findMany({ where: { scheduleId: row.id }, orderBy: { seq: 'asc' } });
    // The search is done; the second model turn (1.5 s) is in flight: kill the worker there.
    await waitUntil('the search step', async () => (await steps()).some((s) => s.name === 'search_mailbox'), { timeoutMs: 60_000, everyMs: 50 });
    await killWorker(worker);
    expect((await steps()).map((s) => s.name)).toEqual(['model', 'search_mailbox']);

    worker = spawnWorker(h, 'llm-worker');
    const [run] = await waitUntil('the run to finish', async () => {
      const runs = await listScheduleRuns(prismaExecutor(h.prisma), row.id);
      return runs[0]?.finishedAt ? runs : undefined;
    }, { timeoutMs: 60_000 });
    expect(run).toMatchObject({ status: 'delivered', steps: 3 });
    expect((await steps()).map((s) => [s.name, s.status])).toEqual([['model', 'ok'], ['search_mailbox', 'ok'], ['model', 'ok']]);
    const state = await h.gmail.control.getState(h.email);
    expect(state.messages.filter((m) => m.subject === '[durable-inbox] crash brief')).toHaveLength(1);
    expect(run!.output).toContain('Nothing needs you today.');
  } finally {
    await killWorker(worker);
  }
}, 150_000);
