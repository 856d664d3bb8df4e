// What Claude does besides answering (issue 35), through the real thread workflow on the dev server,
// Postgres, the Gmail emulator and the SDK against the Anthropic emulator: a refused classification,
// draft or agent turn ends in Action Required with "the model declined" (never a draft); a forced tool
// call cut at max_tokens is retried once with a larger budget, then Action Required; pause_turn
// continues the agent's turn. And a backfill's hand-over classified through one Message Batch: no
// per-message classify call, an errored request through the normal path, a retried submit and a
// worker restart while the batch is in progress making no second batch; the results stored and the
// threads handed over in pages (a results download cut mid-file resumes after the page stored, a
// page of the hand-over whose answer is lost is handed again without a second verdict), the
// batch's request rows deleted once handed.
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentProfile } from '../../src/agent/contracts.js';
import { saveAgentProfile } from '../../src/agent/profiles.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { CLASSIFY_TOOL_NAME } from '../../src/llm/index.js';
import type { HandoffInput, HandoffResult } from '../../src/backfill/activity-contracts.js';
import type { UsageCounts } from '../../emulators/anthropic/index.js';
import { deliver, deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { recordHistory, recordWorkflowHistory } from '../helpers/histories.js';
import { backfillWorkflow } from '../../src/backfill/backfill-workflow.js';
import { backfillWorkflowId } from '../../src/backfill/contracts.js';
import { waitUntil } from '../helpers/wait-until.js';

type ScriptStep = Parameters<InboxHarness['anthropic']['script']>[1][number];

let h: InboxHarness;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  h = await startInboxHarness();
  await h.startWorkers();
});

afterEach(async () => {
  for (const undo of cleanup.splice(0)) await undo();
});

afterAll(async () => {
  await h?.close();
});

const settled = (threadId: string, state: string) => h.waitFor(threadId, (s) => s.state === state && s.pendingEvents === 0, 60_000);
const actionRequired = (s: { decisions: { kind: string; detail?: string }[] }) => s.decisions.filter((d) => d.kind === 'action_required').map((d) => d.detail ?? '');
const draftsIn = async (threadId: string) => (await h.gmail.control.getState(h.email)).drafts.filter((d) => d.threadId === threadId);
/** The classification calls the emulator received about this subject, with their max_tokens. */
const classifyBudgets = (subject: string) =>
  h.anthropic
    .recentRequests()
    .filter((r) => r.body.tool_choice?.type === 'tool' && r.body.tool_choice.name === CLASSIFY_TOOL_NAME && JSON.stringify(r.body.messages).includes(subject))
    .map((r) => r.body.max_tokens);

describe('the backfill classifies its hand-over through a Message Batch', () => {
  /** The first submit runs and its answer is lost, as when the worker dies after the batch was created: the retry must not create another. */
  const loseFirstSubmit: ActivityInterceptorsFactory = (ctx) => ({
    inbound: {
      async execute(input, next) {
        const out = await next(input);
        if (ctx.info.activityType === 'batchSubmit' && ctx.info.attempt === 1) throw new Error('the worker lost the answer of batchSubmit');
        return out;
      },
    },
  });
  /** The second page of the hand-over runs and its answer is lost: its retry must not hand a verdict twice. */
  const lostPages: number[] = [];
  const loseSecondPage: ActivityInterceptorsFactory = (ctx) => ({
    inbound: {
      async execute(input, next) {
        const out = await next(input);
        const page = input.args[0] as HandoffInput;
        if (ctx.info.activityType === 'backfillHandToThreads' && page.after && ctx.info.attempt === 1) {
          lostPages.push((out as HandoffResult).threads);
          throw new Error('the worker lost the answer of a hand-over page');
        }
        return out;
      },
    },
  });

  // First in the file: the backfill's range holds this test's mail only.
  it('one batch classifies the handed-over threads; an errored request goes the normal path; a retried submit and a worker restart make no second batch; results and hand-over in pages resume without storing or handing twice', { timeout: 120_000 }, async () => {
    h.anthropic.configure({ batchProcessingMs: 3_600_000 }); // in progress until the test ends it
    const rangeStart = Date.now() - 1000;
    await h.stopWorkers();
    await h.startWorkers({ activityInterceptors: [loseFirstSubmit] });
    const asks = await deliver(h, { from: 'Gus <gus@batch.example>', subject: 'Batched question', text: 'Could you send me the report by Friday? [emulator:category=needs_response]' });
    const fyi = await deliver(h, { from: 'Hal <hal@batch.example>', subject: 'Batched note', text: 'The office is closed on Monday. [emulator:category=fyi]' });
    const errored = await deliver(h, { from: 'Ivy <ivy@batch.example>', subject: 'Batch error', text: 'Just so you know. [emulator:category=fyi] [emulator:server-error:1]' });
    const before = h.anthropic.metrics();
    // Results in pages of 2: the first download drops after 2 lines (one page stored), the retry resumes after them.
    h.anthropic.cutBatchResults(2);

    const backfill = await h.client.workflow.start(backfillWorkflow, {
      workflowId: backfillWorkflowId(h.accountId),
      taskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
      args: [
        {
          accountId: h.accountId,
          granularity: 'day',
          rangeStart,
          overlapMs: 0,
          rangeEnd: Date.now() + 60_000,
          handToThreadsDays: 1,
          classifyInBatch: true,
          batchPoll: { firstMs: 200, maxMs: 1000 },
          handOverPageSize: 2,
          taskQueues: { workflows: h.cfg.TEMPORAL_TASK_QUEUE, gmail: h.cfg.GMAIL_TASK_QUEUE, llm: h.cfg.LLM_TASK_QUEUE },
        },
      ],
    });
    // The batch exists and its id is recorded (the retried submit found it there).
    const recorded = () => h.prisma.$queryRawUnsafe<{ batch_id: string | null }[]>(`SELECT batch_id FROM llm_batches WHERE account_id = $1`, h.accountId);
    await waitUntil('the batch recorded', async () => (await recorded())[0]?.batch_id != null);
    // The workers stop and start again while the batch is in progress.
    await h.stopWorkers();
    await h.startWorkers({ activityInterceptors: [loseSecondPage] });
    expect((await backfill.describe()).status.name).toBe('RUNNING');
    await h.anthropic.endBatches();
    const result = await backfill.result();

    const after = h.anthropic.metrics();
    expect(after.batchesCreated - before.batchesCreated).toBe(1);
    expect(after.batchRequests).toBeGreaterThanOrEqual(3);
    // The results: read twice (the first download cut after 2 lines), stored in 2 pages of 2 + 1, none stored twice.
    expect([after.batchResultReads - before.batchResultReads, after.batchResultReadsCut - before.batchResultReadsCut]).toEqual([2, 1]);
    const [stored] = await h.prisma.$queryRawUnsafe<{ collected_lines: number; collected_pages: number; collected: boolean }[]>(
      `SELECT collected_lines, collected_pages, collected_at IS NOT NULL AS collected FROM llm_batches WHERE account_id = $1`,
      h.accountId,
    );
    expect(stored).toEqual({ collected_lines: 3, collected_pages: 2, collected: true });
    // The hand-over: 2 pages (2 threads, then 1), the second handed again after its answer was lost, each thread counted once.
    expect(lostPages).toEqual([1]);
    expect(result.counters).toMatchObject({ handedOff: 3, classifiedInBatch: 2 });
    const history = await backfill.fetchHistory();
    const scheduled = (type: string) => history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type).length;
    expect([scheduled('backfillHandToThreads'), scheduled('batchCollect'), scheduled('backfillForgetBatchRequests')]).toEqual([2, 1, 1]);
    const classified = (threadId: string) => h.waitFor(threadId, (s) => s.decisions.some((d) => d.kind === 'classify') && s.pendingEvents === 0 && s.state !== 'pending', 60_000);
    const [a, b, c] = [await classified(asks.threadId), await classified(fyi.threadId), await classified(errored.threadId)];
    const classify = (s: typeof a) => s.decisions.find((d) => d.kind === 'classify')!;
    // Decided by the batch, with the model and the batch in the log; the reply still drafted, the rules' actions as always.
    const batchId = (await recorded())[0]!.batch_id!;
    expect(classify(a)).toMatchObject({ source: 'llm', model: 'claude-haiku-5-5', batch: batchId, detail: expect.stringMatching(/^needs_response .*\(Message Batch msgbatch_/) });
    expect(a.state).toBe('drafted');
    expect(classify(b)).toMatchObject({ source: 'llm', batch: batchId, detail: expect.stringMatching(/^fyi/) });
    expect(b.state).toBe('skipped');
    // The errored request: classified by the thread's own call.
    expect(classify(c).batch).toBeUndefined();
    expect(classify(c).detail).toMatch(/^fyi/);
    const classifyCalls = (subject: string) =>
      h.anthropic.recentRequests().filter((r) => r.body.tool_choice?.type === 'tool' && r.body.tool_choice.name === CLASSIFY_TOOL_NAME && JSON.stringify(r.body.messages).includes(subject)).length;
    expect([classifyCalls('Batched question'), classifyCalls('Batched note'), classifyCalls('Batch error')]).toEqual([0, 0, 1]);
    // Each thread classified once, though the last page was handed twice.
    for (const s of [a, b, c]) expect(s.decisions.filter((d) => d.kind === 'classify')).toHaveLength(1);
    // The batch's tokens counted once: the account's usage is what the emulator billed, batch and single calls.
    const billed = (byModel: Record<string, Record<string, UsageCounts>>) =>
      Object.values(byModel).flatMap((asked) => Object.values(asked)).reduce((n, u) => n + u.input + u.output + u.cacheRead + u.cacheWrite5m + u.cacheWrite1h, 0);
    const [usage] = await h.prisma.$queryRawUnsafe<{ tokens: number }[]>(`SELECT sum(tokens_in + tokens_out)::int AS tokens FROM token_usage WHERE account_id = $1`, h.accountId);
    expect(usage!.tokens).toBe(billed(after.usage) + billed(after.batchUsage));
    // Handed over: the batch's request rows are gone (the verdicts are in the threads' logs); the batch's row stays.
    const [left] = await h.prisma.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM llm_batch_requests r JOIN llm_batches b USING (batch_key) WHERE b.account_id = $1`,
      h.accountId,
    );
    expect(left!.n).toBe(0);
    await recordHistory(h, asks.threadId, 'thread-batched-classification');
    await recordWorkflowHistory(backfill, 'backfill-batch-classified-paged');
  });
});

describe('refusals', () => {
  it('a refused classification ends in Action Required: the model declined, nothing classified or drafted', async () => {
    const subject = 'Refused classification';
    const { threadId } = await deliverAndIngest(h, { from: 'Ann <ann@refuse.example>', subject, text: 'Can you help me with this? [emulator:refusal]' });
    const status = await settled(threadId, 'action_required');
    expect(actionRequired(status)).toEqual([expect.stringMatching(/^classification failed: LlmRefusedError: the model declined/)]);
    expect(status.decisions.some((d) => d.kind === 'classify')).toBe(false);
    expect(await draftsIn(threadId)).toEqual([]);
    // Not retried with the same prompt.
    expect(classifyBudgets(subject)).toEqual([512]);
    await recordHistory(h, threadId, 'thread-llm-refused-classification');
  });

  it('a refused draft ends in Action Required and no text of the refusal becomes a draft', async () => {
    const { threadId } = await deliverAndIngest(h, {
      from: 'Bo <bo@refuse.example>',
      subject: 'Refused draft',
      text: 'Could you reply with the details? [emulator:category=needs_response] [emulator:draft-refusal]',
    });
    const status = await settled(threadId, 'action_required');
    expect(status.decisions.find((d) => d.kind === 'classify')?.detail).toMatch(/^needs_response/);
    expect(actionRequired(status)).toEqual([expect.stringMatching(/^draft failed: LlmRefusedError: the model declined/)]);
    expect(status.draftId).toBeUndefined();
    expect(await draftsIn(threadId)).toEqual([]);
  });
});

describe('max_tokens on a forced tool call', () => {
  it('the cut answer is not taken: one retry with four times the budget classifies the mail', async () => {
    const subject = 'Cut once';
    const { threadId } = await deliverAndIngest(h, {
      from: 'Cy <cy@cut.example>',
      subject,
      text: 'Could you send me the slides? [emulator:category=needs_response] [emulator:max-tokens:1]',
    });
    const status = await settled(threadId, 'drafted');
    expect(classifyBudgets(subject)).toEqual([512, 2048]);
    expect(status.decisions.filter((d) => d.kind === 'classify').map((d) => d.detail)).toEqual([expect.stringMatching(/^needs_response/)]);
    expect(actionRequired(status)).toEqual([]);
  });

  it('cut again with the larger budget: Action Required, no decision from the partial input', async () => {
    const subject = 'Cut twice';
    const { threadId } = await deliverAndIngest(h, { from: 'Di <di@cut.example>', subject, text: 'Please confirm the order. [emulator:max-tokens]' });
    const status = await settled(threadId, 'action_required');
    expect(classifyBudgets(subject)).toEqual([512, 2048]);
    expect(status.decisions.some((d) => d.kind === 'classify')).toBe(false);
    expect(actionRequired(status)).toEqual([expect.stringMatching(/^classification failed: LlmOutputTruncatedError: the answer was cut off at max_tokens/)]);
    await recordHistory(h, threadId, 'thread-llm-truncated-twice');
  });
});

describe('the agent loop', () => {
  async function agentFor(domain: string, steps: ScriptStep[]): Promise<AgentProfile> {
    const name = `stop-${domain}`;
    const marker = h.anthropic.script(name, steps);
    const profile: AgentProfile = {
      name,
      description: 'test profile',
      instructions: `Answer the mail. ${marker}`,
      tools: ['read_thread', 'write_draft', 'escalate'],
      maxSteps: 6,
      sendsNeedApproval: true,
    };
    await saveAgentProfile(prismaExecutor(h.prisma), profile);
    const rule = await h.prisma.rule.create({ data: { scope: 'domain', scopeRef: domain, kind: 'deterministic', action: 'needs_response', route: name } });
    cleanup.push(() => h.prisma.rule.delete({ where: { id: rule.id } }), () => h.prisma.agentProfile.delete({ where: { name } }));
    return profile;
  }
  const steps = (threadId: string) => h.prisma.agentStep.findMany({ where: { accountId: h.accountId, gmailThreadId: threadId }, orderBy: [{ startedAt: 'asc' }, { seq: 'asc' }] });

  it('stops when the model declines and says so: Action Required, the model declined', async () => {
    await agentFor('agent-refuse.example', [{ toolCalls: [{ name: 'read_thread', input: {} }] }, { refusal: true, text: 'I cannot help with that.' }]);
    const { threadId } = await deliverAndIngest(h, { from: 'Ed <ed@agent-refuse.example>', subject: 'Agent refusal', text: 'Could you handle this?' });
    const status = await settled(threadId, 'action_required');
    expect(actionRequired(status)).toEqual([expect.stringMatching(/^agent stop-agent-refuse\.example stopped: LlmRefusedError: the model declined/)]);
    expect(await draftsIn(threadId)).toEqual([]);
    expect((await steps(threadId)).map((s) => s.name)).toEqual(['model', 'read_thread']);
    await recordHistory(h, threadId, 'thread-agent-model-declined');
  });

  it('continues a paused turn (pause_turn): the paused content goes back and the agent drafts', async () => {
    await agentFor('agent-pause.example', [
      { pause: true, text: 'Still looking into it.' },
      { toolCalls: [{ name: 'write_draft', input: { body: 'Friday at 10 works.' } }] },
      { text: 'Drafted the reply.' },
    ]);
    const { threadId } = await deliverAndIngest(h, { from: 'Flo <flo@agent-pause.example>', subject: 'Agent pause', text: 'Does Friday at 10 work?' });
    const status = await settled(threadId, 'drafted');
    expect(status.decisions.at(-1)?.detail).toBe('agent stop-agent-pause.example finished: Drafted the reply.');
    const continued = h.anthropic.recentRequests().find((r) => r.body.messages.length === 2 && JSON.stringify(r.body.messages).includes('Agent pause'));
    expect(continued?.body.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Still looking into it.' }] });
    const recorded = await steps(threadId);
    expect(recorded.map((s) => [s.name, (s.result as { stopReason?: string } | null)?.stopReason])).toEqual([
      ['model', 'pause_turn'],
      ['model', 'tool_use'],
      ['write_draft', undefined],
      ['model', 'end_turn'],
    ]);
    await recordHistory(h, threadId, 'thread-agent-pause-turn');
  });
});

