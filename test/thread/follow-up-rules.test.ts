// Whether a message the user sent expects an answer: the follow-up rules first, the LLM only when no
// rule decides (issue #25), end to end on the real dev server, PostgreSQL and the Gmail and Anthropic
// emulators. The LLM's calls are counted on the Anthropic emulator: a rule's decision makes none.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountTimeSettings } from '../../src/accounts/time-settings.js';
import { addBusinessDays } from '../../src/time/index.js';
import type { ThreadStatus } from '../../src/thread/contracts.js';
import { recordHistory } from '../helpers/histories.js';
import { deliverAndIngest, startInboxHarness, userSends, type InboxHarness } from '../helpers/inbox-harness.js';
import type { Rule } from '../../src/rules/contracts.js';

let h: InboxHarness;
const tag = randomUUID().slice(0, 8);
const FOLLOW_UP_MS = 3000;

beforeAll(async () => {
  h = await startInboxHarness({ env: { FOLLOW_UP_AFTER: `${FOLLOW_UP_MS / 1000}s` } });
  await h.startWorkers();
});

afterAll(async () => {
  await h?.prisma.rule.deleteMany({ where: { scopeRef: { endsWith: `-${tag}.example` } } });
  await h?.close();
});

const settled = (s: ThreadStatus) => s.pendingEvents === 0;
const llmCalls = () => h.anthropic.metrics().requests;

/** A follow-up rule for a recipients' domain of this file's own, stored as `rules add` stores it. */
async function followUpRule(domain: string, expectsReply: boolean, followUpDays?: number): Promise<Rule['id']> {
  const row = await h.prisma.rule.create({
    data: {
      scope: 'domain',
      scopeRef: domain,
      kind: 'follow_up',
      action: expectsReply ? 'expects_reply' : 'no_reply',
      priority: 0,
      ...(followUpDays ? { followUpDays } : {}),
    },
  });
  return row.id;
}

/** Mail from someone at `domain`, drafted; then the user sends `text` as the answer. Returns the LLM calls the send caused. */
async function answerFrom(domain: string, subject: string, text: string, done: (s: ThreadStatus) => boolean) {
  const { threadId } = await deliverAndIngest(h, { from: `Ann Example <ann@${domain}>`, subject, text: 'Could you send me the numbers by Friday?' });
  const drafted = await h.waitFor(threadId, (s) => s.state === 'drafted' && settled(s));
  const before = llmCalls();
  const sentAt = Date.now();
  await userSends(h, threadId, drafted.draftId!, text);
  const status = await h.waitFor(threadId, (s) => done(s) && settled(s));
  return { threadId, status, calls: llmCalls() - before, sentAt };
}

const journal = (threadId: string) =>
  h.prisma.$queryRawUnsafe<{ state: string }[]>(
    `SELECT state::text AS state FROM actions WHERE account_id = $1 AND gmail_thread_id = $2 AND kind = 'follow_up' ORDER BY created_at`,
    h.accountId,
    threadId,
  );

describe('the follow-up rules decide before the LLM', () => {
  it('a rule saying "no" for the recipients\' domain: the thread closes as sent, no LLM call, though the message asks a question', async () => {
    const domain = `quiet-${tag}.example`;
    const ruleId = await followUpRule(domain, false);
    const { threadId, status, calls } = await answerFrom(domain, 'Numbers', 'Could you confirm you got them?', (s) => s.state === 'sent');
    expect(calls).toBe(0);
    const decision = status.decisions.find((d) => d.kind === 'timer');
    expect(decision).toMatchObject({ source: 'rules', ruleId });
    expect(decision!.detail).toContain('expects no answer');
    expect(await journal(threadId)).toHaveLength(0);
    await recordHistory(h, threadId, 'thread-follow-up-rule-no');
  });

  it('a rule saying "yes" with its own wait: awaiting_reply for that many business days, no LLM call, though the message asks nothing', async () => {
    const domain = `waits-${tag}.example`;
    const ruleId = await followUpRule(domain, true, 2);
    const { threadId, status, calls, sentAt } = await answerFrom(domain, 'Figures', 'Noted, thanks.', (s) => s.state === 'awaiting_reply');
    expect(calls).toBe(0);
    expect(status.decisions.find((d) => d.kind === 'timer' && d.source === 'rules')).toMatchObject({ ruleId });
    // The rule's 2 business days in the account's zone, not FOLLOW_UP_AFTER's seconds.
    const zone = (await accountTimeSettings(h.prisma, h.accountId, h.cfg))!;
    const [wake] = status.wakes!;
    expect(wake!.kind).toBe('follow_up');
    expect(wake!.at).toBeGreaterThanOrEqual(addBusinessDays(new Date(sentAt), 2, zone).getTime());
    expect(wake!.at).toBeLessThanOrEqual(addBusinessDays(new Date(), 2, zone).getTime());
    expect((await journal(threadId)).map((a) => a.state)).toEqual(['scheduled']);

    // The answer ends the wait as before.
    await deliverAndIngest(h, { from: `Ann Example <ann@${domain}>`, subject: 'Re: Figures', text: 'Here they are.', threadId });
    await h.waitFor(threadId, (s) => s.state !== 'awaiting_reply' && !s.wakes && settled(s));
    expect((await journal(threadId)).map((a) => a.state)).toEqual(['undone']);
    await recordHistory(h, threadId, 'thread-follow-up-rule-yes');
  });

  it('no rule decides: the LLM is asked, as before (one call)', async () => {
    const domain = `asked-${tag}.example`;
    const { status, calls } = await answerFrom(domain, 'Totals', 'Could you sign and return it by Friday?', (s) => s.state === 'awaiting_reply');
    expect(calls).toBe(1);
    expect(status.decisions.find((d) => d.kind === 'timer')).toMatchObject({ source: 'llm' });
  });
});
