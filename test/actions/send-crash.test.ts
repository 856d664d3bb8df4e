// Exactly one sent message per action, whatever fails: the Gmail worker (its own OS process) is
// killed with SIGKILL after Gmail accepted the send and before the journal recorded it. The retry,
// on a new worker, finds the message by its marker and journals it instead of sending again.
// Real dev server, Postgres and emulators.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listActions, updateSafetySettings } from '../../src/actions/journal.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';
import { killWorker, spawnWorker } from '../helpers/worker-process.js';

let h: InboxHarness;

beforeAll(async () => {
  h = await startInboxHarness({
    settings: {
      activityTimeouts: { gmailMs: 5_000, llmMs: 10_000 },
      actions: { sendDelayMs: 1500, approvalExpiryMs: 600_000, pauseLabel: 'Assistant Paused', awaitingApprovalLabel: 'Awaiting Approval' },
    },
  });
  await h.startWorkers({ gmail: false });
});

afterAll(async () => {
  await h?.prisma.rule.deleteMany({ where: { scopeRef: 'sigkill.example' } });
  await h?.close();
});


it('leaves exactly one sent message when the worker dies between the send and the journal write', async () => {
  await h.prisma.rule.create({
    data: { scope: 'domain', scopeRef: 'sigkill.example', kind: 'deterministic', action: 'fyi', actions: [{ kind: 'forward', argument: 'assistant@me.example' }] },
  });
  await updateSafetySettings(prismaExecutor(h.prisma), h.accountId, { forwardTo: ['assistant@me.example'], allowances: [{ kind: 'forward', scope: 'global' }] });
  const sent = async (threadId: string) => (await h.gmail.control.getState(h.email)).messages.filter((m) => m.threadId === threadId && m.labelIds.includes('SENT'));

  let worker = spawnWorker(h, 'gmail-worker');
  // Gmail takes 10 s to answer a send: the worker dies while waiting for the answer, after Gmail
  // took the message and before anything was journaled.
  await h.gmail.control.setFaults({ latency: [{ method: 'messages.send', distribution: { type: 'fixed', ms: 10_000 } }] });
  try {
    const { threadId } = await deliverAndIngest(h, { from: 'Ray <ray@sigkill.example>', subject: 'Forward me', text: 'Please keep a copy.' });
    await waitUntil('the forward to be scheduled', async () =>
      (await listActions(prismaExecutor(h.prisma), { accountId: h.accountId, threadId })).find((a) => a.state === 'scheduled'), { timeoutMs: 60_000, everyMs: 50 });
    // The send starts when the delay is over: the worker dies once Gmail holds it.
    await waitUntil('the send in flight at Gmail', async () => (await h.gmail.control.metrics()).inFlight['messages.send'] === 1, { timeoutMs: 60_000, everyMs: 50 });
    expect(await sent(threadId)).toHaveLength(0);
    await killWorker(worker);
    await waitUntil('Gmail to have taken the message', async () => (await sent(threadId)).length === 1, { timeoutMs: 20_000, everyMs: 100 });
    expect((await listActions(prismaExecutor(h.prisma), { accountId: h.accountId, threadId }))[0]!.state).toBe('scheduled');
    await h.gmail.control.setFaults({ latency: [] });

    worker = spawnWorker(h, 'gmail-worker');
    const done = await waitUntil('the retry to journal the send', async () =>
      (await listActions(prismaExecutor(h.prisma), { accountId: h.accountId, threadId })).find((a) => a.state === 'done'), { timeoutMs: 60_000 });
    const messages = await sent(threadId);
    expect(messages).toHaveLength(1);
    expect(done.result?.sentMessageId).toBe(messages[0]!.id);
  } finally {
    await killWorker(worker);
  }
}, 150_000);
