// The account's LLM circuit breaker end to end (issue 14): the Anthropic emulator answering 529 for a
// while, refusing the key (401), a spent daily budget, and an LLM worker killed mid-call. Threads wait
// (visible in Postgres, the CLI, /healthz's reasons, the status query and the InboxLlmPaused search
// attribute) and carry on; none goes to Action Required; rule-decided mail keeps flowing meanwhile.
import { spawn, type ChildProcess } from 'node:child_process';
import proto from '@temporalio/proto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { recordHistory } from '../helpers/histories.js';
import { waitUntil } from '../helpers/wait-until.js';
import { listCommand, llmResumeCommand } from '../../src/cli/accounts.js';
import { llmPaused } from '../../src/http/health-reasons.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { nextUtcDay } from '../../src/llm/breaker.js';
import { createBreakerStore } from '../../src/llm/breaker-store.js';
import { InboxLlmPaused } from '../../src/temporal/search-attributes.js';

let h: InboxHarness;
const tag = Math.random().toString(36).slice(2, 8);

beforeAll(async () => {
  h = await startInboxHarness({
    env: { LLM_BREAKER_FAILURES: '2', LLM_BREAKER_PROBE_MIN: '300ms', LLM_BREAKER_PROBE_MAX: '1s' },
    // A long start-to-close and a short heartbeat timeout: a dead worker's call is retried after the latter.
    settings: { activityTimeouts: { gmailMs: 10_000, llmMs: 120_000 }, heartbeatTimeouts: { gmailMs: 5_000, llmMs: 2_000 } },
  });
});

afterEach(async () => {
  await h.stopWorkers();
  h.anthropic.configure({ errorRates: { overloaded: 0 }, apiKey: null, outOfCredits: false, latencyMs: 0 });
  await h.prisma.llmBreaker.deleteMany({ where: { accountId: h.accountId } });
});

afterAll(async () => {
  await h?.close();
});

const question = (subject: string) => ({
  from: 'Dana <dana@client.example>',
  subject,
  text: 'Hi,\n\nCould you send me the signed contract by Monday?\n\nThanks, Dana',
});

const breaker = () => createBreakerStore(h.prisma).read(h.accountId);
const llmPausedReasons = () => llmPaused(prismaExecutor(h.prisma), new Date());

async function pausedAttribute(threadId: string): Promise<string | undefined> {
  return (await h.handle(threadId).describe()).typedSearchAttributes.get(InboxLlmPaused);
}

async function accountsList(): Promise<string> {
  const lines: string[] = [];
  await listCommand({ prisma: h.prisma }, { out: (l) => lines.push(l) });
  return lines.join('\n');
}

async function resume(): Promise<string> {
  const lines: string[] = [];
  await llmResumeCommand(
    { cfg: h.cfg, prisma: h.prisma, sync: { client: h.client, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE } },
    { out: (l) => lines.push(l) },
    h.email,
  );
  return lines.join('\n');
}

const noActionRequired = (s: { decisions: { kind: string }[] }) => expect(s.decisions.map((d) => d.kind)).not.toContain('action_required');

describe('LLM circuit breaker', () => {
  it('pauses LLM work during a 529 storm, keeps rule-decided mail flowing, and resumes by itself when the model answers', async () => {
    h.anthropic.configure({ errorRates: { overloaded: 1 }, retryAfterSeconds: 0.1 });
    await h.prisma.rule.create({ data: { scope: 'domain', scopeRef: `news-${tag}.example`, kind: 'deterministic', action: 'newsletter' } });
    await h.startWorkers();
    const threads = await Promise.all(['Contract', 'Agreement'].map((s) => deliverAndIngest(h, question(s))));

    for (const { threadId } of threads) {
      const waiting = await h.waitFor(threadId, (s) => /LLM paused \(outage\)/.test(s.waitingFor ?? ''));
      expect(waiting.state).toBe('pending');
      await waitUntil('the paused search attribute', async () => (await pausedAttribute(threadId)) === 'outage');
    }
    expect(await breaker()).toMatchObject({ state: 'open', reason: 'outage' });
    expect(await accountsList()).toMatch(new RegExp(`${h.email}\\s+active\\s+paused \\(outage\\)[\\s\\S]*resumes by itself`));
    expect((await llmPausedReasons()).map((r) => r.message)).toEqual(expect.arrayContaining([expect.stringContaining(`LLM paused for ${h.email} (outage)`)]));

    // Rules need no model: a newsletter is archived while the LLM is out.
    const news = await deliverAndIngest(h, { from: `News <n@news-${tag}.example>`, subject: 'Issue 12', text: 'This week.' });
    const skipped = await h.waitFor(news.threadId, (s) => s.state === 'skipped' && s.pendingEvents === 0);
    expect(skipped.decisions.find((d) => d.kind === 'classify')?.source).toBe('rules');

    const callsWhilePaused = h.anthropic.metrics().requests;
    h.anthropic.configure({ errorRates: { overloaded: 0 } });
    for (const { threadId } of threads) {
      const drafted = await h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0);
      expect(drafted.waitingFor).toBeUndefined();
      noActionRequired(drafted);
      await waitUntil('the paused search attribute to go', async () => (await pausedAttribute(threadId)) === undefined);
    }
    expect(h.anthropic.metrics().requests).toBeGreaterThan(callsWhilePaused);
    expect(await breaker()).toMatchObject({ state: 'closed', failures: 0 });
    expect((await llmPausedReasons()).filter((r) => r.accountId === h.accountId)).toEqual([]);
    await recordHistory(h, threads[0]!.threadId, 'thread-llm-paused-outage');
  }, 90_000);

  it('pauses on a refused key (401) without calling the model again until `accounts llm-resume`', async () => {
    h.anthropic.configure({ apiKey: 'the-real-key' }); // the workers send test-key
    await h.startWorkers();
    const { threadId } = await deliverAndIngest(h, question('Key check'));
    await h.waitFor(threadId, (s) => /LLM paused \(auth\)/.test(s.waitingFor ?? ''));
    await waitUntil('the paused search attribute', async () => (await pausedAttribute(threadId)) === 'auth');
    expect(await breaker()).toMatchObject({ state: 'open', reason: 'auth', nextProbeAt: null });
    expect(await accountsList()).toContain(`npm run cli -- accounts llm-resume ${h.email}`);

    // The thread looks again after the longest probe wait (1 s here) and is refused without a model call.
    const calls = h.anthropic.metrics().requests;
    const before = await h.prisma.llmBreaker.findUniqueOrThrow({ where: { accountId: h.accountId } });
    await waitUntil('a recheck', async () => (await h.handle(threadId).fetchHistory()).events!.filter((e) => e.timerFiredEventAttributes).length > 0);
    expect(h.anthropic.metrics().requests).toBe(calls);
    expect((await h.waitFor(threadId, () => true)).state).toBe('pending');
    expect((await h.prisma.llmBreaker.findUniqueOrThrow({ where: { accountId: h.accountId } })).state).toBe(before.state);

    h.anthropic.configure({ apiKey: null }); // the operator fixed the key
    expect(await resume()).toMatch(/LLM resumed for .* \(it was paused \(auth\)\); [1-9]\d* running threads? told to carry on/);
    const drafted = await h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0);
    noActionRequired(drafted);
    expect(await breaker()).toMatchObject({ state: 'closed' });
    await recordHistory(h, threadId, 'thread-llm-paused-auth-resumed');
  }, 90_000);

  it('pauses when the model account is out of credits (402), telling the operator what to do', async () => {
    h.anthropic.configure({ outOfCredits: true });
    await h.startWorkers();
    const { threadId } = await deliverAndIngest(h, question('Credits check'));
    await h.waitFor(threadId, (s) => /LLM paused \(credits\)/.test(s.waitingFor ?? ''));
    expect(await breaker()).toMatchObject({ state: 'open', reason: 'credits', nextProbeAt: null });
    expect(await accountsList()).toMatch(/out of credits .*add credits, then: npm run cli -- accounts llm-resume/);

    h.anthropic.configure({ outOfCredits: false });
    await resume();
    noActionRequired(await h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0));
  }, 60_000);

  it('waits for the next UTC day on a durable timer once the daily budget is spent', async () => {
    const day = new Date(new Date().toISOString().slice(0, 10));
    const key = { accountId_day: { accountId: h.accountId, day } };
    const budget = h.cfg.DAILY_TOKEN_BUDGET;
    await h.prisma.tokenUsage.upsert({ where: key, create: { accountId: h.accountId, day, tokensIn: budget }, update: { tokensIn: { increment: budget } } });
    try {
      await h.startWorkers();
      const calls = h.anthropic.metrics().requests;
      const { threadId } = await deliverAndIngest(h, question('Over budget'));
      const waiting = await h.waitFor(threadId, (s) => /LLM paused \(budget\)/.test(s.waitingFor ?? ''));
      expect(waiting.state).toBe('pending');
      await waitUntil('the paused search attribute', async () => (await pausedAttribute(threadId)) === 'budget');
      expect(h.anthropic.metrics().requests).toBe(calls);
      expect(await accountsList()).toContain('paused (budget)');

      const events = (await h.handle(threadId).fetchHistory()).events!;
      const timer = events.filter((e) => e.timerStartedEventAttributes).at(-1)!;
      const startedMs = Number(timer.eventTime!.seconds) * 1000 + Math.floor((timer.eventTime!.nanos ?? 0) / 1e6);
      const fireMs = startedMs + Number(timer.timerStartedEventAttributes!.startToFireTimeout!.seconds) * 1000;
      expect(Math.abs(fireMs - nextUtcDay(startedMs))).toBeLessThan(2_000);
      expect(events.some((e) => e.timerFiredEventAttributes)).toBe(false);
      noActionRequired(waiting);
    } finally {
      await h.prisma.tokenUsage.update({ where: key, data: { tokensIn: { decrement: budget } } });
    }
  }, 60_000);

  it('retries a call whose LLM worker died mid-call after the heartbeat timeout, long before start-to-close', async () => {
    await h.startWorkers({ llm: false });
    h.anthropic.configure({ latencyMs: 30_000 });
    let worker = spawnLlmWorker();
    try {
      const calls = h.anthropic.metrics().requests;
      const { threadId } = await deliverAndIngest(h, question('Stalled call'));
      await waitUntil('the model call to be in flight', async () => h.anthropic.metrics().inFlight > 0 && h.anthropic.metrics().requests > calls, { timeoutMs: 30_000 });
      worker.kill('SIGKILL');
      await new Promise((r) => worker.once('exit', r));
      h.anthropic.configure({ latencyMs: 0 });
      worker = spawnLlmWorker();
      // Start-to-close is 120 s: drafted well within that means the heartbeat timeout (2 s) caught it.
      const drafted = await h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0, 60_000);
      noActionRequired(drafted);
      const retried = (await h.handle(threadId).fetchHistory()).events!.find(
        (e) => e.activityTaskStartedEventAttributes?.lastFailure?.timeoutFailureInfo,
      );
      expect(retried?.activityTaskStartedEventAttributes?.attempt).toBeGreaterThan(1);
      expect(retried?.activityTaskStartedEventAttributes?.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(
        proto.temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT,
      );
    } finally {
      worker.kill('SIGKILL');
    }
  }, 120_000);
});

/** The LLM worker as its own process, as in production (`tsx src/workers/llm-worker.ts`). */
function spawnLlmWorker(): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/workers/llm-worker.ts'], { env: { ...process.env, ...h.env }, stdio: ['ignore', 'ignore', 'inherit'] });
}
