// The thread lifecycle end to end: real dev server, Postgres, Gmail and Anthropic emulators.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliver, deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { recordHistory } from '../helpers/histories.js';
import { QuotaLimiter } from '../../src/quota/limiter.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { quotaOptionsFromConfig } from '../../src/config/settings.js';

let h: InboxHarness;

beforeAll(async () => {
  h = await startInboxHarness();
  await h.startWorkers();
});

afterAll(async () => {
  await h?.close();
});

async function mailbox() {
  return h.gmail.control.getState(h.email);
}

async function labelNamesOfThread(threadId: string): Promise<string[]> {
  const state = await mailbox();
  const names = new Map(state.labels.map((l) => [l.id, l.name]));
  const ids = new Set(state.messages.filter((m) => m.threadId === threadId).flatMap((m) => m.labelIds));
  return [...ids].map((id) => names.get(id) ?? id);
}

async function draftsOf(threadId: string) {
  return (await mailbox()).drafts.filter((d) => d.threadId === threadId);
}

async function draftText(draftId: string): Promise<string> {
  const { gmail } = await h.accountGmail();
  return (await gmail.getDraft(draftId))?.body ?? '';
}

const question = (subject: string) => ({
  from: 'Alice Example <alice@partner.example>',
  subject,
  text: 'Hi,\n\nCould you send me the quarterly numbers by Friday?\n\nThanks, Alice',
});

describe('thread workflow lifecycle', () => {
  it('drafts a reply in the thread for mail that needs one, labels it Outbox and records why', async () => {
    const { threadId, messageId } = await deliverAndIngest(h, question('Quarterly numbers'));
    // pendingEvents 0: the event is fully handled, the Postgres write included.
    const status = await h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0);

    expect(status.category).toBe('needs_response');
    const drafts = await draftsOf(threadId);
    expect(drafts).toHaveLength(1);
    expect(drafts[0]!.id).toBe(status.draftId);
    expect(await labelNamesOfThread(threadId)).toContain('Outbox');

    const body = await draftText(status.draftId!);
    expect(body).toMatch(/Quarterly numbers/);

    const row = await h.prisma.thread.findUniqueOrThrow({
      where: { accountId_gmailThreadId: { accountId: h.accountId, gmailThreadId: threadId } },
      include: { decisions: { orderBy: { seq: 'asc' } } },
    });
    expect(row.state).toBe('drafted');
    expect(row.draftId).toBe(status.draftId);
    expect(row.handledMessageIds).toContain(messageId);
    const llmDecisions = row.decisions.filter((d) => d.source === 'llm');
    expect(llmDecisions.map((d) => d.kind)).toEqual(['classify', 'draft']);
    expect(llmDecisions.every((d) => (d.tokensIn ?? 0) > 0 && (d.tokensOut ?? 0) > 0)).toBe(true);
    // Its Gmail calls drew from the account's shared quota bucket (the one sync and backfill use);
    // nothing else in this harness calls Gmail for the account.
    const bucket = await new QuotaLimiter(prismaExecutor(h.prisma), quotaOptionsFromConfig(h.cfg)).state(h.accountId);
    expect(bucket?.rate).toBeGreaterThan(0);
    await recordHistory(h, threadId, 'thread-drafted');
  });

  it('answers a sender whose display name holds control characters and an ANSI escape, at her address', async () => {
    const raw = [
      'From: =?UTF-8?Q?=07Alice=1B[31m_Martin?= <alice.martin@example.com>',
      `To: ${h.email}`,
      'Subject: Quarterly numbers, coloured',
      'Message-ID: <ansi-1@example.com>',
      '',
      'Hi,\r\n\r\nCould you send me the quarterly numbers by Friday?\r\n\r\nThanks, Alice',
    ].join('\r\n');
    const { threadId } = await deliverAndIngest(h, { from: '', raw: Buffer.from(raw).toString('base64url') });
    const status = await h.waitFor(threadId, (s) => s.state !== 'pending' && s.pendingEvents === 0);
    expect(status.state, JSON.stringify(status.decisions.at(-1))).toBe('drafted');
    const { gmail } = await h.accountGmail();
    const draft = await gmail.getDraft(status.draftId!);
    expect(draft?.message.to).toEqual([{ address: 'alice.martin@example.com' }]);
    expect(draft?.threadId).toBe(threadId);
  });

  it('keeps its draft in the thread when the subject holds an encoded CR/LF: same subject, threading headers, thread id', async () => {
    const { threadId, messageId } = await deliverAndIngest(h, question('Quarterly\r\nnumbers'));
    const status = await h.waitFor(threadId, (s) => s.state !== 'pending' && s.pendingEvents === 0);
    expect(status.state, JSON.stringify(status.decisions.at(-1))).toBe('drafted');
    const drafts = await draftsOf(threadId);
    expect(drafts.map((d) => d.id)).toEqual([status.draftId]);
    const { gmail } = await h.accountGmail();
    const [draft, original] = await Promise.all([gmail.getDraft(status.draftId!), gmail.getMessage(messageId, 'full')]);
    expect(draft?.threadId).toBe(threadId);
    expect(draft?.message.exactSubject).toBe('Re: Quarterly\r\nnumbers');
    expect(draft?.message.inReplyTo).toBe(original.messageId);
    expect(draft?.message.references).toEqual([original.messageId]);
  });

  it('keeps card numbers and passwords in the mail out of the model’s prompts', async () => {
    const { threadId } = await deliverAndIngest(h, {
      from: 'Alice Example <alice@partner.example>',
      subject: 'Booking the venue',
      text: 'Could you book the venue? Use the card 4111 1111 1111 1111 and the portal password: Tr0ub4dor&3',
    });
    await h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0);
    const prompt = JSON.stringify(h.anthropic.lastRequest()?.body); // the drafting call, thread included
    expect(prompt).toContain('Could you book the venue?');
    expect(prompt).toContain('[card number removed]');
    expect(prompt).not.toContain('4111 1111 1111 1111');
    expect(prompt).not.toContain('Tr0ub4dor');
  });

  it('decides newsletters by rule, with no LLM call and no draft', async () => {
    const before = h.anthropic.metrics().requests;
    const { threadId } = await deliverAndIngest(h, {
      from: 'Weekly Digest <news@letters.example>',
      subject: 'This week in widgets',
      text: 'Top stories of the week.',
      headers: { 'List-Unsubscribe': '<mailto:unsubscribe@letters.example>' },
    });
    const status = await h.waitFor(threadId, (s) => s.state === 'skipped');
    expect(status.category).toBe('newsletter');
    expect(status.confidence).toBe(1);
    expect(status.decisions[0]).toMatchObject({ kind: 'classify', source: 'rules' });
    expect(h.anthropic.metrics().requests).toBe(before);
    expect(await draftsOf(threadId)).toHaveLength(0);
  });

  it("applies the user's rules stored in Postgres: a sender rule decides, instructions reach the prompt, other accounts' rules do not", async () => {
    const created = await Promise.all([
      h.prisma.rule.create({
        data: { scope: 'sender', scopeRef: 'invoices@vendor.example', kind: 'deterministic', action: 'automated' },
      }),
      // Another account's rule would call the question below a newsletter: it must not apply here.
      h.prisma.rule.create({
        data: {
          scope: 'account',
          scopeRef: '00000000-0000-7000-8000-000000000000',
          kind: 'deterministic',
          conditions: { subject: 'supplier' },
          action: 'newsletter',
        },
      }),
      h.prisma.rule.create({
        data: {
          scope: 'domain',
          scopeRef: 'vendor.example',
          kind: 'instruction',
          action: 'instruction',
          instruction: 'Vendor mail: always ask for the purchase order number.',
        },
      }),
    ]);
    try {
      const llmCalls = h.anthropic.metrics().requests;
      const invoice = await deliverAndIngest(h, {
        from: 'Vendor Billing <invoices@vendor.example>',
        subject: 'Invoice 1042',
        text: 'Please find the invoice attached. Can you confirm receipt?',
      });
      const decided = await h.waitFor(invoice.threadId, (s) => s.state === 'skipped');
      expect(decided).toMatchObject({ category: 'automated', confidence: 1 });
      expect(decided.decisions[0]).toMatchObject({ kind: 'classify', source: 'rules', ruleId: created[0].id });
      expect(h.anthropic.metrics().requests).toBe(llmCalls);

      const question = await deliverAndIngest(h, {
        from: 'Sales <sales@vendor.example>',
        subject: 'New supplier terms',
        text: 'Could you confirm the new supplier terms by Monday?',
      });
      const drafted = await h.waitFor(question.threadId, (s) => s.state === 'drafted');
      expect(drafted.category).toBe('needs_response');
      expect(drafted.decisions[0]).toMatchObject({ kind: 'classify', source: 'llm' });
      // The last model call of this thread wrote the draft; its prompt carried the domain's instruction.
      expect(JSON.stringify(h.anthropic.lastRequest()?.body)).toContain('always ask for the purchase order number');
    } finally {
      await h.prisma.rule.deleteMany({ where: { id: { in: created.map((r) => r.id) } } });
    }
  });

  it('leaves a broken rule out, records why, and still classifies the mail', async () => {
    // Written around the CLI's checks, as a hand-edited row would be.
    const [broken, working] = await Promise.all([
      h.prisma.rule.create({
        data: { scope: 'sender', scopeRef: 'ops@broken-rules.example', kind: 'deterministic', conditions: { subject: '/(unclosed/' }, action: 'fyi' },
      }),
      h.prisma.rule.create({
        data: { scope: 'domain', scopeRef: 'broken-rules.example', kind: 'deterministic', action: 'automated' },
      }),
    ]);
    try {
      const { threadId } = await deliverAndIngest(h, {
        from: 'Ops <ops@broken-rules.example>',
        subject: 'Nightly report',
        text: 'All jobs finished.',
      });
      const status = await h.waitFor(threadId, (s) => s.state === 'skipped' && s.pendingEvents === 0);
      expect(status.category).toBe('automated');
      // Automated mail gets the default actions: marked read and labelled.
      expect(status.decisions.map((d) => d.kind)).toEqual(['rule_skipped', 'classify', 'skip', 'action', 'action']);
      expect(status.decisions.slice(3).map((d) => d.detail)).toEqual(['mark_read: done', 'add_label Notifications: done']);
      expect(status.decisions[0]!.detail).toMatch(new RegExp(`rule "${broken.id}": conditions.subject: invalid regular expression`));
      expect(status.decisions[1]).toMatchObject({ source: 'rules', ruleId: working.id });
      const logged = await h.prisma.decision.findMany({ where: { thread: { gmailThreadId: threadId }, kind: 'rule_skipped' } });
      expect(logged).toHaveLength(1);
    } finally {
      await h.prisma.rule.deleteMany({ where: { id: { in: [broken.id, working.id] } } });
    }
  });

  it('drafts when the user adds Needs Response to a skipped thread', async () => {
    const { threadId, messageId } = await deliverAndIngest(h, {
      from: 'Bob <bob@friends.example>',
      subject: 'Photos from the trip',
      text: 'Here are the photos from the trip. [emulator:category=fyi]',
    });
    await h.waitFor(threadId, (s) => s.state === 'skipped');
    await h.gmail.control.modifyLabels(h.email, { threadId, add: ['Needs Response'] });
    await h.ingest(threadId, { type: 'labels_changed', messageId, changeId: 'nr-1', added: ['needsResponse'], removed: [] });
    const status = await h.waitFor(threadId, (s) => s.state === 'drafted');
    expect(await draftsOf(threadId)).toHaveLength(1);
    expect(await labelNamesOfThread(threadId)).not.toContain('Needs Response');
    expect(status.decisions.some((d) => d.source === 'user' && d.kind === 'classify')).toBe(true);
    await recordHistory(h, threadId, 'thread-needs-response-label');
  });

  it('takes Needs Response off a thread that already has our draft, and writes no second one', async () => {
    const { threadId, messageId } = await deliverAndIngest(h, question('Parking permits'));
    await h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0);
    const llmCalls = h.anthropic.metrics().requests;
    await h.gmail.control.modifyLabels(h.email, { threadId, add: ['Needs Response'] });
    await h.ingest(threadId, { type: 'labels_changed', messageId, changeId: 'nr-again', added: ['needsResponse'], removed: [] });
    const status = await h.waitFor(threadId, (s) => s.decisions.at(-1)?.detail === 'Needs Response: already drafted' && s.pendingEvents === 0);
    expect(status.state).toBe('drafted');
    expect(await labelNamesOfThread(threadId)).not.toContain('Needs Response');
    expect(await labelNamesOfThread(threadId)).toContain('Outbox');
    expect(await draftsOf(threadId)).toHaveLength(1);
    expect(h.anthropic.metrics().requests).toBe(llmCalls);
    await recordHistory(h, threadId, 'thread-needs-response-already-drafted');
  });

  it('reworks the draft with the instructions typed into it, then gives up after the limit', async () => {
    const { threadId, messageId } = await deliverAndIngest(h, question('Contract renewal'));
    let status = await h.waitFor(threadId, (s) => s.state === 'drafted');
    const draftId = status.draftId!;

    for (let round = 1; round <= h.settings.maxReworks; round++) {
      const current = await draftText(draftId);
      await h.gmail.control.editDraft(h.email, draftId, { text: `Mention the Friday deadline (round ${round})\n\n${current}` });
      await h.gmail.control.modifyLabels(h.email, { threadId, add: ['Rework'] });
      await h.ingest(threadId, { type: 'labels_changed', messageId, changeId: `rw-${round}`, added: ['rework'], removed: [] });
      status = await h.waitFor(threadId, (s) => s.reworkCount === round && s.state === 'drafted');
      const body = await draftText(draftId);
      expect(body).toContain(`Revised as asked: Mention the Friday deadline (round ${round})`);
      expect(await draftsOf(threadId)).toHaveLength(1);
      expect(await labelNamesOfThread(threadId)).not.toContain('Rework');
    }

    const llmCalls = h.anthropic.metrics().requests;
    await h.gmail.control.modifyLabels(h.email, { threadId, add: ['Rework'] });
    await h.ingest(threadId, { type: 'labels_changed', messageId, changeId: 'rw-over', added: ['rework'], removed: [] });
    status = await h.waitFor(threadId, (s) => s.state === 'action_required');
    expect(h.anthropic.metrics().requests).toBe(llmCalls);
    expect(await labelNamesOfThread(threadId)).toContain('Action Required');
    expect(status.decisions.at(-1)?.detail).toMatch(/rework limit reached \(3\)/);
    await recordHistory(h, threadId, 'thread-rework-limit');
  });

  it('replaces an unedited draft when new mail arrives in the thread, and keeps one the user edited', async () => {
    // Unedited: the new message gets the reply, in the same draft.
    const first = await deliverAndIngest(h, question('Offsite venue'));
    const drafted = await h.waitFor(first.threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0);
    const before = await draftText(drafted.draftId!);
    // (The emulator's draft thanks for news and promises details for a question.)
    await deliverAndIngest(h, {
      ...question('Re: Offsite venue'),
      text: 'We booked the boat trip as well. [emulator:category=needs_response]',
      threadId: first.threadId,
    });
    const redrafted = await h.waitFor(first.threadId, (s) => s.decisions.filter((d) => d.kind === 'draft').length === 2 && s.pendingEvents === 0);
    expect(redrafted.draftId).toBe(drafted.draftId);
    expect(before).toContain('I have read your request');
    expect(await draftText(drafted.draftId!)).toContain('Thanks for letting me know.');
    expect(await draftsOf(first.threadId)).toHaveLength(1);

    // Edited: the user's text stays, no reply is written (only the classification call).
    const second = await deliverAndIngest(h, question('Hiring plan'));
    const mine = await h.waitFor(second.threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0);
    const edited = 'Hi Alice,\n\nI will bring the hiring plan to Monday\'s meeting.\n\nJane';
    await h.gmail.control.editDraft(h.email, mine.draftId!, { text: edited });
    const llmCalls = h.anthropic.metrics().requests;
    await deliverAndIngest(h, { ...question('Re: Hiring plan'), text: 'And can you add the budget?', threadId: second.threadId });
    const kept = await h.waitFor(second.threadId, (s) => s.decisions.at(-1)?.kind === 'draft_kept' && s.pendingEvents === 0);
    expect(kept.state).toBe('drafted');
    expect(kept.decisions.at(-1)?.detail).toMatch(/kept the draft you edited; .*\(add Rework/);
    expect(await draftText(mine.draftId!)).toBe(edited);
    expect(await draftsOf(second.threadId)).toHaveLength(1);
    expect(h.anthropic.metrics().requests).toBe(llmCalls + 1);
    await recordHistory(h, second.threadId, 'thread-edited-draft-kept');
  });

  it('archives the thread and closes the workflow on Done', async () => {
    const { threadId, messageId } = await deliverAndIngest(h, question('Lunch next week'));
    await h.waitFor(threadId, (s) => s.state === 'drafted');
    await h.gmail.control.modifyLabels(h.email, { threadId, add: ['Done'] });
    await h.ingest(threadId, { type: 'labels_changed', messageId, changeId: 'done-1', added: ['done'], removed: [] });
    const status = await h.waitFor(threadId, (s) => s.state === 'archived');
    await h.handle(threadId).result();
    const labels = await labelNamesOfThread(threadId);
    expect(labels).not.toContain('INBOX');
    expect(labels).not.toContain('Outbox');
    expect(labels).not.toContain('Done');
    expect((await h.handle(threadId).describe()).status.name).toBe('COMPLETED');
    expect(status.state).toBe('archived');
    await recordHistory(h, threadId, 'thread-done');
  });

  it('notices the user sent the draft', async () => {
    const { threadId } = await deliverAndIngest(h, question('Meeting agenda'));
    const status = await h.waitFor(threadId, (s) => s.state === 'drafted');
    const draft = (await draftsOf(threadId))[0]!;
    const sent = await h.gmail.control.sendDraft(h.email, draft.id);
    expect(sent.labelIds).toContain('SENT');
    // What the sync worker sees: the draft's message deleted, a SENT message added.
    await h.ingest(threadId, { type: 'draft_gone', messageId: draft.messageId });
    await h.ingest(threadId, { type: 'message_added', messageId: sent.id, labelIds: sent.labelIds });
    const done = await h.waitFor(threadId, (s) => s.state === 'sent');
    expect(done.decisions.at(-1)?.detail).toContain(sent.id);
    expect(done.draftId).toBe(status.draftId);
    expect(await labelNamesOfThread(threadId)).not.toContain('Outbox');
    await recordHistory(h, threadId, 'thread-sent');
  });

  it('marks the thread discarded when the user deletes the draft without sending', async () => {
    const { threadId } = await deliverAndIngest(h, question('Old question'));
    await h.waitFor(threadId, (s) => s.state === 'drafted');
    const draft = (await draftsOf(threadId))[0]!;
    await h.gmail.control.deleteDraft(h.email, draft.id);
    await h.ingest(threadId, { type: 'draft_gone', messageId: draft.messageId });
    await h.waitFor(threadId, (s) => s.state === 'discarded');
  });

  it('keeps one draft when signals are duplicated and reordered', async () => {
    const first = await deliver(h, question('Budget review'));
    const second = await deliver(h, { ...question('Budget review'), threadId: first.threadId, text: 'Also, can you add Q3?' });
    const events = [
      { type: 'message_added' as const, messageId: second.messageId, labelIds: ['INBOX'] },
      { type: 'message_added' as const, messageId: first.messageId, labelIds: ['INBOX'] },
      { type: 'message_added' as const, messageId: second.messageId, labelIds: ['INBOX'] },
      { type: 'message_added' as const, messageId: first.messageId, labelIds: ['INBOX'] },
    ];
    await Promise.all(events.map((e) => h.ingest(first.threadId, e)));
    const status = await h.waitFor(first.threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0);
    expect(await draftsOf(first.threadId)).toHaveLength(1);
    expect(status.decisions.filter((d) => d.kind === 'draft')).toHaveLength(1);
    await recordHistory(h, first.threadId, 'thread-duplicate-signals');
  });

  it('labels Action Required with the reason when LLM output keeps failing its schema', async () => {
    const { threadId } = await deliverAndIngest(h, { ...question('Broken model [emulator:invalid-output]') });
    const status = await h.waitFor(threadId, (s) => s.state === 'action_required');
    expect(status.decisions.at(-1)?.detail).toMatch(/classification failed: LlmOutputInvalidError/);
    expect(await labelNamesOfThread(threadId)).toContain('Action Required');
    expect(await draftsOf(threadId)).toHaveLength(0);
    const metrics = h.anthropic.metrics();
    expect(metrics.invalidOutputs).toBeGreaterThanOrEqual(h.settings.llmAttempts);
    await recordHistory(h, threadId, 'thread-llm-invalid-output');
  });

  it('does not process a redelivered message again after the thread closed', async () => {
    const { threadId, messageId } = await deliverAndIngest(h, question('Closed question'));
    await h.waitFor(threadId, (s) => s.state === 'drafted');
    await h.gmail.control.modifyLabels(h.email, { threadId, add: ['Done'] });
    await h.ingest(threadId, { type: 'labels_changed', messageId, changeId: 'done-x', added: ['done'], removed: [] });
    await h.waitFor(threadId, (s) => s.state === 'archived');
    const closedRun = await h.handle(threadId).result();
    expect(closedRun).toMatchObject({ state: 'archived' });
    const calls = h.anthropic.metrics().requests;
    // The same message again (a gap repair, a fallback scan): a new run starts, sees it was handled, and waits.
    await h.ingest(threadId, { type: 'message_added', messageId, labelIds: ['INBOX'] });
    const status = await h.waitFor(threadId, (s) => s.state === 'pending');
    expect(status.decisions, JSON.stringify(status.decisions)).toHaveLength(0);
    expect(h.anthropic.metrics().requests).toBe(calls);
    // Done archives but leaves the user's draft alone; no second draft is written.
    expect(await draftsOf(threadId)).toHaveLength(1);
    await h.handle(threadId).terminate('test cleanup');
  });

  it("records the tokens of every call against the day's budget (a spent budget: test/thread/llm-breaker.test.ts)", async () => {
    const today = new Date(new Date().toISOString().slice(0, 10));
    const key = { accountId_day: { accountId: h.accountId, day: today } };
    const tokensToday = async () => {
      const row = await h.prisma.tokenUsage.findUnique({ where: key });
      return (row?.tokensIn ?? 0) + (row?.tokensOut ?? 0);
    };

    const spentBefore = await tokensToday();
    const first = await deliverAndIngest(h, question('Budget check'));
    const drafted = await h.waitFor(first.threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0);
    const spentByThread = drafted.decisions
      .filter((d) => d.source === 'llm')
      .reduce((sum, d) => sum + (d.tokensIn ?? 0) + (d.tokensOut ?? 0), 0);
    expect(spentByThread).toBeGreaterThan(0);
    expect(await tokensToday()).toBe(spentBefore + spentByThread);
  });
});
