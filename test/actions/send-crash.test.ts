// Exactly one sent message per action, whatever fails: the Gmail worker (its own OS process) is
// killed with SIGKILL after Gmail accepted the send and before the journal recorded it. The retry,
// on a new worker, finds the message by its marker and journals it instead of sending again.
// Real dev server, Postgres and emulators.
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listActions, updateSafetySettings } from '../../src/actions/journal.js';
import { prismaExecutor } from '../../src/quota/sql.js';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';

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

function spawnGmailWorker(): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/workers/gmail-worker.ts'], { env: { ...process.env, ...h.env }, stdio: ['ignore', 'ignore', 'inherit'] });
}

it('leaves exactly one sent message when the worker dies between the send and the journal write', async () => {
  await h.prisma.rule.create({
    data: { scope: 'domain', scopeRef: 'sigkill.example', kind: 'deterministic', action: 'fyi', actions: [{ kind: 'forward', argument: 'assistant@me.example' }] },
  });
  await updateSafetySettings(prismaExecutor(h.prisma), h.accountId, { forwardTo: ['assistant@me.example'], allowances: [{ kind: 'forward', scope: 'global' }] });
  const sent = async (threadId: string) => (await h.gmail.control.getState(h.email)).messages.filter((m) => m.threadId === threadId && m.labelIds.includes('SENT'));

  let worker = spawnGmailWorker();
  const locker = new pg.Client({ connectionString: h.cfg.DATABASE_URL });
  await locker.connect();
  try {
    const { threadId } = await deliverAndIngest(h, { from: 'Ray <ray@sigkill.example>', subject: 'Forward me', text: 'Please keep a copy.' });
    const scheduled = await waitUntil('the forward to be scheduled', async () =>
      (await listActions(prismaExecutor(h.prisma), { accountId: h.accountId, threadId })).find((a) => a.state === 'scheduled'), { timeoutMs: 60_000, everyMs: 50 });
    // Hold the journal row: the send goes out, its journal write waits on the lock.
    await locker.query('BEGIN');
    await locker.query('SELECT id FROM actions WHERE id = $1 FOR UPDATE', [scheduled.id]);
    await waitUntil('the message to be sent', async () => (await sent(threadId)).length > 0, { timeoutMs: 30_000, everyMs: 50 });
    worker.kill('SIGKILL');
    await new Promise((r) => worker.once('exit', r));
    // The dead worker's journal write is still queued in its Postgres backend (the server has not
    // noticed the socket closing yet): end it, as the server would.
    await waitUntil('the dead worker\'s write to be waiting', async () =>
      Number((await locker.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE actions%'`)).rows[0].n) > 0, { timeoutMs: 10_000, everyMs: 50 });
    await locker.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE actions%'`);
    await locker.query('ROLLBACK');
    expect((await listActions(prismaExecutor(h.prisma), { accountId: h.accountId, threadId }))[0]!.state).toBe('scheduled');

    worker = spawnGmailWorker();
    const done = await waitUntil('the retry to journal the send', async () =>
      (await listActions(prismaExecutor(h.prisma), { accountId: h.accountId, threadId })).find((a) => a.state === 'done'), { timeoutMs: 60_000 });
    const messages = await sent(threadId);
    expect(messages).toHaveLength(1);
    expect(done.result?.sentMessageId).toBe(messages[0]!.id);
  } finally {
    await locker.end();
    worker.kill('SIGKILL');
  }
}, 150_000);
