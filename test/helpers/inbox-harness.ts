// Everything a thread-workflow test needs, all real: the dev server (global setup), the test
// database, the Gmail and Anthropic emulators over HTTP, the three workers on task queues of
// this test file, and an account whose sealed tokens are in Postgres.
import type { ImapServers } from '../../src/accounts/imap-accounts.js';
import { mailboxAccounts, type MailboxAccounts } from '../../src/accounts/mailbox-accounts.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import type { ActivityInterceptorsFactory, Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { gmailOAuthSettings, threadSettingsFromConfig } from '../../src/config/settings.js';
import { loadConfig, type Env } from '../../src/config/env.js';
import { TokenVault } from '../../src/accounts/token-vault.js';
import { GmailAccounts, type AccountGmail } from '../../src/accounts/gmail-accounts.js';
import { createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { startGmailEmulator, type RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { startAnthropicEmulator, type AnthropicEmulator } from '../../emulators/anthropic/index.js';
import { ingestThreadEvent } from '../../src/thread/ingest.js';
import { createDataConverter } from '../../src/temporal/data-converter.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { waitUntil } from './wait-until.js';
import { diagnoseWorkflows } from './workflow-diagnosis.js';
import { createWorkerContext, type WorkerContext } from '../../src/workers/context.js';
import { createGmailWorker } from '../../src/workers/gmail-worker.js';
import { createLlmWorker } from '../../src/workers/llm-worker.js';
import { createWorkflowWorker } from '../../src/workers/workflow-worker.js';
import { threadStatusQuery } from '../../src/thread/signals.js';
import type { OneClickClient } from '../../src/outbound/one-click.js';
import {
  threadWorkflowId,
  type MailboxEvent,
  type ThreadSettings,
  type ThreadStatus,
} from '../../src/thread/contracts.js';

export interface InboxHarness {
  cfg: Env;
  env: Record<string, string>;
  prisma: PrismaClient;
  client: Client;
  gmail: RunningGmailEmulator;
  anthropic: AnthropicEmulator;
  accountId: string;
  email: string;
  settings: ThreadSettings;
  /** The account's Gmail service, as the activities see it (to read drafts in assertions). */
  accountGmail(): Promise<AccountGmail>;
  /** The account directory a Gmail worker uses (unmetered). */
  gmailAccounts(): GmailAccounts;
  /** Both providers' access, as the workers have it (the sync's). */
  mailboxAccounts(): MailboxAccounts;
  /** The user connects the account again: a new grant in the emulator, stored as `accounts connect` stores it. */
  regrant(): Promise<void>;
  /** Starts the three workers of this harness (again, after stopWorkers). */
  startWorkers(which?: {
    gmail?: boolean;
    llm?: boolean;
    workflow?: boolean;
    activityInterceptors?: ActivityInterceptorsFactory[];
    /** The Gmail worker's one-click client (one with a test server's loopback allowance). */
    oneClick?: OneClickClient;
  }): Promise<void>;
  /**
   * Stops the workers. `exit`: their context goes too (IMAP connections, the IDLE watch, whatever the
   * process kept in memory), as when the process exits: the next startWorkers makes a new one.
   */
  stopWorkers(opts?: { exit?: boolean }): Promise<void>;
  ingest(threadId: string, event: MailboxEvent): Promise<void>;
  handle(threadId: string): WorkflowHandle;
  waitFor(threadId: string, done: (s: ThreadStatus) => boolean, timeoutMs?: number): Promise<ThreadStatus>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  settings?: Partial<ThreadSettings>;
  anthropicLatencyMs?: number;
  /** Extra environment for the workers' configuration. */
  env?: Record<string, string>;
  /** The account is this IMAP/SMTP mailbox (mail-servers) instead of the Gmail emulator's. */
  imap?: { address: string; password: string; servers: ImapServers };
}

export async function startInboxHarness(opts: HarnessOptions = {}): Promise<InboxHarness> {
  const tag = randomUUID().slice(0, 8);
  const gmail = await startGmailEmulator({ quota: false });
  const anthropic = await startAnthropicEmulator({ latencyMs: opts.anthropicLatencyMs ?? 0 });
  const email = `user-${tag}@example.com`;
  const created = await gmail.control.createAccount({ email, name: 'Test User' });

  const keys = fixedTestPayloadKeys();
  const env: Record<string, string> = {
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    DATABASE_URL: inject('databaseUrl'),
    PAYLOAD_ENCRYPTION_KEYS: keys.map((k) => `${k.id}:${k.key.toString('base64')}`).join(','),
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    TEMPORAL_TASK_QUEUE: `test-${tag}`,
    GMAIL_TASK_QUEUE: `test-${tag}-gmail`,
    LLM_TASK_QUEUE: `test-${tag}-llm`,
    GMAIL_API_ROOT_URL: `${gmail.url}/`,
    GOOGLE_CLIENT_ID: created.clientId,
    GOOGLE_CLIENT_SECRET: created.clientSecret,
    GOOGLE_OAUTH_TOKEN_URL: `${gmail.url}/token`,
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: anthropic.url,
    LOG_LEVEL: 'warn',
    // Only an IMAP harness watches IMAP accounts (the database is shared with other files' accounts).
    IMAP_IDLE: opts.imap ? 'true' : 'false',
    ...opts.env,
  };
  const cfg = loadConfig(env);
  const prisma = createPrismaClient(cfg.DATABASE_URL!);
  const vault = new TokenVault(Buffer.from(cfg.TOKEN_ENCRYPTION_KEY!, 'base64'));
  const imap = opts.imap;
  const account = await prisma.account.create({
    data: imap
      ? { email: imap.address, provider: 'imap', mailServers: imap.servers, encryptedTokens: vault.sealJson({ password: imap.password }) }
      : { email, encryptedTokens: vault.seal({ refresh_token: created.refreshToken }) },
  });

  const connection = await Connection.connect({ address: cfg.TEMPORAL_ADDRESS });
  const client = new Client({ connection, dataConverter: createDataConverter(keys) });
  const settings: ThreadSettings = {
    ...threadSettingsFromConfig(cfg),
    activityTimeouts: { gmailMs: 10_000, llmMs: 10_000 },
    ...opts.settings,
  };

  let ctx: WorkerContext | undefined;
  let workers: { worker: Worker; running: Promise<void> }[] = [];

  const harness: InboxHarness = {
    cfg,
    env,
    prisma,
    client,
    gmail,
    anthropic,
    accountId: account.id,
    email: account.email,
    settings,
    accountGmail: () => new GmailAccounts(prisma, vault, gmailOAuthSettings(cfg)).forAccount(account.id),
    gmailAccounts: () => new GmailAccounts(prisma, vault, gmailOAuthSettings(cfg)),
    mailboxAccounts: () => mailboxAccounts(prisma, vault, gmailOAuthSettings(cfg)),
    async regrant() {
      const grant = await gmail.control.createAccount({ email });
      await prisma.account.update({
        where: { id: account.id },
        data: { encryptedTokens: vault.seal({ refresh_token: grant.refreshToken }), status: 'active' },
      });
    },
    async startWorkers(which = {}) {
      ctx ??= await createWorkerContext(cfg, cfg.DATABASE_URL!);
      ctx.activityInterceptors = which.activityInterceptors;
      if (which.oneClick) ctx.oneClick = which.oneClick;
      const made: Worker[] = [];
      if (which.workflow !== false) made.push(await createWorkflowWorker(ctx));
      if (which.gmail !== false) made.push(await createGmailWorker(ctx));
      if (which.llm !== false) made.push(await createLlmWorker(ctx));
      workers.push(...made.map((worker) => ({ worker, running: worker.run() })));
    },
    async stopWorkers(opts = {}) {
      for (const { worker } of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
      await Promise.allSettled(workers.map((w) => w.running));
      workers = [];
      if (opts.exit) {
        await ctx?.close();
        ctx = undefined;
      }
    },
    async ingest(threadId, event) {
      await ingestThreadEvent(client, {
        accountId: account.id,
        threadId,
        event,
        settings,
        taskQueue: cfg.TEMPORAL_TASK_QUEUE,
      });
    },
    handle(threadId) {
      return client.workflow.getHandle(threadWorkflowId(account.id, threadId));
    },
    async waitFor(threadId, done, timeoutMs = 30_000) {
      let last: ThreadStatus | undefined;
      const status = async (): Promise<ThreadStatus> => {
        const handle = harness.handle(threadId);
        try {
          return await handle.query(threadStatusQuery);
        } catch (err) {
          // A closed workflow answers with its result; one that has not run its first task yet, not at all.
          if ((await handle.describe()).status.name !== 'COMPLETED') throw err;
          return (await handle.result()) as ThreadStatus;
        }
      };
      try {
        return await waitUntil(`thread ${threadId}`, async () => {
          last = await status();
          return done(last) && last;
        }, { timeoutMs });
      } catch (err) {
        // What the workflow was doing: its pending tasks and activities, its last events.
        const diagnosis = await diagnoseWorkflows(connection, [threadWorkflowId(account.id, threadId)]);
        throw new Error(`${(err as Error).message}; last status ${JSON.stringify(last)}\n${diagnosis}`, { cause: err });
      }
    },
    async close() {
      await harness.stopWorkers();
      await ctx?.close();
      // Other files' workers watch every active IMAP account of the shared database: this one's servers are going.
      if (imap) await prisma.account.update({ where: { id: account.id }, data: { status: 'disconnected' } });
      await connection.close();
      await prisma.$disconnect();
      await gmail.close();
      await anthropic.close();
    },
  };
  return harness;
}

/** Delivers an inbound message into the harness account's mailbox; returns its ids. */
export async function deliver(
  h: InboxHarness,
  /** The fields of a new message, or a complete one (`raw`, base64url; its own From header counts). */
  message: { from: string; subject: string; text: string; headers?: Record<string, string>; threadId?: string } | { from: string; raw: string },
): Promise<{ messageId: string; threadId: string }> {
  const delivered = await h.gmail.control.deliver(h.email, { to: [h.email], ...message });
  return { messageId: delivered.id, threadId: delivered.threadId };
}

/** Delivers and hands the new message to the ingest function, as the sync worker would. */
export async function deliverAndIngest(
  h: InboxHarness,
  message: Parameters<typeof deliver>[1],
): Promise<{ messageId: string; threadId: string }> {
  const ids = await deliver(h, message);
  await h.ingest(ids.threadId, { type: 'message_added', messageId: ids.messageId, labelIds: ['INBOX'] });
  return ids;
}

/** The user answers the thread with a message of their own (our draft, edited, sent from Gmail), as the sync would hand it over. */
export async function userSends(h: InboxHarness, threadId: string, draftId: string, text: string) {
  await h.gmail.control.editDraft(h.email, draftId, { text });
  const current = (await h.gmail.control.getState(h.email)).drafts.find((d) => d.id === draftId)!;
  const sent = await h.gmail.control.sendDraft(h.email, draftId);
  await h.ingest(threadId, { type: 'draft_gone', messageId: current.messageId ?? '' });
  await h.ingest(threadId, { type: 'message_added', messageId: sent.id, labelIds: sent.labelIds });
  return sent;
}
