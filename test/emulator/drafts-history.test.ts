// Contract tests for drafts (API and Gmail-UI actions) and history.list — through googleapis.
import type { gmail_v1 } from 'googleapis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { connect, failure, raw, startEmulator, type ConnectedAccount } from '../helpers/googleapis-clients.js';

const OWNER = 'owner@example.com';
let emu: RunningGmailEmulator;
let gmail: gmail_v1.Gmail;
let owner: ConnectedAccount;

beforeAll(async () => {
  emu = await startEmulator({ historyRetentionMs: 60 * 60_000 });
});

beforeEach(async () => {
  await emu.control.reset();
  owner = await connect(emu, OWNER, 'Olivia Owner');
  gmail = owner.gmail;
});

afterAll(async () => {
  await emu.close();
});

async function historySince(startHistoryId: string, extra: Partial<gmail_v1.Params$Resource$Users$History$List> = {}) {
  const { data } = await gmail.users.history.list({ userId: 'me', startHistoryId, ...extra });
  return data;
}

/** An incoming thread and a reply draft to it, built with the headers Gmail requires. */
async function replyDraft(text = 'Thanks, see you then.') {
  const incoming = await emu.control.deliver(OWNER, { from: 'alice@example.com', subject: 'Lunch on Thursday?', text: 'Does 12:30 work?' });
  const head = await gmail.users.messages.get({ userId: 'me', id: incoming.id, format: 'metadata', metadataHeaders: ['Message-ID'] });
  const messageId = head.data.payload?.headers?.[0]?.value ?? '';
  const draft = await gmail.users.drafts.create({
    userId: 'me',
    requestBody: {
      message: { threadId: incoming.threadId, raw: raw(`To: alice@example.com\nSubject: Re: Lunch on Thursday?\nIn-Reply-To: ${messageId}\nReferences: ${messageId}\n\n${text}`) },
    },
  });
  return { incoming, draft: draft.data };
}

describe('users.drafts', () => {
  it('create puts a DRAFT-only message in the thread; get, list and update work with Gmail semantics', async () => {
    const { incoming, draft } = await replyDraft();
    expect(draft.id).toMatch(/^r\d+$/);
    expect(draft.message).toMatchObject({ threadId: incoming.threadId, labelIds: ['DRAFT'] });

    const got = await gmail.users.drafts.get({ userId: 'me', id: draft.id ?? '' });
    expect(got.data.message?.payload?.headers?.find((h) => h.name === 'Subject')?.value).toBe('Re: Lunch on Thursday?');
    const rawDraft = await gmail.users.drafts.get({ userId: 'me', id: draft.id ?? '', format: 'raw' });
    expect(Buffer.from(rawDraft.data.message?.raw ?? '', 'base64url').toString()).toContain('Thanks, see you then.');

    const list = await gmail.users.drafts.list({ userId: 'me' });
    expect(list.data.drafts).toEqual([{ id: draft.id, message: { id: draft.message?.id, threadId: incoming.threadId } }]);

    const updated = await gmail.users.drafts.update({
      userId: 'me',
      id: draft.id ?? '',
      requestBody: { message: { threadId: incoming.threadId, raw: raw(`To: alice@example.com\nSubject: Re: Lunch on Thursday?\nIn-Reply-To: <x@y>\nReferences: <x@y>\n\nActually, 13:00?`) } },
    });
    expect(updated.data.id).toBe(draft.id);
    expect(updated.data.message?.id).not.toBe(draft.message?.id);
    expect((await failure(gmail.users.messages.get({ userId: 'me', id: draft.message?.id ?? '' }))).status).toBe(404);

    await gmail.users.drafts.delete({ userId: 'me', id: draft.id ?? '' });
    expect((await failure(gmail.users.drafts.get({ userId: 'me', id: draft.id ?? '' }))).status).toBe(404);
    expect((await gmail.users.drafts.list({ userId: 'me' })).data.drafts).toBeUndefined();
  });

  it('send removes the draft and adds a new SENT message with a new id to the thread, with history records', async () => {
    const { incoming, draft } = await replyDraft();
    const before = (await gmail.users.getProfile({ userId: 'me' })).data.historyId ?? '';
    const sent = await gmail.users.drafts.send({ userId: 'me', requestBody: { id: draft.id ?? '' } });
    expect(sent.data.id).not.toBe(draft.message?.id);
    expect(sent.data.threadId).toBe(incoming.threadId);
    expect(sent.data.labelIds).toEqual(['SENT']);

    expect((await failure(gmail.users.drafts.get({ userId: 'me', id: draft.id ?? '' }))).status).toBe(404);
    const thread = await gmail.users.threads.get({ userId: 'me', id: incoming.threadId, format: 'minimal' });
    expect(thread.data.messages?.map((m) => m.id)).toEqual([incoming.id, sent.data.id]);

    const history = await historySince(before);
    expect(history.history?.flatMap((h) => h.messagesAdded ?? []).map((a) => a.message?.id)).toEqual([sent.data.id]);
    expect(history.history?.flatMap((h) => h.messagesDeleted ?? []).map((d) => d.message?.id)).toEqual([draft.message?.id]);
    expect(history.history?.flatMap((h) => h.messagesAdded ?? [])[0]?.message?.labelIds).toEqual(['SENT']);
  });

  it('Gmail-UI actions from the control API: edit body (new message id), send, and discard', async () => {
    const { incoming, draft } = await replyDraft();
    const edited = await emu.control.editDraft(OWNER, draft.id ?? '', { text: 'Edited by the user' });
    expect(edited.id).toBe(draft.id);
    expect(edited.messageId).not.toBe(draft.message?.id);
    expect(edited.threadId).toBe(incoming.threadId);
    const rawAfterEdit = await gmail.users.drafts.get({ userId: 'me', id: draft.id ?? '', format: 'raw' });
    const text = Buffer.from(rawAfterEdit.data.message?.raw ?? '', 'base64url').toString();
    expect(text).toContain('Edited by the user');
    expect(text).toContain('Subject: Re: Lunch on Thursday?');

    const sent = await emu.control.sendDraft(OWNER, draft.id ?? '');
    expect(sent.threadId).toBe(incoming.threadId);
    const state = await emu.control.getState(OWNER);
    expect(state.drafts).toEqual([]);
    expect(state.messages.find((m) => m.id === sent.id)?.labelIds).toEqual(['SENT']);

    const second = await replyDraft('another');
    await emu.control.deleteDraft(OWNER, second.draft.id ?? '');
    expect((await failure(gmail.users.drafts.get({ userId: 'me', id: second.draft.id ?? '' }))).status).toBe(404);
  });
});

describe('users.history.list', () => {
  it('returns the four record types in increasing, non-contiguous id order', async () => {
    const start = (await gmail.users.getProfile({ userId: 'me' })).data.historyId ?? '';
    const m = await emu.control.deliver(OWNER, { from: 'bob@example.com', subject: 'Hi', text: 'hello' });
    await gmail.users.messages.modify({ userId: 'me', id: m.id, requestBody: { addLabelIds: ['STARRED'], removeLabelIds: ['UNREAD'] } });
    await gmail.users.messages.delete({ userId: 'me', id: m.id });

    const data = await historySince(start);
    const records = data.history ?? [];
    expect(records.map((r) => Object.keys(r).filter((k) => k !== 'id' && k !== 'messages'))).toEqual([['messagesAdded'], ['labelsAdded'], ['labelsRemoved'], ['messagesDeleted']]);
    expect(records[1]?.labelsAdded?.[0]).toMatchObject({ labelIds: ['STARRED'], message: { id: m.id, threadId: m.threadId } });
    expect(records[2]?.labelsRemoved?.[0]?.labelIds).toEqual(['UNREAD']);
    expect(records.every((r) => r.messages?.[0]?.id === m.id)).toBe(true);
    const ids = records.map((r) => Number(r.id));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(ids.some((id, i) => i > 0 && id - (ids[i - 1] as number) > 1)).toBe(true);
    expect(data.historyId).toBe((await gmail.users.getProfile({ userId: 'me' })).data.historyId);
    expect(Number(data.historyId)).toBeGreaterThanOrEqual(ids[ids.length - 1] as number);
  });

  it('filters by historyTypes and labelId, and pages with maxResults', async () => {
    const start = (await gmail.users.getProfile({ userId: 'me' })).data.historyId ?? '';
    for (let i = 0; i < 5; i++) await emu.control.deliver(OWNER, { from: `p${i}@example.com`, subject: `n${i}`, text: 'x' });
    const spam = await emu.control.deliver(OWNER, { from: 'spam@example.com', subject: 'win', text: 'x', exactLabelIds: ['SPAM'] });
    await emu.control.modifyLabels(OWNER, { messageIds: [spam.id], add: ['STARRED'] });

    const added = await historySince(start, { historyTypes: ['messageAdded'] });
    expect(added.history).toHaveLength(6);
    expect(added.history?.every((h) => h.messagesAdded && !h.labelsAdded)).toBe(true);
    const spamOnly = await historySince(start, { labelId: 'SPAM' });
    expect(spamOnly.history?.map((h) => h.messages?.[0]?.id)).toEqual([spam.id, spam.id]);

    const pages: number[] = [];
    let pageToken: string | undefined;
    do {
      const page = await historySince(start, { maxResults: 2, ...(pageToken ? { pageToken } : {}) });
      pages.push(page.history?.length ?? 0);
      pageToken = page.nextPageToken ?? undefined;
    } while (pageToken);
    expect(pages).toEqual([2, 2, 2, 1]);
  });

  it('an empty result has no history key but the current historyId', async () => {
    const current = (await gmail.users.getProfile({ userId: 'me' })).data.historyId ?? '';
    expect(await historySince(current)).toEqual({ historyId: current });
  });

  it('answers 404 for a start id older than retention, after expiry, and under the forced-404 fault', async () => {
    const start = (await gmail.users.getProfile({ userId: 'me' })).data.historyId ?? '';
    await emu.control.deliver(OWNER, { from: 'a@example.com', subject: 'old', text: 'x' });
    expect((await historySince(start)).history).toHaveLength(1);

    await emu.control.advanceClock(2 * 60 * 60_000); // past the 1 h retention
    // The emulator clock also expired the access token: drop it so the client refreshes.
    owner.auth.setCredentials({ refresh_token: owner.account.refreshToken });
    await emu.control.deliver(OWNER, { from: 'a@example.com', subject: 'new', text: 'x' });
    const stale = await failure(gmail.users.history.list({ userId: 'me', startHistoryId: start }));
    expect(stale.status).toBe(404);
    expect(stale.data.error).toMatchObject({ code: 404, status: 'NOT_FOUND', errors: [{ reason: 'notFound' }] });

    const fresh = (await gmail.users.getProfile({ userId: 'me' })).data.historyId ?? '';
    expect((await historySince(fresh)).history).toBeUndefined();
    await emu.control.expireHistory(OWNER);
    expect((await historySince(fresh)).historyId).toBe(fresh);
    await emu.control.deliver(OWNER, { from: 'a@example.com', subject: 'after expiry', text: 'x' });
    expect((await historySince(fresh)).history).toHaveLength(1);

    await emu.control.setFaults({ historyNotFound: [OWNER] });
    expect((await failure(gmail.users.history.list({ userId: 'me', startHistoryId: fresh }))).status).toBe(404);
    await emu.control.setFaults({ historyNotFound: [] });
    expect((await historySince(fresh)).history).toHaveLength(1);
  });

  it('rejects a missing or malformed startHistoryId', async () => {
    expect((await failure(gmail.users.history.list({ userId: 'me', startHistoryId: 'abc' }))).status).toBe(400);
  });
});

describe('control API mailbox state', () => {
  it('carries the headers asked for, per message, as sent', async () => {
    const marker = 'X-Durable-Inbox-Action';
    const sent = await gmail.users.messages.send({
      userId: 'me',
      requestBody: { raw: raw(`From: ${OWNER}\r\nTo: pat@example.com\r\nSubject: Copy\r\n${marker}: act-123\r\n\r\nHere.`) },
    });
    const plain = await emu.control.getState(OWNER);
    expect(plain.messages.find((m) => m.id === sent.data.id)?.headers).toBeUndefined();
    const state = await emu.control.getState(OWNER, { headers: [marker, 'X-Absent'] });
    expect(state.messages.find((m) => m.id === sent.data.id)?.headers).toEqual({ [marker]: 'act-123' });
  });
});
