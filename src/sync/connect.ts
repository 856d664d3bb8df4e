// Connecting a mailbox is starting its sync: the registration that follows any grant (tokens sealed
// in Postgres, our labels, the sync cursor, users.watch, the sync workflow started, paused thread and
// backfill workflows told to resume), disconnecting, and the dev mode's emulator accounts. The
// consent itself is src/accounts/gmail-consent.ts.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { GmailOAuthSettings } from '../accounts/gmail-accounts.js';
import type { StoredTokens, TokenVault } from '../accounts/token-vault.js';
import type { PrismaClient } from '../db/client.js';
import { createGmailClient } from '../gmail/client.js';
import { GmailService } from '../gmail/gmail-service.js';
import { createLogger } from '../shared/log.js';
import { imapMailboxSettings, type ImapSecret, type ImapServers } from '../accounts/imap-accounts.js';
import { openImapSessionOf, type MailConnectDeps } from '../imap/connect.js';
import type { OAuthTokenDeps } from '../imap/oauth-token.js';
import { ImapMailbox } from '../imap/imap-mailbox.js';
import { postgresLabelMemory } from '../accounts/imap-label-memory.js';
import { prismaExecutor } from '../db/sql-executor.js';
import { checkSmtpSubmission } from '../imap/smtp.js';
import { syncWorkflowId } from './contracts.js';
import { backfillWorkflowId } from '../backfill/contracts.js';
import { accountReconnectedSignal } from '../accounts/account-access.js';
import type { LabelNames } from '../thread/contracts.js';
import { notifyReconnected, notifySync, type SyncTarget } from './notify.js';

const log = createLogger('accounts');

export interface AccountDeps {
  prisma: PrismaClient;
  vault: TokenVault;
  oauth: GmailOAuthSettings;
  /** Temporal: the sync workflow is started (and paused workflows resumed) when given. */
  sync?: SyncTarget;
  labels: LabelNames;
  /** users.watch topic; without it no watch is set up. */
  pushTopic?: string;
}

export interface RegisteredAccount {
  id: string;
  email: string;
  /** The account was needs_reauth (or paused/disconnected) and is active again. */
  reconnected: boolean;
  historyId: string;
  watchExpiration?: Date;
}

/** After any grant: tokens sealed, account active, labels, cursor (kept on a reconnect), watch, sync. */
export async function registerAccount(deps: AccountDeps, tokens: StoredTokens): Promise<RegisteredAccount> {
  if (!tokens.refresh_token) throw new Error('Google returned no refresh token: connect again (the consent must be offline access)');
  const { gmail } = createGmailClient({
    rootUrl: deps.oauth.rootUrl,
    clientId: deps.oauth.clientId,
    clientSecret: deps.oauth.clientSecret,
    tokenUrl: deps.oauth.tokenUrl,
    credentials: tokens,
    onTokens: (fresh) => {
      if (fresh.access_token) tokens.access_token = fresh.access_token;
      if (fresh.expiry_date) tokens.expiry_date = fresh.expiry_date;
      if (fresh.refresh_token) tokens.refresh_token = fresh.refresh_token;
    },
  });
  const service = new GmailService(gmail);
  const profile = await service.getProfile();
  const email = profile.emailAddress.toLowerCase();
  await service.ensureLabels(Object.values(deps.labels));

  const previous = await deps.prisma.account.findUnique({ where: { email } });
  const reconnected = previous !== null && previous.status !== 'active';
  // A reconnect keeps the cursor: the sync resumes where it stopped (or repairs the gap).
  const historyId = previous?.historyId ?? profile.historyId;
  // connectedAt: when this grant began (an app left in Testing loses it 7 days later: accounts doctor).
  const connectedAt = new Date();
  const account = await deps.prisma.account.upsert({
    where: { email },
    create: { email, status: 'active', encryptedTokens: deps.vault.seal(tokens), historyId, connectedAt },
    update: { status: 'active', encryptedTokens: deps.vault.seal(tokens), historyId, connectedAt },
  });

  let watchExpiration: Date | undefined;
  if (deps.pushTopic) {
    const watch = await service.watch({ topicName: deps.pushTopic });
    watchExpiration = new Date(watch.expiration);
    await deps.prisma.account.update({ where: { id: account.id }, data: { watchExpiration } });
  }

  if (deps.sync) await startSync(deps.sync, account.id, reconnected);
  log.info(`account ${account.id} connected${reconnected ? ' again' : ''}`);
  return { id: account.id, email, reconnected, historyId, ...(watchExpiration ? { watchExpiration } : {}) };
}

/** An account that cannot be connected as asked (one sentence, what to do). */
export class AccountConflictError extends Error {
  override readonly name = 'AccountConflictError';
}

/**
 * An IMAP/SMTP account: both servers checked (TLS, login with the password or an access token from
 * the refresh token, the extensions the product needs; each failure a MailServerError of one
 * sentence), the password or OAuth grant sealed, the account active with the
 * mailbox's cursor of now (kept on a reconnect), the sync started.
 */
export async function registerImapAccount(
  deps: Pick<AccountDeps, 'prisma' | 'vault' | 'sync'>,
  input: { address: string; servers: ImapServers; secret: ImapSecret },
  connect: MailConnectDeps = {},
  oauth: Pick<OAuthTokenDeps, 'fetch' | 'now'> = {},
): Promise<RegisteredAccount & { capabilities: { idle: boolean; qresync: boolean; stateIn: 'keywords' | 'folders' } }> {
  const email = input.address.toLowerCase();
  const secret = input.secret;
  // A refresh token the provider rotates while connecting is the one stored.
  const onRotated = (refreshToken: string) => {
    if ('oauth' in secret) secret.oauth.refreshToken = refreshToken;
  };
  const settings = imapMailboxSettings(email, input.servers, secret, { key: `connect:${email}`, deps: { ...oauth, onRotated } });
  const session = await openImapSessionOf(settings, connect);
  await session.close();
  const capabilities = session.capabilities;
  const smtpCredentials = settings.accessToken ? { user: settings.smtp.credentials.user, accessToken: await settings.accessToken.current() } : settings.smtp.credentials;
  await checkSmtpSubmission(settings.smtp.server, smtpCredentials, connect);
  const previous = await deps.prisma.account.findUnique({ where: { email } });
  if (previous && previous.provider !== 'imap') {
    throw new AccountConflictError(`${email} is connected through the Gmail API; disconnect it first (npm run cli -- accounts disconnect ${email}) to connect it over IMAP.`);
  }
  const reconnected = previous !== null && previous.status !== 'active';
  const data = {
    status: 'active' as const,
    provider: 'imap' as const,
    mailServers: input.servers,
    encryptedTokens: deps.vault.sealJson(secret),
    connectedAt: new Date(),
  };
  const account = await deps.prisma.account.upsert({ where: { email }, create: { email, ...data }, update: data });
  let historyId = previous?.historyId ?? undefined;
  if (!historyId) {
    // The cursor of now, its baseline in the account's label memory: without CONDSTORE that is every
    // message's labels now, so a keyword the user sets before the first sync is told to it.
    try {
      const mailbox = await ImapMailbox.open({ ...settings, memory: postgresLabelMemory(prismaExecutor(deps.prisma), account.id) }, connect);
      try {
        historyId = (await mailbox.getProfile()).historyId;
      } finally {
        await mailbox.close();
      }
    } catch (err) {
      // A new account that got no cursor is not kept (its memory rows go with it): connect failed.
      if (!previous) await deps.prisma.account.delete({ where: { id: account.id } }).catch(() => undefined);
      throw err;
    }
    await deps.prisma.account.update({ where: { id: account.id }, data: { historyId } });
  }
  if (deps.sync) await startSync(deps.sync, account.id, reconnected);
  log.info(`IMAP account ${account.id} connected${reconnected ? ' again' : ''}`);
  return {
    id: account.id,
    email,
    reconnected,
    historyId,
    capabilities: { idle: capabilities.idle, qresync: capabilities.qresync, stateIn: capabilities.stateIn },
  };
}

export interface DisconnectedAccount {
  id: string;
  email: string;
  /** users.stop answered: Gmail no longer pushes this mailbox's changes. */
  watchStopped: boolean;
  /** Google revoked the grant (refresh and access tokens). */
  grantRevoked: boolean;
  /** The account's sync workflow was cancelled. */
  syncStopped: boolean;
}

/**
 * The user takes the assistant off a mailbox: the push watch is stopped, the grant revoked at
 * Google, the tokens deleted, the sync workflow cancelled. The cursor, the thread rows and the
 * running thread workflows stay: they wait (their Gmail calls pause the way they do for a revoked
 * grant), and `registerAccount` after a new consent resumes everything where it stopped. Steps
 * that fail (Google unreachable, say) are reported, and the account is disconnected all the same.
 */
export async function disconnectAccount(deps: Pick<AccountDeps, 'prisma' | 'vault' | 'oauth' | 'sync'>, accountId: string): Promise<DisconnectedAccount> {
  const account = await deps.prisma.account.findUniqueOrThrow({ where: { id: accountId } });
  let watchStopped = false;
  let grantRevoked = false;
  if (account.encryptedTokens && account.provider === 'gmail') {
    const tokens = deps.vault.open(account.encryptedTokens);
    const { gmail, auth } = createGmailClient({ ...deps.oauth, credentials: tokens });
    try {
      await new GmailService(gmail).stop();
      watchStopped = true;
    } catch (err) {
      log.warn(`users.stop for ${account.email} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    try {
      await auth.revokeToken(tokens.refresh_token);
      grantRevoked = true;
    } catch (err) {
      log.warn(`revoking the grant of ${account.email} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  await deps.prisma.account.update({
    where: { id: accountId },
    data: { status: 'disconnected', encryptedTokens: null, watchExpiration: null },
  });
  let syncStopped = false;
  if (deps.sync) {
    try {
      await deps.sync.client.workflow.getHandle(syncWorkflowId(accountId)).cancel();
      syncStopped = true;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
  }
  log.info(`account ${accountId} disconnected`);
  return { id: accountId, email: account.email, watchStopped, grantRevoked, syncStopped };
}

/** A new account's sync starts; a reconnected one's sync, threads and backfill carry on where they waited. */
async function startSync(sync: SyncTarget, accountId: string, reconnected: boolean): Promise<void> {
  if (!reconnected) return notifySync(sync, accountId, { source: 'connect' });
  await notifyReconnected(sync, accountId);
  await resumeWaitingWorkflows(sync.client, accountId);
}

/**
 * Tells the account's running thread workflows and its backfill that its grant works again (the
 * sync is told by notifyReconnected); returns how many were told.
 */
export async function resumeWaitingWorkflows(client: Client, accountId: string): Promise<number> {
  const query = `InboxAccountId = "${accountId}" AND ExecutionStatus = "Running" AND WorkflowType = "threadWorkflow"`;
  const workflowIds = [backfillWorkflowId(accountId)];
  for await (const wf of client.workflow.list({ query })) workflowIds.push(wf.workflowId);
  let n = 0;
  for (const workflowId of workflowIds) {
    try {
      await client.workflow.getHandle(workflowId).signal(accountReconnectedSignal);
      n++;
    } catch (err) {
      // No backfill of the account is running: nothing to tell.
      if (err instanceof WorkflowNotFoundError) continue;
      log.warn(`could not resume ${workflowId}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return n;
}

/**
 * Dev mode: makes sure `email` exists in the Gmail emulator at `emulatorUrl` and is connected here
 * (through the emulator's control API, no consent screen). Idempotent; returns the account.
 */
export async function ensureDemoAccount(
  deps: AccountDeps,
  emulator: { url: string },
  email: string,
): Promise<RegisteredAccount> {
  const existing = await deps.prisma.account.findUnique({ where: { email: email.toLowerCase() } });
  if (existing?.status === 'active' && existing.encryptedTokens) {
    return { id: existing.id, email: existing.email, reconnected: false, historyId: existing.historyId ?? '' };
  }
  const res = await fetch(`${emulator.url.replace(/\/+$/, '')}/__emulator/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, clientId: deps.oauth.clientId }),
  });
  if (!res.ok) throw new Error(`emulator refused to create ${email}: ${res.status} ${await res.text()}`);
  const created = (await res.json()) as { refreshToken?: string; refresh_token?: string };
  const refreshToken = created.refreshToken ?? created.refresh_token;
  if (!refreshToken) throw new Error('the emulator returned no refresh token');
  return registerAccount(deps, { refresh_token: refreshToken });
}
