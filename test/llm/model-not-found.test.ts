// A configured model the API does not know (issue 35): the LLM worker says so at start-up in one line
// (GET /v1/models/{id} answers 404), and the first call's 404 pauses the account's LLM with reason
// `model`, so threads wait for the operator instead of being retried forever or given up.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCommand } from '../../src/cli/accounts.js';
import { createBreakerStore } from '../../src/llm/breaker-store.js';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';

const MISSING = 'claude-sonnet-9-9';
let h: InboxHarness;

beforeAll(async () => {
  h = await startInboxHarness({ env: { ANTHROPIC_MODEL: MISSING, ANTHROPIC_MODEL_CLASSIFY: MISSING, LLM_BREAKER_PROBE_MIN: '300ms', LLM_BREAKER_PROBE_MAX: '1s' } });
});

afterAll(async () => {
  await h?.close();
});

describe('a configured model that does not exist', () => {
  it('the LLM worker says so at start-up, in one line', async () => {
    // Its own task queue: this process only starts and is stopped.
    const env = { ...process.env, ...h.env, LLM_TASK_QUEUE: `${h.env.LLM_TASK_QUEUE}-startup`, METRICS_PORT: '0', TEMPORAL_METRICS_PORT: '0', LOG_LEVEL: 'info' };
    const worker = spawn(process.execPath, ['--import', 'tsx', 'src/workers/llm-worker.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    try {
      const seen = new Promise<void>((resolve) => {
        const read = (stream: NodeJS.ReadableStream) =>
          createInterface({ input: stream }).on('line', (line) => {
            lines.push(line);
            if (line.includes('polling task queue')) resolve();
          });
        read(worker.stdout!);
        read(worker.stderr!);
      });
      await Promise.race([seen, once(worker, 'exit').then(() => Promise.reject(new Error(`the worker exited: ${lines.join('\n')}`)))]);
    } finally {
      const exited = once(worker, 'exit');
      worker.kill('SIGKILL');
      await exited;
    }
    const about = lines.filter((l) => l.includes(MISSING));
    expect(about).toHaveLength(1);
    expect(about[0]).toMatch(new RegExp(`ERROR \\[llm-worker\\] the configured model ${MISSING} \\(ANTHROPIC_MODEL\\) does not exist: GET /v1/models/${MISSING} answers 404`));
  });

  it("pauses the account's LLM with reason model: the thread waits, the model is not called again", async () => {
    await h.startWorkers();
    const { threadId } = await deliverAndIngest(h, { from: 'Gil <gil@model.example>', subject: 'Which model?', text: 'Could you send the invoice?' });
    const waiting = await h.waitFor(threadId, (s) => /LLM paused \(model\)/.test(s.waitingFor ?? ''));
    expect(waiting.state).toBe('pending');
    expect(waiting.decisions.map((d) => d.kind)).not.toContain('action_required');
    expect(await createBreakerStore(h.prisma).read(h.accountId)).toMatchObject({ state: 'open', reason: 'model', nextProbeAt: null });
    const listed: string[] = [];
    await listCommand({ prisma: h.prisma }, { out: (l) => listed.push(l) });
    expect(listed.join('\n')).toContain(`the configured model does not exist (404`);
    expect(listed.join('\n')).toContain('set ANTHROPIC_MODEL');

    // The thread looks again after the longest probe wait (1 s) and is refused without a model call.
    const calls = h.anthropic.metrics().requests;
    await waitUntil('a recheck', async () => (await h.handle(threadId).fetchHistory()).events!.filter((e) => e.timerFiredEventAttributes).length > 0);
    expect(h.anthropic.metrics().requests).toBe(calls);
    expect((await h.waitFor(threadId, () => true)).state).toBe('pending');
  });
});
