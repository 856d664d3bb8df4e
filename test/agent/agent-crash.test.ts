// The agent loop survives its worker: the LLM worker (its own OS process) is killed with SIGKILL
// while a model turn is in flight; a new worker takes the turn over and the loop goes on from the
// step it was in, without repeating the draft it had already written. Real dev server, Postgres,
// Gmail and Anthropic emulators.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { saveAgentProfile } from '../../src/agent/profiles.js';
import { listActions } from '../../src/actions/journal.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';
import { killWorker, spawnWorker } from '../helpers/worker-process.js';

let h: InboxHarness;

beforeAll(async () => {
  h = await startInboxHarness({ anthropicLatencyMs: 1500, settings: { activityTimeouts: { gmailMs: 10_000, llmMs: 5_000 } } });
  await h.startWorkers({ llm: false });
});

afterAll(async () => {
  await h?.prisma.rule.deleteMany({ where: { route: 'crash-agent' } });
  await h?.prisma.agentProfile.deleteMany({ where: { name: 'crash-agent' } });
  await h?.close();
});


it('resumes at the step it was in after a SIGKILL mid-loop, without repeating a side effect', async () => {
  const marker = h.anthropic.script('crash-agent', [
    { toolCalls: [{ name: 'write_draft', input: { body: 'Wednesday 10:00 works.' } }] },
    { toolCalls: [{ name: 'add_label', input: { label: 'Scheduling' } }] },
    { text: 'Drafted and labelled.' },
  ]);
  await saveAgentProfile(prismaExecutor(h.prisma), {
    name: 'crash-agent',
    description: '',
    instructions: `Handle scheduling. ${marker}`,
    tools: ['write_draft', 'add_label', 'escalate'],
    maxSteps: 5,
    sendsNeedApproval: true,
  });
  await h.prisma.rule.create({ data: { scope: 'domain', scopeRef: 'agent-crash.example', kind: 'deterministic', action: 'needs_response', route: 'crash-agent' } });

  let worker = spawnWorker(h, 'llm-worker');
  try {
    const { threadId } = await deliverAndIngest(h, { from: 'Jay <jay@agent-crash.example>', subject: 'Wednesday?', text: 'Wednesday morning?' });
    const steps = () => h.prisma.agentStep.findMany({ where: { accountId: h.accountId, gmailThreadId: threadId }, orderBy: { seq: 'asc' } });
    // The draft is written; the second model turn (1.5 s) is in flight: kill the worker there.
    await waitUntil('the draft step', async () => (await steps()).some((s) => s.name === 'write_draft'), { timeoutMs: 60_000, everyMs: 50 });
    await killWorker(worker);
    expect((await steps()).map((s) => s.name)).toEqual(['model', 'write_draft']);

    worker = spawnWorker(h, 'llm-worker');
    await waitUntil('the run to finish', async () => (await steps()).filter((s) => s.name === 'model').length === 3, { timeoutMs: 60_000 });
    expect((await steps()).map((s) => [s.name, s.status])).toEqual([
      ['model', 'ok'],
      ['write_draft', 'ok'],
      ['model', 'ok'],
      ['add_label', 'ok'],
      ['model', 'ok'],
    ]);
    const state = await h.gmail.control.getState(h.email);
    expect(state.drafts.filter((d) => d.threadId === threadId)).toHaveLength(1);
    // The draft is journaled with the thread's save, once the run's event is handled.
    const journal = await waitUntil('the journal', async () => {
      const rows = await listActions(prismaExecutor(h.prisma), { accountId: h.accountId, threadId, ascending: true });
      return rows.length >= 2 ? rows : undefined;
    }, { timeoutMs: 30_000 });
    expect(journal.map((a) => `${a.kind} ${a.state}`).sort()).toEqual(['add_label done', 'draft done']);
  } finally {
    await killWorker(worker);
  }
}, 150_000);
