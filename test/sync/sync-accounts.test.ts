// The Gmail sync and its accounts: a revoked grant, connect, demo accounts, disconnect, a second
// grant, list.
// The world (all real: dev server, Postgres, the Gmail emulator with push, the workers, the push
// endpoint) is test/sync/sync-world.ts.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import { GmailAccounts } from '../../src/accounts/gmail-accounts.js';
import { ensureDemoAccount, type AccountDeps } from '../../src/sync/connect.js';
import { connectCommand, disconnectCommand, listCommand, runAccountsCli } from '../../src/cli/accounts.js';
import type { SyncTarget } from '../../src/sync/notify.js';
import { syncWorkflowId } from '../../src/sync/contracts.js';
import type { InboxHarness } from '../helpers/inbox-harness.js';
import { recordWorkflowHistory } from '../helpers/histories.js';
import { waitUntil } from '../helpers/wait-until.js';
import { question, TOPIC, startSyncWorld, type SyncWorld } from './sync-world.js';

let w: SyncWorld;
let h: InboxHarness;
let sync: SyncTarget;
let accountDeps: AccountDeps;
let accountIds: string[];

beforeAll(async () => {
  w = await startSyncWorld();
  ({ h, sync, accountDeps, accountIds } = w);
});

afterAll(async () => {
  await w?.close();
});

const syncStatus = (accountId: string) => w.syncStatus(accountId);
const connectEmulatorAccount = (email: string) => w.connectEmulatorAccount(email);

describe('revoked grant', () => {
  it('marks the account needs_reauth, pauses its sync without crashing, and resumes after a reconnect', async () => {
    const email = `revoked-${randomUUID().slice(0, 8)}@example.com`;
    // Pushes carry this test (a test before it that timed out may have left them dropped).
    await h.gmail.control.setPush({ dropRate: 0 });
    const accountId = await connectEmulatorAccount(email);
    await waitUntil('sync started', async () => ((await syncStatus(accountId)).stats.passes > 0 ? true : undefined));

    await h.gmail.control.revoke(email);
    const { threadId } = await h.gmail.control.deliver(email, { to: [email], ...question('While revoked') });
    const paused = await waitUntil(
      'paused',
      async () => {
        const s = await syncStatus(accountId);
        return s.paused ? s : undefined;
      },
      { timeoutMs: 45_000 },
    );
    expect(paused.pausedReason).toMatch(/GmailAuthError|AccountNotConnectedError/);
    expect((await h.prisma.account.findUniqueOrThrow({ where: { id: accountId } })).status).toBe('needs_reauth');
    const description = await h.client.workflow.getHandle(syncWorkflowId(accountId)).describe();
    expect(description.status.name).toBe('RUNNING');

    // The user reconnects: same cursor, the sync resumes and the mail that came meanwhile is handled.
    const cursor = (await h.prisma.account.findUniqueOrThrow({ where: { id: accountId } })).historyId;
    const again = await connectEmulatorAccount(email);
    expect(again).toBe(accountId);
    const row = await h.prisma.account.findUniqueOrThrow({ where: { id: accountId } });
    expect(row.status).toBe('active');
    expect(row.historyId).toBe(cursor);
    await waitUntil('thread started', () => h.client.workflow.getHandle(`thread/${accountId}/${threadId}`).describe(), {
      timeoutMs: 45_000,
    });
    expect((await syncStatus(accountId)).paused).toBe(false);
    await recordWorkflowHistory(h.client.workflow.getHandle(syncWorkflowId(accountId)), 'sync-reauth-pause-resume');
  });
});

describe('accounts', () => {
  it('connects through the OAuth2 loopback flow (accounts connect), seals the tokens and starts the sync', async () => {
    const email = `loopback-${randomUUID().slice(0, 8)}@example.com`;
    const cfg = { ...h.cfg, GOOGLE_OAUTH_AUTH_URL: `${h.gmail.url}/o/oauth2/v2/auth`, GMAIL_PUSH_TOPIC: TOPIC };
    const lines: string[] = [];
    let consentUrl = '';
    const account = await connectCommand(
      { cfg, prisma: h.prisma, sync },
      {
        out: (l) => lines.push(l),
        // The emulator's consent screen agrees at once and redirects to the CLI's loopback server.
        openUrl: async (url) => {
          consentUrl = url;
          await fetch(url);
        },
      },
      email,
    );
    accountIds.push(account.id);
    const params = new URL(consentUrl).searchParams;
    expect(params.get('access_type')).toBe('offline');
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('scope')!.split(' ')).toEqual(
      expect.arrayContaining(['https://www.googleapis.com/auth/gmail.modify']),
    );
    expect(account.email).toBe(email);
    expect(lines.join('\n')).toContain(`Connected ${email}`);
    const row = await h.prisma.account.findUniqueOrThrow({ where: { id: account.id } });
    expect(row.status).toBe('active');
    expect(row.watchExpiration!.getTime()).toBeGreaterThan(Date.now());
    const tokens = accountDeps.vault.open(row.encryptedTokens!);
    expect(tokens.refresh_token).toBeTruthy();
    expect(Buffer.from(row.encryptedTokens!).includes(tokens.refresh_token)).toBe(false);
    const labels = (await h.gmail.control.getState(email)).labels.map((l) => l.name);
    expect(labels).toEqual(expect.arrayContaining(Object.values(h.settings.labels)));
    await waitUntil('sync started', async () => ((await syncStatus(account.id)).stats.passes > 0 ? true : undefined));
  });

  it('creates demo accounts in the emulator idempotently', async () => {
    const email = `demo-${randomUUID().slice(0, 8)}@example.com`;
    const first = await ensureDemoAccount(accountDeps, { url: h.gmail.url }, email);
    accountIds.push(first.id);
    const second = await ensureDemoAccount(accountDeps, { url: h.gmail.url }, email);
    expect(second.id).toBe(first.id);
    expect((await h.gmail.control.getState(email)).watch?.topicName).toBe(TOPIC);
  });

  it('disconnects an account (watch stopped, grant revoked, tokens deleted, sync stopped) and connect resumes it', async () => {
    const email = `disconnect-${randomUUID().slice(0, 8)}@example.com`;
    const accountId = await connectEmulatorAccount(email);
    await waitUntil('sync started', async () => ((await syncStatus(accountId)).stats.passes > 0 ? true : undefined));
    const before = await h.prisma.account.findUniqueOrThrow({ where: { id: accountId } });
    const { refresh_token } = accountDeps.vault.open(before.encryptedTokens!);
    expect(h.gmail.world.push.getWatch(email)).toBeDefined();
    const stale = new GmailAccounts(h.prisma, accountDeps.vault, accountDeps.oauth); // a worker's cached client
    await stale.call(accountId, (g) => g.getProfile());

    const lines: string[] = [];
    const cfg = { ...h.cfg, GOOGLE_OAUTH_REVOKE_URL: `${h.gmail.url}/revoke` };
    await disconnectCommand({ cfg, prisma: h.prisma, sync }, { out: (l) => lines.push(l) }, email.toUpperCase());
    expect(lines[0]).toBe(
      `Disconnected ${email}: push watch stopped, grant revoked at Google, tokens deleted, sync stopped.`,
    );
    const row = await h.prisma.account.findUniqueOrThrow({ where: { id: accountId } });
    expect(row).toMatchObject({
      status: 'disconnected',
      encryptedTokens: null,
      watchExpiration: null,
      historyId: before.historyId,
    });
    expect(h.gmail.world.push.getWatch(email)).toBeUndefined();
    const refresh = await fetch(`${h.gmail.url}/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token,
        client_id: accountDeps.oauth.clientId,
        client_secret: accountDeps.oauth.clientSecret,
      }),
    });
    expect(refresh.status).toBe(400);
    expect(await refresh.text()).toContain('invalid_grant');
    await waitUntil('sync cancelled', async () => {
      const { status } = await h.client.workflow.getHandle(syncWorkflowId(accountId)).describe();
      return status.name === 'CANCELLED' ? true : undefined;
    });
    // A worker still holding a client of the revoked grant fails for good (no retry loop), and the
    // account stays disconnected rather than turning needs_reauth.
    // (First the revoked access token's 401, which an activity would retry; then the refresh's invalid_grant.)
    await expect(stale.call(accountId, (g) => g.getProfile())).rejects.toMatchObject({ name: 'GmailAuthError' });
    await expect(stale.call(accountId, (g) => g.getProfile())).rejects.toMatchObject({
      name: 'GmailAuthError',
      revoked: true,
    });
    expect((await h.prisma.account.findUniqueOrThrow({ where: { id: accountId } })).status).toBe('disconnected');
    const listed: string[] = [];
    await listCommand({ prisma: h.prisma }, { out: (l) => listed.push(l) });
    expect(listed.join('\n')).toContain(`${email} disconnected: nothing is read or written`);

    // Mail that arrives meanwhile waits in Gmail; connecting again picks it up from the kept cursor.
    const { threadId } = await h.gmail.control.deliver(email, { to: [email], ...question('While disconnected') });
    expect(await connectEmulatorAccount(email)).toBe(accountId);
    expect((await h.prisma.account.findUniqueOrThrow({ where: { id: accountId } })).status).toBe('active');
    await waitUntil('thread started', () => h.client.workflow.getHandle(`thread/${accountId}/${threadId}`).describe(), {
      timeoutMs: 45_000,
    });
    expect((await h.client.workflow.getHandle(syncWorkflowId(accountId)).describe()).status.name).toBe('RUNNING');
  });

  it('keeps the new grant when a worker still holding a client of the old one refreshes its token', async () => {
    const email = `regrant-${randomUUID().slice(0, 8)}@example.com`;
    const storedGrant = async (id: string) =>
      accountDeps.vault.open((await h.prisma.account.findUniqueOrThrow({ where: { id } })).encryptedTokens!)
        .refresh_token;
    // Every call refreshes its access token (google-auth-library refreshes ahead of expiry).
    await h.gmail.control.setOAuth({ accessTokenTtlSeconds: 1 });
    try {
      const id = await connectEmulatorAccount(email);
      const worker = new GmailAccounts(h.prisma, accountDeps.vault, accountDeps.oauth);
      await worker.call(id, (g) => g.getProfile()); // this "worker" caches a client of the first grant
      const first = await storedGrant(id);
      expect(await connectEmulatorAccount(email)).toBe(id); // the user connects again: a second grant
      const second = await storedGrant(id);
      expect(second).not.toBe(first);

      // Refreshes with the first grant, still valid at Google; the refreshed tokens are saved in the
      // background (GmailAccounts.saveRefreshed): wait for that save to be done.
      const saves = vi.spyOn(worker as unknown as { saveRefreshed(...args: unknown[]): Promise<void> }, 'saveRefreshed');
      await worker.call(id, (g) => g.getProfile());
      await waitUntil('the save of the refreshed tokens', async () => saves.mock.results.length > 0, { everyMs: 10 });
      await saves.mock.results[0]!.value;
      saves.mockRestore();
      expect(await storedGrant(id)).toBe(second);
    } finally {
      await h.gmail.control.setOAuth({ accessTokenTtlSeconds: 3599 });
    }
  });

  it('refuses to disconnect an account it does not know, with exit 2', async () => {
    const lines: string[] = [];
    const code = await runAccountsCli(
      { ...h.cfg, LOG_LEVEL: 'warn' },
      ['disconnect', `nobody-${randomUUID().slice(0, 8)}@example.com`],
      { out: (l) => lines.push(l) },
    );
    expect(code).toBe(2);
    expect(lines.join('\n')).toMatch(
      /no account nobody-.* \(see npm run cli -- accounts list\)\nusage: npm run cli -- accounts/,
    );
    expect(await runAccountsCli(h.cfg, ['disconnect'], { out: (l) => lines.push(l) })).toBe(2);
    expect(lines.at(-1)).toMatch(/^durable-inbox accounts: disconnect needs one account \(its email or id\)\nusage: /);
  });

  it('lists accounts and says which need to be reconnected', async () => {
    const email = `list-${randomUUID().slice(0, 8)}@example.com`;
    const id = await connectEmulatorAccount(email);
    await h.prisma.account.update({ where: { id }, data: { status: 'needs_reauth' } });
    const lines: string[] = [];
    await listCommand({ prisma: h.prisma }, { out: (l) => lines.push(l) });
    const text = lines.join('\n');
    expect(text).toMatch(new RegExp(`${email}\\s+needs_reauth`));
    expect(text).toContain(`accounts connect --login-hint ${email}`);
  });
});
