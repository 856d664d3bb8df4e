// Seeding, .eml/mbox import and the standalone CLI, checked through googleapis.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { gmail_v1 } from 'googleapis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnGmailEmulator, startGmailEmulator, type RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { connect, gmailClient, oauthClientFor, startEmulator } from '../helpers/googleapis-clients.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

async function allMessages(gmail: gmail_v1.Gmail, q?: string): Promise<string[]> {
  const ids: string[] = [];
  let pageToken: string | undefined;
  do {
    const { data } = await gmail.users.messages.list({ userId: 'me', maxResults: 500, includeSpamTrash: true, ...(q ? { q } : {}), ...(pageToken ? { pageToken } : {}) });
    ids.push(...(data.messages ?? []).map((m) => m.id ?? ''));
    pageToken = data.nextPageToken ?? undefined;
  } while (pageToken);
  return ids;
}

describe('seeding', () => {
  let emu: RunningGmailEmulator;
  let gmail: gmail_v1.Gmail;

  beforeAll(async () => {
    emu = await startEmulator({ accounts: [{ email: 'seeded@example.com', name: 'Sam Seeded', seed: { count: 600, seed: 42, spanDays: 60 } }] });
    const account = emu.accounts[0];
    if (!account) throw new Error('no seeded account');
    const auth = oauthClientFor(emu, account);
    auth.setCredentials({ refresh_token: account.refreshToken });
    gmail = gmailClient(emu, auth);
  });

  afterAll(async () => {
    await emu.close();
  });

  it('is deterministic for a seed', async () => {
    const again = await startEmulator({ accounts: [{ email: 'seeded@example.com', name: 'Sam Seeded', seed: { count: 600, seed: 42, spanDays: 60 } }] });
    try {
      const a = (await emu.control.getState('seeded@example.com', { messageLimit: 600 })).messages.map((m) => [m.subject, m.from, m.labelIds.join()]);
      const b = (await again.control.getState('seeded@example.com', { messageLimit: 600 })).messages.map((m) => [m.subject, m.from, m.labelIds.join()]);
      expect(b).toEqual(a);
    } finally {
      await again.close();
    }
  });

  it('produces a realistic mix: replies needed, newsletters, no-reply notifications, threads, attachments, non-ASCII', async () => {
    const ids = await allMessages(gmail);
    expect(ids).toHaveLength(600);
    expect((await allMessages(gmail, 'category:promotions')).length + (await allMessages(gmail, 'from:digest')).length).toBeGreaterThan(30);
    expect((await allMessages(gmail, 'from:no-reply')).length).toBeGreaterThan(10);
    expect((await allMessages(gmail, 'has:attachment')).length).toBeGreaterThan(3);
    expect((await allMessages(gmail, 'in:sent')).length).toBeGreaterThan(10);

    const profile = (await gmail.users.getProfile({ userId: 'me' })).data;
    expect(profile.threadsTotal).toBeLessThan(600);

    const newsletter = (await allMessages(gmail, 'from:digest'))[0] ?? '';
    const meta = await gmail.users.messages.get({ userId: 'me', id: newsletter, format: 'metadata', metadataHeaders: ['List-Unsubscribe', 'Precedence'] });
    expect(meta.data.payload?.headers?.map((h) => h.name)).toEqual(['List-Unsubscribe', 'Precedence']);

    const german = (await allMessages(gmail, 'subject:Überprüfung'))[0] ?? '';
    const raw = Buffer.from((await gmail.users.messages.get({ userId: 'me', id: german, format: 'raw' })).data.raw ?? '', 'base64url').toString('latin1');
    expect(raw).toMatch(/^Subject: (Re: )?=\?UTF-8\?B\?/m);
    const full = await gmail.users.messages.get({ userId: 'me', id: german, format: 'metadata', metadataHeaders: ['Subject'] });
    expect(full.data.payload?.headers?.[0]?.value).toContain('Überprüfung des Vertrags');
  });

  it('seeded history is older than retention: the seeded historyId is the floor', async () => {
    const current = (await gmail.users.getProfile({ userId: 'me' })).data.historyId ?? '';
    expect((await gmail.users.history.list({ userId: 'me', startHistoryId: current })).data.history).toBeUndefined();
    const err = await gmail.users.history.list({ userId: 'me', startHistoryId: String(Number(current) - 1) }).catch((e: { response: { status: number } }) => e.response);
    expect(err.status).toBe(404);
  });
});

describe('import', () => {
  let emu: RunningGmailEmulator;
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => {
    await emu.close();
  });

  it('imports an .eml and an mbox (with Takeout labels), threading replies', async () => {
    const { gmail } = await connect(emu, 'importer@example.com');
    const eml = 'From: "Ægir Þórsson" <aegir@example.is>\r\nTo: importer@example.com\r\nSubject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=\r\nDate: Tue, 04 Nov 2025 09:15:00 +0000\r\nMessage-ID: <eml-1@example.is>\r\n\r\nHallo!\r\n';
    expect(await emu.control.importMail('importer@example.com', { format: 'eml', data: eml })).toEqual({ imported: 1, skipped: 0 });
    const mbox = [
      'From alice@example.com Mon Nov 03 10:00:00 2025',
      'From: alice@example.com',
      'To: importer@example.com',
      'Subject: Plans',
      'Date: Mon, 03 Nov 2025 10:00:00 +0000',
      'Message-ID: <m1@example.com>',
      'X-Gmail-Labels: Inbox,Unread,Trips',
      '',
      '>From the top: shall we go?',
      '',
      'From importer@example.com Mon Nov 03 11:00:00 2025',
      'From: importer@example.com',
      'To: alice@example.com',
      'Subject: Re: Plans',
      'Date: Mon, 03 Nov 2025 11:00:00 +0000',
      'Message-ID: <m2@example.com>',
      'In-Reply-To: <m1@example.com>',
      'References: <m1@example.com>',
      'X-Gmail-Labels: Sent',
      '',
      'Yes!',
      '',
    ].join('\n');
    expect(await emu.control.importMail('importer@example.com', { format: 'mbox', data: mbox })).toEqual({ imported: 2, skipped: 0 });

    const greeting = (await gmail.users.messages.list({ userId: 'me', q: 'subject:Grüße' })).data.messages?.[0];
    const got = await gmail.users.messages.get({ userId: 'me', id: greeting?.id ?? '' });
    expect(got.data.internalDate).toBe(String(Date.parse('2025-11-04T09:15:00Z')));
    expect(got.data.payload?.headers?.find((h) => h.name === 'From')?.value).toBe('"Ægir Þórsson" <aegir@example.is>');

    const plans = await gmail.users.threads.list({ userId: 'me', q: 'subject:plans' });
    expect(plans.data.threads).toHaveLength(1);
    const thread = await gmail.users.threads.get({ userId: 'me', id: plans.data.threads?.[0]?.id ?? '' });
    expect(thread.data.messages?.map((m) => m.labelIds)).toEqual([['INBOX', 'UNREAD', expect.stringMatching(/^Label_/)], ['SENT']]);
    expect(Buffer.from(thread.data.messages?.[0]?.payload?.body?.data ?? '', 'base64url').toString()).toContain('From the top');
    const labels = (await gmail.users.labels.list({ userId: 'me' })).data.labels ?? [];
    expect(labels.find((l) => l.name === 'Trips')?.type).toBe('user');
  });
});

describe('standalone CLI', () => {
  const cli = (args: string[]) => spawn(process.execPath, ['--import', 'tsx', 'emulators/gmail/main.ts', ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });

  it('exits 2 with a clear message on a bad flag', async () => {
    const child = cli(['--messages', 'lots']);
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).toBe(2);
    expect(stderr).toContain('--messages expects an integer');
  });

  it('starts seeded on a free port (spawnGmailEmulator) with connection details that work with googleapis', async () => {
    const child = await spawnGmailEmulator(['--messages', '50', '--seed', '3', '--no-quota', '--account', 'cli@example.com']);
    try {
      const { details } = child;
      expect(details).toMatchObject({ email: 'cli@example.com', messages: 50, quota: 'off' });
      const emuLike = { url: details.url } as RunningGmailEmulator;
      const auth = oauthClientFor(emuLike, details);
      auth.setCredentials({ refresh_token: details.refreshToken });
      const profile = await gmailClient(emuLike, auth).users.getProfile({ userId: 'me' });
      expect(profile.data).toMatchObject({ emailAddress: 'cli@example.com', messagesTotal: 50 });
      expect((await child.control.metrics()).methods.getProfile?.calls).toBe(1);
    } finally {
      await child.close();
    }
  });
});

describe('in-process API', () => {
  it('startGmailEmulator picks a free port for port 0 and closes cleanly', async () => {
    const a = await startGmailEmulator({ port: 0, quota: false });
    const b = await startGmailEmulator({ port: 0, quota: false });
    expect(a.port).not.toBe(b.port);
    expect(a.url).toBe(`http://127.0.0.1:${a.port}`);
    await a.close();
    await b.close();
    await expect(fetch(`${a.url}/healthz`)).rejects.toThrow();
  });
});
