// The thread keeps time (issue #25), end to end on the real dev server, PostgreSQL and the Gmail,
// Anthropic and Discord emulators: snooze and its early end, remind, send later (the draft as it is
// at the time), awaiting reply and the follow-up (a reply cancels it; the nudge and its race).
// Durations are injected (seconds, not days): the time-skipping test server cannot be had here.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordEmulator, type RunningDiscordEmulator } from '../../emulators/discord/index.js';
import { updateSafetySettings } from '../../src/actions/journal.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { InboxState, WakeAt } from '../../src/temporal/search-attributes.js';
import type { TimerRequest, ThreadStatus } from '../../src/thread/contracts.js';
import { recordHistory } from '../helpers/histories.js';
import { draftsOf as drafts, fyi, journalOf, labelsOf as labels, messagesOf as messages, question, sentIn, setTimer } from '../helpers/thread-timers.js';
import { deliver, deliverAndIngest, startInboxHarness, userSends, type InboxHarness } from '../helpers/inbox-harness.js';
import { untilTime, waitUntil } from '../helpers/wait-until.js';
import { untilQuiet } from '../helpers/workflow-quiet.js';

let h: InboxHarness;
let discord: RunningDiscordEmulator;
let webhookId: string;
const FOLLOW_UP_MS = 4000;

beforeAll(async () => {
  discord = await startDiscordEmulator();
  const webhook = await discord.control.createWebhook({ name: 'Durable Inbox' });
  webhookId = webhook.id;
  h = await startInboxHarness({ env: { DISCORD_WEBHOOK_URL: webhook.url, FOLLOW_UP_AFTER: `${FOLLOW_UP_MS / 1000}s` } });
  await h.startWorkers();
});

afterAll(async () => {
  await h?.close();
  await discord?.close();
});

const labelsOf = (threadId: string) => labels(h, threadId);
const messagesOf = (threadId: string) => messages(h, threadId);
const draftsOf = (threadId: string) => drafts(h, threadId);
const timer = (threadId: string, request: TimerRequest, requestId?: string) => setTimer(h, threadId, request, requestId);
const journal = (threadId: string, kind: string) => journalOf(h, threadId, kind);

const settled = (s: ThreadStatus) => s.pendingEvents === 0;

// Timers the user sets on threads of their own: nothing here touches another test's thread or the
// account's settings, so these run at once.
describe.concurrent('timers the user sets', () => {
  describe('snooze', () => {
    it('archives now and brings the thread back at the time: inbox, unread, labelled; journaled and visible', async () => {
      const { threadId } = await deliverAndIngest(h, fyi('Office closed'));
      await h.waitFor(threadId, (s) => s.state === 'skipped' && settled(s));
      const at = Date.now() + 5000;
      await timer(threadId, { kind: 'snooze', at });
      const snoozed = await h.waitFor(threadId, (s) => (s.wakes ?? []).some((w) => w.kind === 'snooze') && settled(s));
      expect(snoozed.wakes![0]!.at).toBe(at);
      expect(await labelsOf(threadId)).not.toContain('INBOX');
      const attrs = (await h.handle(threadId).describe()).typedSearchAttributes;
      expect(attrs.get(InboxState)).toBe('snoozed');
      expect(attrs.get(WakeAt)?.getTime()).toBe(at);
      const row = await h.prisma.thread.findFirstOrThrow({ where: { accountId: h.accountId, gmailThreadId: threadId } });
      expect(row.wakeAt?.getTime()).toBe(at);
      expect((await journal(threadId, 'snooze')).map((a) => a.state)).toEqual(['scheduled']);

      const back = await h.waitFor(threadId, (s) => !s.wakes && s.decisions.some((d) => d.detail.startsWith('snooze fired')), 20_000);
      expect(Date.now()).toBeGreaterThanOrEqual(at);
      expect(back.state).toBe('skipped');
      const labels = await labelsOf(threadId);
      expect(labels).toEqual(expect.arrayContaining(['INBOX', 'UNREAD', 'Snoozed']));
      expect((await journal(threadId, 'snooze')).map((a) => a.state)).toEqual(['done']);
      const after = (await h.handle(threadId).describe()).typedSearchAttributes;
      expect(after.get(InboxState)).toBe('skipped');
      expect(after.get(WakeAt)).toBeUndefined();
      await recordHistory(h, threadId, 'thread-snooze-returns');
    });

    it('comes back early when new mail arrives in the thread, and the new mail is classified', async () => {
      const { threadId } = await deliverAndIngest(h, fyi('Parking'));
      await h.waitFor(threadId, (s) => s.state === 'skipped' && settled(s));
      await timer(threadId, { kind: 'snooze', at: Date.now() + 3_600_000 });
      await h.waitFor(threadId, (s) => (s.wakes ?? []).length === 1 && settled(s));
      await deliverAndIngest(h, { ...question('Re: Parking'), threadId });
      const back = await h.waitFor(threadId, (s) => s.state === 'drafted' && !s.wakes && settled(s));
      expect(back.decisions.some((d) => d.detail.includes('back early'))).toBe(true);
      expect(await labelsOf(threadId)).toEqual(expect.arrayContaining(['INBOX', 'Snoozed', 'Outbox']));
      expect((await journal(threadId, 'snooze')).map((a) => a.state)).toEqual(['done']);
    });

    it('unsnooze ends it now; a repeated request changes nothing twice', async () => {
      const { threadId } = await deliverAndIngest(h, fyi('Lunch menu'));
      await h.waitFor(threadId, (s) => s.state === 'skipped' && settled(s));
      const requestId = randomUUID();
      await timer(threadId, { kind: 'snooze', at: Date.now() + 3_600_000 }, requestId);
      await timer(threadId, { kind: 'snooze', at: Date.now() + 3_600_000 }, requestId);
      await h.waitFor(threadId, (s) => (s.wakes ?? []).length === 1 && settled(s));
      await timer(threadId, { kind: 'unsnooze' });
      await h.waitFor(threadId, (s) => !s.wakes && settled(s));
      expect(await labelsOf(threadId)).toEqual(expect.arrayContaining(['INBOX', 'Snoozed']));
      expect((await journal(threadId, 'snooze')).map((a) => a.state)).toEqual(['undone']);
    });
  });

  describe('remind', () => {
    it('notifies at the time (Discord) and leaves the thread where it is', async () => {
      const { threadId } = await deliverAndIngest(h, fyi('Conference tickets'));
      await h.waitFor(threadId, (s) => s.state === 'skipped' && settled(s));
      const before = await labelsOf(threadId);
      await timer(threadId, { kind: 'remind', at: Date.now() + 2000, note: 'buy the tickets' });
      const done = await h.waitFor(threadId, (s) => s.decisions.some((d) => d.detail.startsWith('remind fired')) && settled(s), 20_000);
      expect(done.wakes).toBeUndefined();
      expect(await labelsOf(threadId)).toEqual(before);
      const [action] = await journal(threadId, 'remind');
      expect(action!.state).toBe('done');
      const messages = await discord.control.messages(webhookId);
      const mine = messages.filter((m) => m.message.content.includes(threadId));
      expect(mine).toHaveLength(1);
      expect(mine[0]!.message.content).toContain('Reminder');
      expect(mine[0]!.message.content).toContain('buy the tickets');
    });
  });

  describe('send later', () => {
    it('sends the draft as it is at the time, edits included, through the journal; the draft is gone after', async () => {
      const { threadId } = await deliverAndIngest(h, question('Numbers'));
      const drafted = await h.waitFor(threadId, (s) => s.state === 'drafted' && settled(s));
      const at = Date.now() + 5000;
      await timer(threadId, { kind: 'send_later', at });
      await h.waitFor(threadId, (s) => (s.wakes ?? []).some((w) => w.kind === 'send_later') && settled(s));
      // The user edits the draft after scheduling it: what goes out is the edit.
      await h.gmail.control.editDraft(h.email, drafted.draftId!, { text: 'Here are the numbers: 42. Edited after scheduling.' });
      await waitUntil('the send', async () => (await journal(threadId, 'send_later'))[0]?.state === 'done', { timeoutMs: 20_000 });
      const [action] = await journal(threadId, 'send_later');
      const sent = (await messagesOf(threadId)).find((m) => m.id === action!.result?.sentMessageId);
      expect(sent?.labelIds).toContain('SENT');
      const { gmail } = await h.accountGmail();
      expect((await gmail.getMessage(sent!.id)).body).toContain('Edited after scheduling.');
      expect(await draftsOf(threadId)).toHaveLength(0);
      await h.waitFor(threadId, (s) => !s.wakes && settled(s));
      await recordHistory(h, threadId, 'thread-send-later');
    });

    it('sends the draft whole: its HTML alternative and its attachment go out as the draft holds them, with the marker', async () => {
      const { threadId, messageId } = await deliverAndIngest(h, question('Floor plan'));
      const drafted = await h.waitFor(threadId, (s) => s.state === 'drafted' && settled(s));
      const at = Date.now() + 3000;
      await timer(threadId, { kind: 'send_later', at });
      await h.waitFor(threadId, (s) => (s.wakes ?? []).some((w) => w.kind === 'send_later') && settled(s));
      // The user's mail client rewrites the draft: text and HTML, and a PDF attached.
      const pdf = Buffer.from('%PDF-1.4\n% the floor plan\n'.repeat(40));
      const body = [
        '--mixed-1',
        'Content-Type: multipart/alternative; boundary="alt-1"',
        '',
        '--alt-1',
        'Content-Type: text/plain; charset=UTF-8',
        'Content-Transfer-Encoding: 8bit',
        '',
        'The floor plan is attached. Grüße',
        '--alt-1',
        'Content-Type: text/html; charset=UTF-8',
        'Content-Transfer-Encoding: 8bit',
        '',
        '<p>The floor plan is <b>attached</b>. Grüße</p>',
        '--alt-1--',
        '--mixed-1',
        'Content-Type: application/pdf; name="plan.pdf"',
        'Content-Disposition: attachment; filename="plan.pdf"',
        'Content-Transfer-Encoding: base64',
        '',
        ...pdf.toString('base64').match(/.{1,76}/g)!,
        '--mixed-1--',
        '',
      ].join('\r\n');
      const { gmail } = await h.accountGmail();
      const parent = (await gmail.getMessage(messageId)).messageId;
      const head = [
        `From: ${h.email}`,
        'To: Alice Example <alice@partner.example>',
        'Subject: Re: Floor plan',
        `In-Reply-To: ${parent}`,
        `References: ${parent}`,
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="mixed-1"',
      ].join('\r\n');
      await gmail.updateDraft(drafted.draftId!, { threadId, raw: Buffer.from(`${head}\r\n\r\n${body}`, 'utf8').toString('base64url') });

      await waitUntil('the send', async () => (await journal(threadId, 'send_later'))[0]?.state === 'done', { timeoutMs: 20_000 });
      const [action] = await journal(threadId, 'send_later');
      const sent = await gmail.getMessage(action!.result!.sentMessageId!);
      expect(sent.labelIds).toContain('SENT');
      expect(sent.headers['x-durable-inbox-action']).toBe(action!.id);
      expect(sent.to.map((a) => a.address)).toEqual(['alice@partner.example']);
      expect(sent.body).toContain('The floor plan is attached. Grüße');
      expect(sent.attachments).toEqual([expect.objectContaining({ filename: 'plan.pdf', mimeType: 'application/pdf', size: pdf.length })]);
      // Byte for byte: what went out after its headers is the draft's body, both alternatives and the attachment.
      const raw = h.gmail.world.getAccount(h.email).mailbox.getMessage(sent.id).raw.toString('latin1');
      expect(raw.slice(raw.indexOf('\r\n\r\n') + 4)).toBe(Buffer.from(body, 'utf8').toString('latin1'));
      expect(await draftsOf(threadId)).toHaveLength(0);
      expect(await sentIn(h, threadId)).toHaveLength(1);
    });

    it('a recipient added to the draft after it was scheduled (a Bcc) stops the send: it goes to the judged addresses or not at all', async () => {
      const { threadId, messageId } = await deliverAndIngest(h, question('Contract copy'));
      const drafted = await h.waitFor(threadId, (s) => s.state === 'drafted' && settled(s));
      await timer(threadId, { kind: 'send_later', at: Date.now() + 3000 });
      await h.waitFor(threadId, (s) => (s.wakes ?? []).some((w) => w.kind === 'send_later') && settled(s));
      const { gmail } = await h.accountGmail();
      const parent = (await gmail.getMessage(messageId)).messageId;
      const edited = [
        `From: ${h.email}`,
        'To: Alice Example <alice@partner.example>',
        'Bcc: Mallory <mallory@elsewhere.example>',
        'Subject: Re: Contract copy',
        `In-Reply-To: ${parent}`,
        'Content-Type: text/plain; charset=UTF-8',
        '',
        'Here is the contract.',
      ].join('\r\n');
      await gmail.updateDraft(drafted.draftId!, { threadId, raw: Buffer.from(edited, 'utf8').toString('base64url') });

      await waitUntil('the send to be settled', async () => (await journal(threadId, 'send_later'))[0]?.state === 'undone', { timeoutMs: 20_000 });
      const [action] = await journal(threadId, 'send_later');
      expect(action!.note).toContain('mallory@elsewhere.example');
      expect(await sentIn(h, threadId)).toHaveLength(0);
      expect(await draftsOf(threadId)).toHaveLength(1); // the user's draft stays, to be scheduled again
    });

    it('undo before the time cancels it: nothing is sent', async () => {
      const { threadId } = await deliverAndIngest(h, question('Budget'));
      await h.waitFor(threadId, (s) => s.state === 'drafted' && settled(s));
      await timer(threadId, { kind: 'send_later', at: Date.now() + 3_600_000 });
      const waiting = await h.waitFor(threadId, (s) => (s.wakes ?? []).length === 1 && settled(s));
      await h.handle(threadId).signal('actionDecision', { type: 'action_decision', actionId: waiting.wakes![0]!.actionId, decision: 'undo', by: 'test' });
      await h.waitFor(threadId, (s) => !s.wakes && settled(s));
      expect((await journal(threadId, 'send_later')).map((a) => a.state)).toEqual(['undone']);
      expect((await messagesOf(threadId)).filter((m) => m.labelIds.includes('SENT'))).toHaveLength(0);
      expect(await draftsOf(threadId)).toHaveLength(1);
    });

    it('a draft deleted before the time cancels it', async () => {
      const { threadId } = await deliverAndIngest(h, question("Report copy"));
      const drafted = await h.waitFor(threadId, (s) => s.state === 'drafted' && settled(s));
      await timer(threadId, { kind: 'send_later', at: Date.now() + 3000 });
      await h.waitFor(threadId, (s) => (s.wakes ?? []).length === 1 && settled(s));
      await h.gmail.control.deleteDraft(h.email, drafted.draftId!);
      await waitUntil('the cancelled send', async () => (await journal(threadId, 'send_later'))[0]?.state === 'undone', { timeoutMs: 20_000 });
      expect((await journal(threadId, 'send_later'))[0]!.note).toContain('draft was deleted');
      expect((await messagesOf(threadId)).filter((m) => m.labelIds.includes('SENT'))).toHaveLength(0);
    });
  });
});

describe('awaiting reply and the follow-up', () => {
  it('a sent message that expects an answer waits for it; the answer cancels the follow-up', async () => {
    const { threadId } = await deliverAndIngest(h, question('Contract'));
    const drafted = await h.waitFor(threadId, (s) => s.state === 'drafted' && settled(s));
    await userSends(h, threadId, drafted.draftId!, 'Thanks. Could you sign and return it by Friday?');
    const waiting = await h.waitFor(threadId, (s) => s.state === 'awaiting_reply' && settled(s));
    expect(waiting.wakes?.map((w) => w.kind)).toEqual(['follow_up']);
    const followUpAt = waiting.wakes![0]!.at;
    expect((await h.handle(threadId).describe()).typedSearchAttributes.get(InboxState)).toBe('awaiting_reply');
    await deliverAndIngest(h, { from: 'Alice Example <alice@partner.example>', subject: 'Re: Contract', text: 'Signed, attached.', threadId });
    const answered = await h.waitFor(threadId, (s) => s.state !== 'awaiting_reply' && !s.wakes && settled(s));
    expect(answered.state).toBe('skipped');
    expect((await journal(threadId, 'follow_up')).map((a) => a.state)).toEqual(['undone']);
    // Past the time the follow-up was due, with nothing under way: it did not fire.
    await untilTime(followUpAt);
    await untilQuiet([h.handle(threadId)]);
    const later = await h.waitFor(threadId, settled);
    expect(later.decisions.filter((d) => d.detail.startsWith('follow up fired'))).toEqual([]);
    expect(await labelsOf(threadId)).not.toContain('Follow Up');
    await recordHistory(h, threadId, 'thread-follow-up-answered');
  });

  it('a sent message that expects no answer closes the thread as sent', async () => {
    const { threadId } = await deliverAndIngest(h, question('Holiday dates'));
    const drafted = await h.waitFor(threadId, (s) => s.state === 'drafted' && settled(s));
    await userSends(h, threadId, drafted.draftId!, 'Noted, thanks.');
    const done = await h.waitFor(threadId, (s) => s.state === 'sent');
    expect(done.decisions.some((d) => d.detail.includes('expects no answer'))).toBe(true);
    expect(await journal(threadId, 'follow_up')).toHaveLength(0);
  });

  it('no answer in time: Follow Up label, the user told, a nudge drafted (the account allows it); the answer then deletes the nudge', async () => {
    await updateSafetySettings(prismaExecutor(h.prisma), h.accountId, { followUpNudge: true });
    try {
      const { threadId } = await deliverAndIngest(h, question('Quote'));
      const drafted = await h.waitFor(threadId, (s) => s.state === 'drafted' && settled(s));
      await userSends(h, threadId, drafted.draftId!, 'Here is the quote. Can you confirm the order?');
      await h.waitFor(threadId, (s) => s.state === 'awaiting_reply' && settled(s));
      const due = await h.waitFor(threadId, (s) => s.decisions.some((d) => d.detail.startsWith('nudge ')) && settled(s), 20_000);
      expect(due.state).toBe('awaiting_reply');
      expect(await labelsOf(threadId)).toContain('Follow Up');
      expect(await draftsOf(threadId)).toHaveLength(1);
      expect((await journal(threadId, 'follow_up')).map((a) => a.state)).toEqual(['done']);
      expect((await discord.control.messages(webhookId)).filter((m) => m.message.content.includes(threadId) && m.message.content.includes('Follow up'))).toHaveLength(1);

      await deliverAndIngest(h, { from: 'Alice Example <alice@partner.example>', subject: 'Re: Quote', text: 'Confirmed.', threadId });
      await h.waitFor(threadId, (s) => s.state !== 'awaiting_reply' && settled(s));
      expect(await draftsOf(threadId)).toHaveLength(0);
      expect(await labelsOf(threadId)).not.toContain('Follow Up');
      await recordHistory(h, threadId, 'thread-follow-up-nudged');
    } finally {
      await updateSafetySettings(prismaExecutor(h.prisma), h.accountId, { followUpNudge: false });
    }
  });
});

describe('the nudge race', () => {
  it('an answer that arrives while the nudge is being written wins: no nudge is left behind', async () => {
    const slow = await startInboxHarness({ anthropicLatencyMs: 1500, env: { FOLLOW_UP_AFTER: '3s' } });
    try {
      await slow.startWorkers();
      await updateSafetySettings(prismaExecutor(slow.prisma), slow.accountId, { followUpNudge: true });
      const { threadId } = await deliverAndIngest(slow, question('Samples'));
      const drafted = await slow.waitFor(threadId, (s) => s.state === 'drafted' && settled(s), 60_000);
      await slow.gmail.control.editDraft(slow.email, drafted.draftId!, { text: 'Could you send the samples?' });
      const sent = await slow.gmail.control.sendDraft(slow.email, drafted.draftId!);
      await slow.ingest(threadId, { type: 'message_added', messageId: sent.id, labelIds: sent.labelIds });
      await slow.waitFor(threadId, (s) => s.state === 'awaiting_reply', 60_000);
      // The follow-up fires and the model is writing the nudge (1.5 s a call): the answer comes now.
      await slow.waitFor(threadId, (s) => s.decisions.some((d) => d.detail.startsWith('follow up fired')), 30_000);
      const answer = await deliver(slow, { from: 'Alice Example <alice@partner.example>', subject: 'Re: Samples', text: 'Sent them today.', threadId });
      await slow.ingest(threadId, { type: 'message_added', messageId: answer.messageId, labelIds: ['INBOX'] });
      await slow.waitFor(threadId, (s) => s.state !== 'awaiting_reply' && settled(s), 60_000);
      const drafts = (await slow.gmail.control.getState(slow.email)).drafts.filter((d) => d.threadId === threadId);
      expect(drafts).toHaveLength(0);
    } finally {
      await slow.close();
    }
  });
});

describe('durable', () => {
  it('workers down while timers fall due: after the restart each fires once, none is lost', async () => {
    const { threadId } = await deliverAndIngest(h, fyi('Quarterly review'));
    await h.waitFor(threadId, (s) => s.state === 'skipped' && settled(s));
    const snoozeAt = Date.now() + 2000;
    const remindAt = Date.now() + 2500;
    await timer(threadId, { kind: 'snooze', at: snoozeAt });
    await timer(threadId, { kind: 'remind', at: remindAt, note: 'prepare slides' });
    await h.waitFor(threadId, (s) => (s.wakes ?? []).length === 2 && settled(s));
    await h.stopWorkers();
    await untilTime(Math.max(snoozeAt, remindAt) + 500); // both fall due while nothing runs
    await h.startWorkers();
    const done = await h.waitFor(threadId, (s) => !s.wakes && settled(s), 30_000);
    expect(done.decisions.filter((d) => d.detail.startsWith('snooze fired'))).toHaveLength(1);
    expect(done.decisions.filter((d) => d.detail.startsWith('remind fired'))).toHaveLength(1);
    expect((await journal(threadId, 'snooze')).map((a) => a.state)).toEqual(['done']);
    expect((await journal(threadId, 'remind')).map((a) => a.state)).toEqual(['done']);
    expect(await labelsOf(threadId)).toEqual(expect.arrayContaining(['INBOX', 'Snoozed']));
    expect((await discord.control.messages(webhookId)).filter((m) => m.message.content.includes('prepare slides'))).toHaveLength(1);
  });
});
