// The emulator's state file (dev mode's demo across restarts): a restarted emulator answers as the
// stopped one did (mail, threads, labels, drafts, history, grants, watch), and carries on from
// there; a file it cannot read is moved aside and the world starts empty.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningGmailEmulator } from '../../emulators/gmail/index.js';
import type { WorldSnapshot } from '../../emulators/gmail/world.js';
import { waitUntil } from '../helpers/wait-until.js';
import { connect, gmailClient, oauthClientFor, raw, startEmulator } from '../helpers/googleapis-clients.js';

const OWNER = 'owner@example.com';
const TOPIC = 'projects/state-test/topics/gmail';
let dir: string;
let stateFile: string;
const running: RunningGmailEmulator[] = [];

const start = async () => {
  const emu = await startEmulator({ stateFile, push: { endpoint: 'http://127.0.0.1:9/push' } });
  running.push(emu);
  return emu;
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gmail-emulator-state-'));
  stateFile = join(dir, 'gmail-emulator.json');
});

afterEach(async () => {
  for (const emu of running.splice(0)) await emu.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the state file', () => {
  it('restores mail, labels, drafts, history, grants and the watch, and the mailbox carries on from them', async () => {
    const first = await start();
    expect(first.state).toEqual({ outcome: 'missing' });
    const { account, gmail } = await connect(first, OWNER, 'Olivia Owner');
    await first.control.seed(OWNER, { count: 20, seed: 7, spanDays: 3 });
    const label = await gmail.users.labels.create({ userId: 'me', requestBody: { name: 'Projects' } });
    const cursor = (await gmail.users.getProfile({ userId: 'me' })).data.historyId!;
    const incoming = await first.control.deliver(OWNER, { from: 'alice@example.com', subject: 'Lunch?', text: 'Thursday?', labelIds: ['Projects'] });
    const draft = await gmail.users.drafts.create({
      userId: 'me',
      requestBody: { message: { threadId: incoming.threadId, raw: raw('To: alice@example.com\nSubject: Re: Lunch?\n\nYes.') } },
    });
    await gmail.users.watch({ userId: 'me', requestBody: { topicName: TOPIC } });
    const before = {
      profile: (await gmail.users.getProfile({ userId: 'me' })).data,
      messages: (await gmail.users.messages.list({ userId: 'me', maxResults: 500 })).data.messages,
      thread: (await gmail.users.threads.get({ userId: 'me', id: incoming.threadId, format: 'minimal' })).data,
      history: (await gmail.users.history.list({ userId: 'me', startHistoryId: cursor })).data,
      labels: (await gmail.users.labels.list({ userId: 'me' })).data.labels,
    };
    await first.close();
    running.splice(0);

    const second = await start();
    expect(second.state).toEqual({ outcome: 'restored', accounts: 1 });
    // The app's refresh token still works: a new client, as a restarted worker would make.
    const auth = oauthClientFor(second, account);
    auth.setCredentials({ refresh_token: account.refreshToken });
    const again = gmailClient(second, auth);
    expect((await again.users.getProfile({ userId: 'me' })).data).toEqual(before.profile);
    expect((await again.users.messages.list({ userId: 'me', maxResults: 500 })).data.messages).toEqual(before.messages);
    expect((await again.users.threads.get({ userId: 'me', id: incoming.threadId, format: 'minimal' })).data).toEqual(before.thread);
    expect((await again.users.history.list({ userId: 'me', startHistoryId: cursor })).data).toEqual(before.history);
    expect((await again.users.labels.list({ userId: 'me' })).data.labels).toEqual(before.labels);
    expect((await again.users.drafts.get({ userId: 'me', id: draft.data.id! })).data.message?.id).toBe(draft.data.message?.id);
    expect(second.world.push.getWatch(OWNER)).toMatchObject({ topicName: TOPIC });

    // New mail gets a later history id and a new message id, and replies thread as before.
    const reply = await second.control.deliver(OWNER, { from: 'alice@example.com', threadId: incoming.threadId, text: 'Great.' });
    expect(reply.threadId).toBe(incoming.threadId);
    const history = (await again.users.history.list({ userId: 'me', startHistoryId: before.profile.historyId! })).data;
    expect(history.history?.flatMap((h) => h.messagesAdded ?? []).map((m) => m.message?.id)).toEqual([reply.id]);
    expect(before.messages?.map((m) => m.id)).not.toContain(reply.id);
    const created = await again.users.labels.create({ userId: 'me', requestBody: { name: 'Later' } });
    expect(created.data.id).not.toBe(label.data.id);

    // Written shortly after the change, not only at close: an unclean stop keeps it.
    const saved = await waitUntil('the reply in the state file', async () => {
      const snapshot = JSON.parse(await readFile(stateFile, 'utf8')) as WorldSnapshot;
      const mailbox = snapshot.accounts.find((a) => a.email === OWNER)?.mailbox;
      return mailbox?.messages.some((m) => m.id === reply.id) && mailbox;
    }, { timeoutMs: 10_000, everyMs: 100 });
    expect(String(saved.historyId)).toBe((await again.users.getProfile({ userId: 'me' })).data.historyId);
  });

  it('moves an unreadable file aside and starts empty', async () => {
    await writeFile(stateFile, '{"format": 1, "accounts": [{"email": "x@example.com"');
    const emu = await start();
    expect(emu.state).toMatchObject({ outcome: 'unreadable', movedTo: `${stateFile}.unreadable` });
    expect((await emu.control.listAccounts()).accounts).toEqual([]);
    expect(await readdir(dir)).toEqual(['gmail-emulator.json.unreadable']);
  });
});
