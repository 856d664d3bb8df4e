// GmailService against the Gmail emulator through googleapis, the way the activities use it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  buildReply,
  findSentReplyAfter,
  latestInboundMessage,
  replyRecipients,
  type GmailService,
  type ThreadMessage,
} from '../../src/gmail/index.js';
import { startHarness, type EmulatorHarness, type TestAccount } from '../helpers/gmail-emulator-harness.js';

let harness: EmulatorHarness;

beforeAll(async () => {
  harness = await startHarness();
});

afterAll(async () => {
  await harness?.close();
});

afterEach(async () => {
  await harness.emulator.control.setFaults({ latency: [], poison: [] });
});

async function callsOf(method: string): Promise<{ calls: number; errors: Record<string, number> }> {
  const metrics = await harness.emulator.control.metrics();
  return { calls: metrics.methods[method]?.calls ?? 0, errors: { ...(metrics.methods[method]?.errors ?? {}) } };
}

/** A thread with one inbound message from Bob; returns the parsed parent message. */
async function inboundThread(account: TestAccount, subject = 'Réunion de lundi'): Promise<ThreadMessage> {
  const delivered = await harness.emulator.control.deliver(account.email, {
    from: { name: 'Bob Müller', email: 'bob@example.com' },
    to: [account.email],
    subject,
    text: 'Can we move the meeting to 10:00?',
  });
  const thread = await account.service.getThread(delivered.threadId);
  return latestInboundMessage(thread, account.email)!;
}

function replyTo(account: TestAccount, parent: ThreadMessage, body: string): string {
  return buildReply({ parent, from: { name: 'Ana Lima', address: account.email }, to: replyRecipients(parent, account.email), body }).raw;
}

describe('profile and labels', () => {
  it('getProfile returns the mailbox address and history id', async () => {
    const account = await harness.account('profile');
    const profile = await account.service.getProfile();
    expect(profile.emailAddress).toBe(account.email);
    expect(profile.historyId).toMatch(/^\d+$/);
  });

  it('ensureLabels creates missing labels once and then only looks them up', async () => {
    const { service } = await harness.account('labels');
    const before = await callsOf('labels.create');

    const first = await service.ensureLabels(['Outbox', 'Rework', 'Done', 'Needs Response', 'Outbox']);
    expect([...first.keys()]).toEqual(['Outbox', 'Rework', 'Done', 'Needs Response']);
    const second = await service.ensureLabels(['Done', 'Outbox', 'Rework', 'Needs Response']);
    expect(Object.fromEntries(second)).toEqual(Object.fromEntries(first));

    expect((await callsOf('labels.create')).calls - before.calls).toBe(4);
    const userLabels = (await service.listLabels()).filter((l) => l.type === 'user');
    expect(userLabels.map((l) => l.name).sort()).toEqual(['Done', 'Needs Response', 'Outbox', 'Rework']);
    expect((await service.listLabels()).find((l) => l.id === 'INBOX')).toEqual({ id: 'INBOX', name: 'INBOX', type: 'system' });
  });

  it('ensureLabels reuses a label the user created with different case', async () => {
    const account = await harness.account('labelcase');
    const existing = await account.gmail.users.labels.create({ userId: 'me', requestBody: { name: 'outbox' } });
    const ids = await account.service.ensureLabels(['Outbox']);
    expect(ids.get('Outbox')).toBe(existing.data.id);
  });

  it('two workers racing on ensureLabels end with one label and the same id (409 handled by re-listing)', async () => {
    const account = await harness.account('labelrace');
    const other = harness.client(account);
    await Promise.all([account.service.getProfile(), other.service.getProfile()]); // token refreshes out of the way
    // Slow labels.list so both workers see "no such label" before either creates it.
    await harness.emulator.control.setFaults({ latency: [{ method: 'labels.list', distribution: { type: 'fixed', ms: 200 } }] });
    const before = await callsOf('labels.create');

    const [a, b] = await Promise.all([account.service.ensureLabels(['Outbox']), other.service.ensureLabels(['Outbox'])]);

    expect(a.get('Outbox')).toBeDefined();
    expect(b.get('Outbox')).toBe(a.get('Outbox'));
    const after = await callsOf('labels.create');
    expect(after.calls - before.calls).toBe(2);
    expect((after.errors['409'] ?? 0) - (before.errors['409'] ?? 0)).toBe(1);
    expect((await account.service.listLabels()).filter((l) => l.name === 'Outbox')).toHaveLength(1);
  });
});

describe('getThread', () => {
  it('parses a multipart message with an attachment and a reply in the same thread', async () => {
    const account = await harness.account('thread');
    const first = await harness.emulator.control.deliver(account.email, {
      from: { name: 'José Müller', email: 'jose@example.com' },
      to: [account.email],
      cc: ['carol@example.com'],
      subject: 'Devis für das Projekt 🚀',
      text: 'Bonjour,\nvoici le devis — 1 200 €.\n',
      html: '<p>Bonjour,<br>voici le devis — 1 200 €.</p>',
      attachments: [{ filename: 'devis.pdf', contentType: 'application/pdf', contentBase64: Buffer.from('%PDF-1.4 fake').toString('base64') }],
    });
    await harness.emulator.control.deliver(account.email, {
      from: 'jose@example.com',
      to: [account.email],
      subject: 'Re: Devis für das Projekt 🚀',
      text: 'Oublié : la TVA est incluse.',
      threadId: first.threadId,
    });

    const thread = await account.service.getThread(first.threadId);
    expect(thread.threadId).toBe(first.threadId);
    expect(thread.historyId).toMatch(/^\d+$/);
    expect(thread.messages).toHaveLength(2);
    const [quote, followUp] = thread.messages as [ThreadMessage, ThreadMessage];

    expect(quote).toMatchObject({
      id: first.id,
      from: { name: 'José Müller', address: 'jose@example.com' },
      to: [{ address: account.email }],
      cc: [{ address: 'carol@example.com' }],
      subject: 'Devis für das Projekt 🚀',
      body: 'Bonjour,\nvoici le devis — 1 200 €.\n',
      bodySource: 'text/plain',
      attachments: [{ filename: 'devis.pdf', mimeType: 'application/pdf', size: 13 }],
      isFromUser: false,
      parseWarnings: [],
    });
    expect(quote.labelIds).toContain('INBOX');
    expect(quote.messageId).toMatch(/^<.+@.+>$/);
    expect(quote.attachments[0]!.attachmentId).toBeTruthy();
    expect(quote.internalDate).toBeGreaterThan(0);

    expect(followUp.inReplyTo).toBe(quote.messageId);
    expect(followUp.references).toEqual([quote.messageId]);
    expect(followUp.body).toBe('Oublié : la TVA est incluse.');
    expect(latestInboundMessage(thread, account.email)?.id).toBe(followUp.id);
  });

  it('a message with broken MIME still parses, with warnings', async () => {
    const account = await harness.account('poison');
    const delivered = await harness.emulator.control.deliver(account.email, { from: 'x@example.com', subject: 'Broken', text: 'lost' });
    await harness.emulator.control.setFaults({ poison: [{ messageId: delivered.id, mode: 'brokenMime' }] });

    const message = await account.service.getMessage(delivered.id);
    expect(message).toMatchObject({ id: delivered.id, subject: 'Broken', from: { address: 'x@example.com' } });
    expect(message).toMatchObject({ body: '', bodySource: 'none' });
    expect(message.parseWarnings.length).toBeGreaterThan(0);
    const thread = await account.service.getThread(delivered.threadId);
    expect(thread.messages[0]?.subject).toBe('Broken');
  });

  it('falls back to the HTML part when there is no text part', async () => {
    const account = await harness.account('html');
    const delivered = await harness.emulator.control.deliver(account.email, {
      from: 'news@example.com',
      subject: 'Newsletter',
      html: '<html><head><style>.x{}</style></head><body><h1>Title</h1><p>First &amp; second</p></body></html>',
    });
    const message = await account.service.getMessage(delivered.id);
    expect(message.bodySource).toBe('text/html');
    expect(message.body).toBe('Title\n\nFirst & second');
  });
});

describe('drafts', () => {
  it('create → get → update → delete, with threading headers, and never two drafts per thread', async () => {
    const account = await harness.account('drafts');
    const { service } = account;
    const parent = await inboundThread(account);
    const threadId = parent.threadId;
    expect(await service.listDraftsForThread(threadId)).toEqual([]);

    const created = await service.createDraft({ threadId, raw: replyTo(account, parent, 'Oui, 10:00 me va.\nAna') });
    expect(created).toMatchObject({ threadId, draftId: expect.any(String), messageId: expect.any(String) });
    expect(await service.listDraftsForThread(threadId)).toEqual([created]);

    const draft = (await service.getDraft(created.draftId))!;
    expect(draft).toMatchObject({ draftId: created.draftId, messageId: created.messageId, threadId, body: 'Oui, 10:00 me va.\nAna' });
    expect(draft.message).toMatchObject({
      subject: 'Re: Réunion de lundi',
      inReplyTo: parent.messageId,
      references: [parent.messageId],
      from: { name: 'Ana Lima', address: account.email },
      to: [{ name: 'Bob Müller', address: 'bob@example.com' }],
      isDraft: true,
      labelIds: ['DRAFT'],
    });

    // The draft sits in the thread, which is how Gmail shows it under the conversation.
    const thread = await service.getThread(threadId);
    expect(thread.messages.map((m) => m.id)).toEqual([parent.id, created.messageId]);

    const updated = await service.updateDraft(created.draftId, { threadId, raw: replyTo(account, parent, 'Finalement 11:00 ?') });
    expect(updated.draftId).toBe(created.draftId);
    expect(updated.messageId).not.toBe(created.messageId);
    expect(updated.threadId).toBe(threadId);
    expect((await service.getDraft(created.draftId))?.body).toBe('Finalement 11:00 ?');
    expect(await service.listDraftsForThread(threadId)).toEqual([updated]);

    expect(await service.deleteDraft(created.draftId)).toBe(true);
    expect(await service.getDraft(created.draftId)).toBeNull();
    expect(await service.listDraftsForThread(threadId)).toEqual([]);
    expect(await service.deleteDraft(created.draftId)).toBe(false);
  });

  it('listDraftsForThread only returns the drafts of that thread', async () => {
    const account = await harness.account('draftlist');
    const one = await inboundThread(account, 'one');
    const two = await inboundThread(account, 'two');
    const draftOne = await account.service.createDraft({ threadId: one.threadId, raw: replyTo(account, one, 'a') });
    const draftTwo = await account.service.createDraft({ threadId: two.threadId, raw: replyTo(account, two, 'b') });

    expect(await account.service.listDraftsForThread(one.threadId)).toEqual([draftOne]);
    expect(await account.service.listDraftsForThread(two.threadId)).toEqual([draftTwo]);
  });

  it('the user sending the draft: the draft disappears and a SENT reply with a new id appears', async () => {
    const account = await harness.account('sent');
    const parent = await inboundThread(account);
    const created = await account.service.createDraft({ threadId: parent.threadId, raw: replyTo(account, parent, 'Parfait.') });
    const draftTime = (await account.service.getDraft(created.draftId))!.message.internalDate;

    await harness.emulator.control.sendDraft(account.email, created.draftId);

    expect(await account.service.getDraft(created.draftId)).toBeNull();
    const thread = await account.service.getThread(parent.threadId);
    const sent = findSentReplyAfter(thread, draftTime, account.email);
    expect(sent).not.toBeNull();
    expect(sent!.id).not.toBe(created.messageId);
    expect(sent).toMatchObject({ threadId: parent.threadId, body: 'Parfait.', inReplyTo: parent.messageId, isDraft: false, isFromUser: true });
    expect(sent!.labelIds).toContain('SENT');
  });

  it('the user discarding the draft: gone, and no SENT reply', async () => {
    const account = await harness.account('discarded');
    const parent = await inboundThread(account);
    const created = await account.service.createDraft({ threadId: parent.threadId, raw: replyTo(account, parent, 'Non.') });
    const draftTime = (await account.service.getDraft(created.draftId))!.message.internalDate;

    await harness.emulator.control.deleteDraft(account.email, created.draftId);

    expect(await account.service.getDraft(created.draftId)).toBeNull();
    expect(findSentReplyAfter(await account.service.getThread(parent.threadId), draftTime, account.email)).toBeNull();
  });
});

describe('labels on threads and messages', () => {
  async function labelsOf(service: GmailService, threadId: string): Promise<string[][]> {
    return (await service.getThread(threadId)).messages.map((m) => m.labelIds);
  }

  it('modifyThread, modifyMessage and archiveThread', async () => {
    const account = await harness.account('modify');
    const { service } = account;
    const parent = await inboundThread(account);
    await harness.emulator.control.deliver(account.email, { from: 'bob@example.com', subject: 'Re: Réunion de lundi', text: 'ping', threadId: parent.threadId });
    const outbox = (await service.ensureLabels(['Outbox'])).get('Outbox')!;

    await service.modifyThread(parent.threadId, { add: [outbox], remove: ['UNREAD'] });
    for (const labels of await labelsOf(service, parent.threadId)) {
      expect(labels).toContain(outbox);
      expect(labels).not.toContain('UNREAD');
    }

    expect(await service.modifyMessage(parent.id, { remove: [outbox] })).not.toContain(outbox);

    await service.archiveThread(parent.threadId);
    for (const labels of await labelsOf(service, parent.threadId)) expect(labels).not.toContain('INBOX');

    const before = await callsOf('threads.modify');
    await service.modifyThread(parent.threadId, {});
    expect((await callsOf('threads.modify')).calls).toBe(before.calls);

    // Gmail answers 400 to a modify with nothing to change: an empty change only reads the labels.
    const modifies = await callsOf('messages.modify');
    expect(await service.modifyMessage(parent.id, {})).toEqual((await service.getMessage(parent.id, 'minimal')).labelIds);
    expect((await callsOf('messages.modify')).calls).toBe(modifies.calls);
  });

  it('labels put on a thread that holds our draft land on its mail, never on the draft', async () => {
    const account = await harness.account('draftlabels');
    const { service } = account;
    const parent = await inboundThread(account);
    const draft = await service.createDraft({ threadId: parent.threadId, raw: replyTo(account, parent, 'Oui.') });
    const outbox = (await service.ensureLabels(['Outbox'])).get('Outbox')!;

    await service.modifyThread(parent.threadId, { add: [outbox] });

    const thread = await service.getThread(parent.threadId);
    expect(thread.messages.find((m) => m.id === draft.messageId)?.labelIds).toEqual(['DRAFT']);
    expect(thread.messages.find((m) => m.id === parent.id)?.labelIds).toContain(outbox);
    expect(await service.getThreadLabelIds(parent.threadId)).toContain(outbox);
  });

  it('batchModify splits more than 1000 ids into chunks', async () => {
    const account = await harness.account('batch');
    await harness.emulator.control.seed(account.email, { count: 1001, seed: 7 });
    const ids: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await account.service.listMessages({ maxResults: 500, ...(pageToken ? { pageToken } : {}) });
      ids.push(...page.messages.map((m) => m.id));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(ids.length).toBeGreaterThanOrEqual(1001);
    const label = (await account.service.ensureLabels(['Bulk'])).get('Bulk')!;
    const before = await callsOf('messages.batchModify');

    await account.service.batchModify(ids, { add: [label] });

    expect((await callsOf('messages.batchModify')).calls - before.calls).toBe(Math.ceil(ids.length / 1000));
    const labelled = await account.service.listMessages({ labelIds: [label], maxResults: 1 });
    expect(labelled.resultSizeEstimate).toBe(ids.length);
  });
});

describe('messages, history and watch', () => {
  it('listMessages with a query and getMessage in metadata format', async () => {
    const account = await harness.account('list');
    await harness.emulator.control.deliver(account.email, { from: 'alice@example.com', subject: 'Invoice 42', text: 'pay me' });
    await harness.emulator.control.deliver(account.email, { from: 'bob@example.com', subject: 'Lunch', text: 'noon?' });

    const page = await account.service.listMessages({ q: 'from:alice@example.com' });
    expect(page.messages).toHaveLength(1);
    const meta = await account.service.getMessage(page.messages[0]!.id, 'metadata', ['Subject', 'From']);
    expect(meta).toMatchObject({ subject: 'Invoice 42', from: { address: 'alice@example.com' }, body: '', bodySource: 'none' });
  });

  it('listHistory reports added messages and label changes after a start id', async () => {
    const account = await harness.account('history');
    const { historyId: start } = await account.service.getProfile();
    const delivered = await harness.emulator.control.deliver(account.email, { from: 'alice@example.com', subject: 'Hi', text: 'x' });
    await account.service.modifyMessage(delivered.id, { remove: ['UNREAD'] });

    const added = await account.service.listHistory({ startHistoryId: start, historyTypes: ['messageAdded'] });
    expect(added.records.flatMap((r) => r.messagesAdded.map((m) => m.id))).toEqual([delivered.id]);
    expect(BigInt(added.historyId)).toBeGreaterThan(BigInt(start));

    const removed = await account.service.listHistory({ startHistoryId: start, historyTypes: ['labelRemoved'] });
    expect(removed.records.flatMap((r) => r.labelsRemoved)).toEqual([
      { message: expect.objectContaining({ id: delivered.id, threadId: delivered.threadId }), labelIds: ['UNREAD'] },
    ]);

    const empty = await account.service.listHistory({ startHistoryId: added.historyId });
    expect(empty.records).toEqual([]);
  });

  it('watch returns a history id and a future expiration; stop succeeds', async () => {
    const account = await harness.account('watch');
    const { historyId } = await account.service.getProfile();
    const watch = await account.service.watch({ topicName: 'projects/durable-inbox/topics/gmail', labelIds: ['INBOX'], labelFilterBehavior: 'include' });
    expect(watch.historyId).toBe(historyId);
    expect(watch.expiration).toBeGreaterThan(Date.now());
    expect((await harness.emulator.control.getState(account.email)).watch).toMatchObject({ topicName: 'projects/durable-inbox/topics/gmail', labelIds: ['INBOX'] });

    await account.service.stop();
    expect((await harness.emulator.control.getState(account.email)).watch).toBeNull();
  });
});
