// A thread workflow never ends as failed. A step that fails for good, at any activity of the
// thread (read, classify, draft, place, actions, agent turn, tool), ends the thread in Action
// Required with the reason in the decision log, the journal, the thread row and the status query,
// and the run goes on. A step stuck on one message's retryable error gives up after a bounded time;
// an outage of the whole account's Gmail keeps waiting. Real dev server, Postgres and emulators;
// the injected failure is the only stand-in (an activity interceptor on the real workers).
import { ApplicationFailure } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { saveAgentProfile } from '../../src/agent/profiles.js';
import { listActions } from '../../src/actions/journal.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import type { ThreadStatus } from '../../src/thread/contracts.js';
import { deliver, deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { recordHistory } from '../helpers/histories.js';

let h: InboxHarness;
const cleanup: (() => Promise<unknown>)[] = [];
const db = () => prismaExecutor(h.prisma);

beforeAll(async () => {
  h = await startInboxHarness({ settings: { stepLimits: { giveUpAfterMs: 6_000, outageRecheckMs: 1_000 } } });
});

afterEach(async () => {
  await h.stopWorkers();
  await h.gmail.control.setFaults({ errors: [], latency: [], poison: [] });
  for (const undo of cleanup.splice(0)) await undo();
});

afterAll(async () => {
  await h?.close();
});

/** Every call of `activityType` fails for good, as a Gmail 400 or a refused LLM request would. */
const failing =
  (activityType: string): ActivityInterceptorsFactory =>
  (ctx) => ({
    inbound: {
      async execute(input, next) {
        if (ctx.info.activityType === activityType) {
          throw ApplicationFailure.create({ type: 'InjectedFailure', message: `${activityType} refused (injected)`, nonRetryable: true });
        }
        return next(input);
      },
    },
  });

const question = (subject: string, from = 'Carol <carol@client.example>') => ({ from, subject, text: 'Could you confirm the delivery date?' });
const newsletter = (subject: string) => ({ ...question(subject, 'News <news@shop.example>'), headers: { 'List-Unsubscribe': '<mailto:unsubscribe@shop.example>' } });
const settled = (threadId: string, state = 'action_required') => h.waitFor(threadId, (s) => s.state === state && s.pendingEvents === 0, 45_000);

/** A rule that hands the domain's mail to an agent following `steps`. */
async function agentFor(domain: string, steps: Parameters<InboxHarness['anthropic']['script']>[1]): Promise<void> {
  const name = `fail-${domain}`;
  const marker = h.anthropic.script(name, steps);
  await saveAgentProfile(db(), { name, description: 'test', instructions: `Help. ${marker}`, tools: ['read_thread', 'search_mailbox', 'write_draft', 'escalate'], maxSteps: 4, sendsNeedApproval: true });
  const rule = await h.prisma.rule.create({ data: { scope: 'domain', scopeRef: domain, kind: 'deterministic', action: 'needs_response', route: name } });
  cleanup.push(() => h.prisma.rule.delete({ where: { id: rule.id } }), () => h.prisma.agentProfile.delete({ where: { name } }));
}

/** A sender rule that decides needs_response, so the reply is written by writeDraft (not with the triage). */
async function ruleDecides(sender: string): Promise<void> {
  const rule = await h.prisma.rule.create({ data: { scope: 'sender', scopeRef: sender, kind: 'deterministic', action: 'needs_response' } });
  cleanup.push(() => h.prisma.rule.delete({ where: { id: rule.id } }));
}

/** Everything the user and the operator can see says Action Required, with `why`; the run did not fail. */
async function expectActionRequired(threadId: string, status: ThreadStatus, why: RegExp): Promise<void> {
  const reason = status.decisions.filter((d) => d.kind === 'action_required').map((d) => d.detail);
  expect(reason.join('\n')).toMatch(why);
  expect((await h.handle(threadId).describe()).status.name).not.toBe('FAILED');
  const row = await h.prisma.thread.findFirstOrThrow({ where: { accountId: h.accountId, gmailThreadId: threadId } });
  expect(row.state).toBe('action_required');
  const journal = await listActions(db(), { accountId: h.accountId, threadId });
  const labelled = journal.find((a) => a.kind === 'add_label' && a.argument === h.settings.labels.actionRequired);
  expect(labelled?.reason).toMatchObject({ source: 'system', why: expect.stringMatching(why) });
  const labels = (await h.gmail.control.getState(h.email)).labels.find((l) => l.name === h.settings.labels.actionRequired);
  const messages = (await h.gmail.control.getState(h.email)).messages.filter((m) => m.threadId === threadId);
  expect(messages.some((m) => labels && m.labelIds.includes(labels.id))).toBe(true);
}

describe('a step that fails for good ends the thread in Action Required, never failed', () => {
  const cases: { activity: string; mail: () => Promise<{ threadId: string }> }[] = [
    { activity: 'readThread', mail: () => deliverAndIngest(h, question('Read fails')) },
    { activity: 'triageWithLlm', mail: () => deliverAndIngest(h, question('Classify fails')) },
    {
      activity: 'writeDraft',
      mail: async () => {
        await ruleDecides('dora@rule.example');
        return deliverAndIngest(h, question('Draft fails', 'Dora <dora@rule.example>'));
      },
    },
    { activity: 'placeDraft', mail: () => deliverAndIngest(h, question('Place fails')) },
    { activity: 'proposeAndPerform', mail: () => deliverAndIngest(h, newsletter('Actions fail')) },
    {
      activity: 'agentTurn',
      mail: async () => {
        await agentFor('turn-fails.example', [{ text: 'never reached' }]);
        return deliverAndIngest(h, question('Agent turn fails', 'Tess <tess@turn-fails.example>'));
      },
    },
    {
      activity: 'searchMailbox',
      mail: async () => {
        await agentFor('tool-fails.example', [{ toolCalls: [{ name: 'search_mailbox', input: { query: 'invoice', max_results: 3 } }] }, { text: 'done' }]);
        return deliverAndIngest(h, question('Agent tool fails', 'Tom <tom@tool-fails.example>'));
      },
    },
  ];

  for (const { activity, mail } of cases) {
    it(`at ${activity}`, async () => {
      await h.startWorkers({ activityInterceptors: [failing(activity)] });
      const { threadId } = await mail();
      const status = await settled(threadId);
      // A tool's failure is told to the model first (it may work around it), then to the user.
      const step = activity === 'searchMailbox' ? 'search_mailbox: the tool failed: InjectedFailure:' : `${activity} failed: InjectedFailure:`;
      await expectActionRequired(threadId, status, new RegExp(`${step} ${activity} refused \\(injected\\)`));
      if (activity === 'readThread') await recordHistory(h, threadId, 'thread-step-failed');
    });
  }

  it('takes the failed message as handled: the same mail handed over again changes nothing, new mail moves the thread on', async () => {
    await h.startWorkers({ activityInterceptors: [failing('placeDraft')] });
    const first = await deliverAndIngest(h, question('Handed over twice'));
    const failed = await settled(first.threadId);
    const row = await h.prisma.thread.findFirstOrThrow({ where: { accountId: h.accountId, gmailThreadId: first.threadId } });
    // What the inbox scan compares with the mailbox's newest message before it hands a thread over.
    expect(row.lastMessageId).toBe(first.messageId);
    await h.ingest(first.threadId, { type: 'message_added', messageId: first.messageId, labelIds: ['INBOX'] });
    const again = await settled(first.threadId);
    expect(again.decisions).toHaveLength(failed.decisions.length);

    await h.stopWorkers();
    await h.startWorkers();
    const next = await deliver(h, { ...question('Re: Handed over twice'), threadId: first.threadId });
    await h.ingest(first.threadId, { type: 'message_added', messageId: next.messageId, labelIds: ['INBOX'] });
    await settled(first.threadId, 'drafted');
  });
});

describe('a step stuck on a retryable error', () => {
  it("gives up after a bounded time when only this thread's mail fails, while the account's other mail goes through", async () => {
    await h.startWorkers();
    const poisoned = await deliver(h, question('Every read of me fails'));
    await h.gmail.control.setFaults({ poison: [{ messageId: poisoned.messageId, mode: 'error' }] });
    await h.ingest(poisoned.threadId, { type: 'message_added', messageId: poisoned.messageId, labelIds: ['INBOX'] });
    const healthy = await deliverAndIngest(h, question('I am fine'));
    await settled(healthy.threadId, 'drafted');
    const status = await settled(poisoned.threadId);
    await expectActionRequired(poisoned.threadId, status, /readThread gave up after retrying/);
    await recordHistory(h, poisoned.threadId, 'thread-step-stuck');
  });

  it("keeps waiting while the whole account's Gmail is out, and carries on when it is back", async () => {
    await h.startWorkers();
    await h.gmail.control.setFaults({ errors: [{ method: 'threads.get', rate: 1, status: 500 }, { method: 'getProfile', rate: 1, status: 503 }] });
    const { threadId } = await deliverAndIngest(h, question('Outage'));
    const waiting = await h.waitFor(threadId, (s) => (s.waitingFor ?? '').includes('Gmail does not answer'), 45_000);
    expect(waiting.state).toBe('pending');
    await h.gmail.control.setFaults({ errors: [] });
    await settled(threadId, 'drafted');
    await recordHistory(h, threadId, 'thread-gmail-outage-waited');
  });
});
