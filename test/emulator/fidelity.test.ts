// Contract tests for the places where Gmail's answers are easy to get wrong: labels on drafts,
// empty label changes, malformed ids, untrash, label names and colours, error texts, and the
// user's name in sendAs and userinfo — only through googleapis.
import { google, type gmail_v1, type oauth2_v2 } from 'googleapis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { connect, failure, raw, startEmulator, type ConnectedAccount } from '../helpers/googleapis-clients.js';

const OWNER = 'owner@example.com';
let emu: RunningGmailEmulator;
let owner: ConnectedAccount;
let gmail: gmail_v1.Gmail;

beforeAll(async () => {
  emu = await startEmulator();
});

beforeEach(async () => {
  await emu.control.reset();
  owner = await connect(emu, OWNER, 'Olivia Owner');
  gmail = owner.gmail;
});

afterAll(async () => {
  await emu.close();
});

const labelsOf = async (id: string) => (await gmail.users.messages.get({ userId: 'me', id, format: 'minimal' })).data.labelIds ?? [];

/** An incoming message and a reply draft in its thread. */
async function threadWithDraft() {
  const incoming = await emu.control.deliver(OWNER, { from: 'alice@example.com', subject: 'Lunch?', text: 'Does 12:30 work?' });
  const head = await gmail.users.messages.get({ userId: 'me', id: incoming.id, format: 'metadata', metadataHeaders: ['Message-ID'] });
  const messageId = head.data.payload?.headers?.[0]?.value ?? '';
  const draft = await gmail.users.drafts.create({
    userId: 'me',
    requestBody: { message: { threadId: incoming.threadId, raw: raw(`To: alice@example.com\nSubject: Re: Lunch?\nIn-Reply-To: ${messageId}\nReferences: ${messageId}\n\nYes.`) } },
  });
  return { incoming, draftId: draft.data.id ?? '', draftMessageId: draft.data.message?.id ?? '' };
}

describe('labels on draft messages', () => {
  it('threads.modify labels the thread but not the draft in it: no history record and no count for the draft', async () => {
    const { incoming, draftMessageId } = await threadWithDraft();
    const label = (await gmail.users.labels.create({ userId: 'me', requestBody: { name: 'Follow-up' } })).data.id ?? '';
    const before = (await gmail.users.getProfile({ userId: 'me' })).data.historyId ?? '';

    const modified = await gmail.users.threads.modify({ userId: 'me', id: incoming.threadId, requestBody: { addLabelIds: ['STARRED', label] } });

    expect(modified.data.messages?.find((m) => m.id === draftMessageId)?.labelIds).toEqual(['DRAFT']);
    expect(await labelsOf(draftMessageId)).toEqual(['DRAFT']);
    expect(await labelsOf(incoming.id)).toEqual(expect.arrayContaining(['STARRED', label]));
    const history = await gmail.users.history.list({ userId: 'me', startHistoryId: before });
    expect(history.data.history?.flatMap((h) => h.labelsAdded ?? []).map((a) => a.message?.id)).toEqual([incoming.id]);
    expect((await gmail.users.labels.get({ userId: 'me', id: label })).data).toMatchObject({ messagesTotal: 1, threadsTotal: 1 });
    expect((await gmail.users.labels.get({ userId: 'me', id: 'STARRED' })).data).toMatchObject({ messagesTotal: 1 });
  });

  it('messages.modify on a draft message is refused; batchModify leaves the draft as it is', async () => {
    const { incoming, draftMessageId } = await threadWithDraft();
    const refused = await failure(gmail.users.messages.modify({ userId: 'me', id: draftMessageId, requestBody: { addLabelIds: ['STARRED'] } }));
    expect(refused.status).toBe(400);
    expect(refused.data.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });

    await gmail.users.messages.batchModify({ userId: 'me', requestBody: { ids: [incoming.id, draftMessageId], addLabelIds: ['IMPORTANT'] } });
    expect(await labelsOf(draftMessageId)).toEqual(['DRAFT']);
    expect(await labelsOf(incoming.id)).toContain('IMPORTANT');
  });
});

describe('label changes with nothing to change', () => {
  it('messages.modify and threads.modify answer 400 "No label add or removes specified"', async () => {
    const m = await emu.control.deliver(OWNER, { from: 'a@example.com', subject: 's', text: 't' });
    for (const call of [
      () => gmail.users.messages.modify({ userId: 'me', id: m.id, requestBody: {} }),
      () => gmail.users.messages.modify({ userId: 'me', id: m.id, requestBody: { addLabelIds: [], removeLabelIds: [] } }),
      () => gmail.users.threads.modify({ userId: 'me', id: m.threadId, requestBody: {} }),
    ]) {
      const err = await failure(call());
      expect(err.status).toBe(400);
      expect(err.data.error).toMatchObject({ message: 'No label add or removes specified', errors: [{ reason: 'invalidArgument', domain: 'global' }] });
    }
  });
});

describe('ids that cannot be Gmail ids', () => {
  it('answers 400 "Invalid id value" for non-hex, too long or out-of-range ids, 404 for a well-formed unknown one', async () => {
    const m = await emu.control.deliver(OWNER, { from: 'a@example.com', subject: 's', text: 't' });
    for (const id of ['not-an-id', 'r-123', '8000000000000000', 'ffffffffffffffff', `${m.id}a`]) {
      const err = await failure(gmail.users.messages.get({ userId: 'me', id }));
      expect(err.status, id).toBe(400);
      expect(err.data.error, id).toMatchObject({ code: 400, message: 'Invalid id value', status: 'INVALID_ARGUMENT', errors: [{ reason: 'invalidArgument' }] });
    }
    for (const id of ['7fffffffffffffff', 'abc123', '1']) {
      expect((await failure(gmail.users.messages.get({ userId: 'me', id }))).status, id).toBe(404);
    }
  });

  it('applies to threads, modify, trash, delete and batch ids alike', async () => {
    const calls = [
      () => gmail.users.threads.get({ userId: 'me', id: 'thread-1' }),
      () => gmail.users.threads.modify({ userId: 'me', id: 'thread-1', requestBody: { addLabelIds: ['STARRED'] } }),
      () => gmail.users.messages.trash({ userId: 'me', id: 'msg-1' }),
      () => gmail.users.messages.delete({ userId: 'me', id: 'msg-1' }),
      () => gmail.users.messages.batchModify({ userId: 'me', requestBody: { ids: ['msg-1'], addLabelIds: ['STARRED'] } }),
      () => gmail.users.messages.batchDelete({ userId: 'me', requestBody: { ids: ['msg-1'] } }),
    ];
    for (const call of calls) expect((await failure(call())).data.error.message).toBe('Invalid id value');
  });

  it('resolves upper-case hex ids', async () => {
    const m = await emu.control.deliver(OWNER, { from: 'a@example.com', subject: 's', text: 't' });
    expect((await gmail.users.messages.get({ userId: 'me', id: m.id.toUpperCase(), format: 'minimal' })).data.id).toBe(m.id);
    expect((await gmail.users.threads.get({ userId: 'me', id: m.threadId.toUpperCase(), format: 'minimal' })).data.id).toBe(m.threadId);
  });
});

describe('trash and untrash', () => {
  it('untrash puts a message back where it was: INBOX and its labels', async () => {
    const m = await emu.control.deliver(OWNER, { from: 'a@example.com', subject: 's', text: 't', labelIds: ['Clients'] });
    const before = await labelsOf(m.id);
    expect(before).toContain('INBOX');

    const trashed = await gmail.users.messages.trash({ userId: 'me', id: m.id });
    expect(trashed.data.labelIds).toContain('TRASH');
    expect(trashed.data.labelIds).not.toContain('INBOX');

    const untrashed = await gmail.users.messages.untrash({ userId: 'me', id: m.id });
    expect([...(untrashed.data.labelIds ?? [])].sort()).toEqual([...before].sort());
    expect((await gmail.users.messages.list({ userId: 'me', q: 'in:inbox' })).data.messages?.map((x) => x.id)).toEqual([m.id]);
  });

  it('an archived message stays out of the inbox after untrash', async () => {
    const m = await emu.control.deliver(OWNER, { from: 'a@example.com', subject: 's', text: 't' });
    await gmail.users.messages.modify({ userId: 'me', id: m.id, requestBody: { removeLabelIds: ['INBOX'] } });
    await gmail.users.messages.trash({ userId: 'me', id: m.id });
    expect(await labelsOf((await gmail.users.messages.untrash({ userId: 'me', id: m.id })).data.id ?? '')).not.toContain('INBOX');
  });

  it('threads.trash/untrash restores each message (INBOX for the received one, SENT only for the reply)', async () => {
    const incoming = await emu.control.deliver(OWNER, { from: 'alice@example.com', subject: 'Plans', text: 'Friday?' });
    const head = await gmail.users.messages.get({ userId: 'me', id: incoming.id, format: 'metadata', metadataHeaders: ['Message-ID'] });
    const messageId = head.data.payload?.headers?.[0]?.value ?? '';
    const reply = await gmail.users.messages.send({
      userId: 'me',
      requestBody: { threadId: incoming.threadId, raw: raw(`To: alice@example.com\nSubject: Re: Plans\nIn-Reply-To: ${messageId}\nReferences: ${messageId}\n\nSure.`) },
    });
    const before = { incoming: await labelsOf(incoming.id), reply: await labelsOf(reply.data.id ?? '') };

    const trashed = await gmail.users.threads.trash({ userId: 'me', id: incoming.threadId });
    expect(trashed.data.messages?.every((m) => m.labelIds?.includes('TRASH') && !m.labelIds.includes('INBOX'))).toBe(true);
    await gmail.users.threads.untrash({ userId: 'me', id: incoming.threadId });

    expect((await labelsOf(incoming.id)).sort()).toEqual([...before.incoming].sort());
    expect(await labelsOf(reply.data.id ?? '')).toEqual(before.reply);
  });

  it('batchModify adding TRASH (and removing INBOX) is undone by batchModify removing TRASH', async () => {
    const ids = await Promise.all([1, 2].map(async (n) => (await emu.control.deliver(OWNER, { from: 'a@example.com', subject: `m${n}`, text: 't' })).id));
    await gmail.users.messages.batchModify({ userId: 'me', requestBody: { ids, addLabelIds: ['TRASH'], removeLabelIds: ['INBOX'] } });
    expect((await gmail.users.messages.list({ userId: 'me', q: 'in:inbox' })).data.resultSizeEstimate).toBe(0);
    await gmail.users.messages.batchModify({ userId: 'me', requestBody: { ids, removeLabelIds: ['TRASH'] } });
    for (const id of ids) expect(await labelsOf(id)).toContain('INBOX');
  });
});

describe('label names and colours', () => {
  it('refuses the names of system labels, in any case, with 400 "Invalid label name"', async () => {
    for (const name of ['INBOX', 'Inbox', 'Drafts', 'DRAFT', 'Sent Mail', 'spam', 'Trash', 'Starred', 'Important', 'Chats', 'Unread', 'CATEGORY_SOCIAL', 'All Mail']) {
      const err = await failure(gmail.users.labels.create({ userId: 'me', requestBody: { name } }));
      expect(err.status, name).toBe(400);
      expect(err.data.error, name).toMatchObject({ message: 'Invalid label name', errors: [{ reason: 'invalidArgument' }] });
    }
    const inboxes = await gmail.users.labels.create({ userId: 'me', requestBody: { name: 'Inbox Zero' } });
    expect(inboxes.data.name).toBe('Inbox Zero');
    expect((await failure(gmail.users.labels.patch({ userId: 'me', id: inboxes.data.id ?? '', requestBody: { name: 'Sent' } }))).status).toBe(400);
  });

  it('accepts colours from Gmail’s palette and refuses others', async () => {
    const color = { backgroundColor: '#fb4c2f', textColor: '#ffffff' };
    const created = await gmail.users.labels.create({ userId: 'me', requestBody: { name: 'Urgent', color } });
    expect(created.data.color).toEqual(color);
    const off = await failure(gmail.users.labels.create({ userId: 'me', requestBody: { name: 'Odd', color: { backgroundColor: '#123456', textColor: '#000000' } } }));
    expect(off.status).toBe(400);
    expect(off.data.error.message).toBe('Label color #123456 is not on the allowed color palette');
    const patched = await failure(gmail.users.labels.patch({ userId: 'me', id: created.data.id ?? '', requestBody: { color: { backgroundColor: '#fb4c2f', textColor: '#fefefe' } } }));
    expect(patched.status).toBe(400);
  });
});

describe('error texts', () => {
  it('a duplicate label name is 409 ABORTED, reason aborted', async () => {
    await gmail.users.labels.create({ userId: 'me', requestBody: { name: 'Receipts' } });
    const err = await failure(gmail.users.labels.create({ userId: 'me', requestBody: { name: 'receipts' } }));
    expect(err.status).toBe(409);
    expect(err.data.error).toMatchObject({ code: 409, message: 'Label name exists or conflicts', status: 'ABORTED', errors: [{ reason: 'aborted', domain: 'global' }] });
  });

  it('more than 1000 ids: "Number of ids cannot exceed 1000"', async () => {
    const ids = Array.from({ length: 1001 }, (_, i) => (i + 1).toString(16).padStart(16, '1'));
    for (const call of [
      () => gmail.users.messages.batchModify({ userId: 'me', requestBody: { ids, addLabelIds: ['STARRED'] } }),
      () => gmail.users.messages.batchDelete({ userId: 'me', requestBody: { ids } }),
    ]) {
      const err = await failure(call());
      expect(err.status).toBe(400);
      expect(err.data.error).toMatchObject({ message: 'Number of ids cannot exceed 1000', errors: [{ reason: 'invalidArgument' }] });
    }
  });

  it('no credentials: 401 "Request is missing required authentication credential"; a bad token: "invalid authentication credentials"', async () => {
    const anonymous = google.gmail({ version: 'v1', rootUrl: `${emu.url}/`, retry: false });
    const missing = await failure(anonymous.users.getProfile({ userId: 'me' }));
    expect(missing.status).toBe(401);
    expect(missing.data.error).toMatchObject({
      code: 401,
      status: 'UNAUTHENTICATED',
      message:
        'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
      errors: [{ reason: 'required', location: 'Authorization', locationType: 'header' }],
    });

    const bogus = google.gmail({ version: 'v1', rootUrl: `${emu.url}/`, retry: false, headers: { Authorization: 'Bearer ya29.bogus' } });
    const invalid = await failure(bogus.users.getProfile({ userId: 'me' }));
    expect(invalid.status).toBe(401);
    expect(invalid.data.error.message).toMatch(/^Request had invalid authentication credentials\./);
    expect(invalid.data.error.errors[0]).toMatchObject({ reason: 'authError', message: 'Invalid Credentials' });
  });
});

describe("the user's name", () => {
  it('settings.sendAs carries the display name', async () => {
    const { data } = await gmail.users.settings.sendAs.list({ userId: 'me' });
    expect(data.sendAs?.[0]).toMatchObject({ sendAsEmail: OWNER, displayName: 'Olivia Owner', isPrimary: true });
  });

  it('userinfo (v2 and v3) carries the name and an opaque numeric account id', async () => {
    const oauth2 = google.oauth2({ version: 'v2', auth: owner.auth as unknown as oauth2_v2.Options['auth'], rootUrl: `${emu.url}/` });
    const v2 = (await oauth2.userinfo.get()).data;
    expect(v2).toMatchObject({ email: OWNER, verified_email: true, name: 'Olivia Owner', given_name: 'Olivia', family_name: 'Owner' });
    expect(v2.id).toMatch(/^\d+$/);

    const v3 = (await owner.auth.request<{ sub: string; name: string; email: string }>({ url: `${emu.url}/oauth2/v3/userinfo` })).data;
    expect(v3).toMatchObject({ sub: v2.id, name: 'Olivia Owner', email: OWNER, email_verified: true });
  });
});
