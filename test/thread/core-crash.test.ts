// The approval-gated auto-reply across a SIGKILL, as one test body on both providers: the user
// approves, the mail worker (its own OS process) hands the reply to the server and is killed before
// the server's answer comes back; a new worker takes over. Nothing goes out twice on either.
//   - Gmail API: the message is in SENT with the action's marker; the retry finds it and journals it.
//   - IMAP/SMTP: SMTP has no idempotency key. The copy in \Sent was filed first, marked in flight;
//     the retry finds it still marked and does not submit again: the action fails with the reason
//     and the thread goes to Action Required. The held message reaches the correspondent once.
// Real dev server, PostgreSQL, Gmail emulator, Dovecot and Postfix (a policy service holds Postfix's
// answer to the final dot: mail-servers/policy.ts).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { listActions } from '../../src/actions/journal.js';
import type { JournaledAction } from '../../src/actions/contracts.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { notifySync } from '../../src/sync/notify.js';
import { decideAction } from '../../src/thread/decide.js';
import { deliver, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { startPolicyGate, type PolicyGate } from '../../mail-servers/policy.js';
import { waitUntil } from '../helpers/wait-until.js';
import { killWorker, spawnWorker } from '../helpers/worker-process.js';
import { deliverFromOutside } from '../../mail-servers/deliver.js';
import { receivedInInbox } from '../imap/mail-test-clients.js';
import { startImapWorld } from '../imap/imap-world.js';

interface CrashWorld {
  h: InboxHarness;
  correspondentDomain: string;
  /** Whether the provider can tell, after the crash, that the send happened (Gmail) or not (SMTP). */
  sendIsFindable: boolean;
  incoming(subject: string): Promise<string>;
  /** From now on the server keeps the next send's answer; resolves once it is keeping one. */
  holdSend(): Promise<void>;
  releaseSend(): Promise<void>;
  receivedByCorrespondent(subject: string): Promise<number>;
  close(): Promise<void>;
}

const run = randomUUID().slice(0, 8);
// A short undo-send window; a killed worker's activity is retried after 3 s without a heartbeat.
const env = { SEND_DELAY: '1s', GMAIL_HEARTBEAT_TIMEOUT: '3s' };

async function gmailWorld(): Promise<CrashWorld> {
  const h = await startInboxHarness({ env });
  await h.startWorkers({ gmail: false });
  return {
    h,
    // Rules are the whole installation's: a domain of this file's own, so other files' threads meet none of them.
    correspondentDomain: `partner-${run}.example`,
    sendIsFindable: true,
    async incoming(subject) {
      return (await deliver(h, { from: `Alice Example <alice@partner-${run}.example>`, subject, text: 'Are you in on Monday?' })).threadId;
    },
    async holdSend() {
      await h.gmail.control.setFaults({ latency: [{ method: 'messages.send', distribution: { type: 'fixed', ms: 8_000 } }] });
      await waitUntil('the send in flight at Gmail', async () => (await h.gmail.control.metrics()).inFlight['messages.send'] === 1, { timeoutMs: 60_000, everyMs: 50 });
    },
    async releaseSend() {
      await h.gmail.control.setFaults({ latency: [] });
    },
    async receivedByCorrespondent(subject) {
      const state = await h.gmail.control.getState(h.email);
      return state.messages.filter((m) => m.labelIds.includes('SENT') && m.subject.includes(subject)).length;
    },
    close: () => h.close(),
  };
}

async function imapWorld(): Promise<CrashWorld> {
  const gate: PolicyGate = await startPolicyGate();
  const world = await startImapWorld(
    { user: { address: `crash-${run}@inbox.test`, password: 'user-app-password' }, correspondent: { address: `alice@correspondent-${run}.test`, password: 'alice-password' }, submissionPolicy: gate.address },
    async (imap) => {
      const h = await startInboxHarness({ env, imap });
      await h.startWorkers({ gmail: false });
      return h;
    },
  ).catch(async (err: unknown) => {
    await gate.close();
    throw err;
  });
  const { servers, user, product: h } = world;
  return {
    h,
    correspondentDomain: `correspondent-${run}.test`,
    sendIsFindable: false,
    async incoming(subject) {
      await deliverFromOutside(servers, { from: `Alice Example <${servers.correspondent.address}>`, to: servers.user.address, subject, text: 'Are you in on Monday?', messageId: `<${randomUUID()}@correspondent-${run}.test>` });
      return (await waitUntil(`${subject} in the INBOX`, async () => (await user.searchMessages({ subject })).messages[0])).threadId;
    },
    async holdSend() {
      gate.hold();
      await gate.held();
    },
    async releaseSend() {
      gate.release();
    },
    receivedByCorrespondent: (subject) => receivedInInbox(servers, servers.correspondent, { subject, from: servers.user.address }),
    async close() {
      await world.close();
      await gate.close();
    },
  };
}

describe.each([
  ['Gmail API', gmailWorld],
  ['IMAP and SMTP', imapWorld],
] as const)('an approved auto-reply across a SIGKILL of the mail worker, on %s', (_name, start) => {
  let w: CrashWorld;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    w = await start();
    workers.push(spawnWorker(w.h, 'gmail-worker'));
    await notifySync({ client: w.h.client, taskQueue: w.h.cfg.TEMPORAL_TASK_QUEUE }, w.h.accountId, { source: 'poll' });
    await waitUntil('the sync cursor', async () => (await w.h.prisma.account.findUniqueOrThrow({ where: { id: w.h.accountId } })).historyId ?? false);
  }, 120_000);

  afterAll(async () => {
    for (const worker of workers) await killWorker(worker);
    await w?.close();
  });

  it('killed while the server holds the answer: sent at most once, and the journal says what is known', { timeout: 150_000 }, async () => {
    const db = prismaExecutor(w.h.prisma);
    const poll = () => notifySync({ client: w.h.client, taskQueue: w.h.cfg.TEMPORAL_TASK_QUEUE }, w.h.accountId, { source: 'poll' });
    const rule = await w.h.prisma.rule.create({
      data: { scope: 'domain', scopeRef: w.correspondentDomain, kind: 'deterministic', action: 'needs_response', actions: [{ kind: 'auto_reply' }] },
    });
    try {
      const subject = `Monday in the office ${run}`;
      const threadId = await w.incoming(subject);
      const autoReply = async () => (await listActions(db, { accountId: w.h.accountId, threadId })).find((a: JournaledAction) => a.kind === 'auto_reply');
      const waiting = await waitUntil('the auto-reply awaiting approval', async () => {
        await poll();
        const found = await autoReply();
        return found?.state === 'awaiting_approval' && found.result?.draftId ? found : false;
      }, { timeoutMs: 60_000 });

      const held = w.holdSend();
      const decided = await decideAction({ client: w.h.client, db, taskQueue: w.h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: w.h.cfg.GMAIL_TASK_QUEUE }, waiting.id, 'approve', 'test');
      expect(decided).toMatchObject({ ok: true, action: { state: 'scheduled' } });
      await held;
      // The message is with the server, its answer is not with the worker: SIGKILL.
      await killWorker(workers.pop()!);
      await w.releaseSend();
      // The server takes it (Gmail: the slow call completes; Postfix: the policy says go on).
      expect(await waitUntil('the reply at the correspondent', async () => (await w.receivedByCorrespondent(subject)) || false, { timeoutMs: 30_000 })).toBe(1);
      expect((await autoReply())?.state).toBe('scheduled');

      workers.push(spawnWorker(w.h, 'gmail-worker'));
      let last: JournaledAction | undefined;
      const settled = await waitUntil('the retry to settle the action', async () => {
        last = await autoReply();
        return last?.state !== 'scheduled' && last;
      }, { timeoutMs: 60_000 }).catch((err: Error) => {
        throw new Error(`${err.message}; the action: ${JSON.stringify(last)}`);
      });
      if (w.sendIsFindable) {
        expect(settled.state).toBe('done');
        await w.h.waitFor(threadId, (s) => s.state === 'sent');
      } else {
        expect(settled.state).toBe('failed');
        const thread = await w.h.waitFor(threadId, (s) => s.decisions.some((d) => d.kind === 'action_required'));
        const reason = thread.decisions.find((d) => d.kind === 'action_required')!.detail;
        expect(reason).toMatch(/cut off after the message was handed to the mail server.*not known/);
      }
      // Whatever the retry concluded, the correspondent has the reply once, and nothing more goes out.
      await poll();
      expect(await w.receivedByCorrespondent(subject)).toBe(1);
    } finally {
      await w.h.prisma.rule.delete({ where: { id: rule.id } });
    }
  });
});
