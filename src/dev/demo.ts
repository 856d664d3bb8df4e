// Dev mode without Google, Anthropic or Discord credentials: the bundled emulators stand in, with a
// demo mailbox whose mail flows through the real sync → thread workflows → Gmail path, and a
// Discord webhook that approval requests are posted to. The Gmail emulator keeps its world under
// DATA_DIR, so a restarted demo continues where it stopped; without that file, the demo account is
// reset in Postgres and Temporal with the fresh mailbox, never left pointing at one that is gone.
import { prismaExecutor } from '../db/sql-executor.js';
import { scheduleIdOf } from '../schedules/contracts.js';
import { findAgentSchedule } from '../schedules/schedule-store.js';
import { addUserSchedule, scheduleOptionsOf, userScheduleState, zoneOf, type UserScheduleSettings } from '../schedules/user-schedules.js';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import type { Env } from '../config/env.js';
import { registerAccount, type AccountDeps } from '../sync/connect.js';
import { notifySync, requestFullScan, type SyncTarget } from '../sync/notify.js';
import { historyIdGreater } from '../sync/contracts.js';
import { startGmailEmulator, type RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { startAnthropicEmulator, type AnthropicEmulator } from '../../emulators/anthropic/index.js';
import type { PrismaClient } from '../db/client.js';
import { startDiscordEmulator, type RunningDiscordEmulator } from '../../emulators/discord/index.js';
import { createLogger } from '../shared/log.js';
import { deliverDemoNewsletters, deliverDemoQuestions } from './demo-lessons.js';

const log = createLogger('demo');

export const DEMO_EMAIL = 'demo@durable-inbox.test';
const DEMO_TOPIC = 'projects/durable-inbox-demo/topics/gmail';
const PUSH_SERVICE_ACCOUNT = 'gmail-push@durable-inbox-emulator.iam.gserviceaccount.com';

export interface DemoWorld {
  /** Environment values that point the app at the emulators (merged over the user's). */
  env: Record<string, string>;
  gmail?: RunningGmailEmulator;
  anthropic?: AnthropicEmulator;
  discord?: RunningDiscordEmulator;
  close(): Promise<void>;
}

/** The Gmail emulator's state file under DATA_DIR. */
export const GMAIL_STATE_FILE = 'gmail-emulator.json';

/** Starts the emulators the configuration lacks credentials for; the Gmail emulator keeps its world in `dataDir`. */
export async function startDemoWorld(cfg: Env, dataDir: string): Promise<DemoWorld> {
  const env: Record<string, string> = {};
  const useGmail = cfg.EMULATORS === 'always' || (cfg.EMULATORS === 'auto' && !cfg.GOOGLE_CLIENT_ID);
  const useAnthropic = cfg.EMULATORS === 'always' || (cfg.EMULATORS === 'auto' && !cfg.ANTHROPIC_API_KEY);
  const useDiscord = cfg.EMULATORS === 'always' || (cfg.EMULATORS === 'auto' && !cfg.DISCORD_WEBHOOK_URL);
  let gmail: RunningGmailEmulator | undefined;
  let anthropic: AnthropicEmulator | undefined;
  let discord: RunningDiscordEmulator | undefined;

  if (useGmail) {
    const pushEndpoint = `http://127.0.0.1:${cfg.HTTP_PORT}/gmail/push`;
    gmail = await startGmailEmulator({
      port: cfg.GMAIL_EMULATOR_PORT,
      quota: { profile: cfg.GMAIL_QUOTA_PROFILE },
      push: { endpoint: pushEndpoint, audience: pushEndpoint, serviceAccountEmail: PUSH_SERVICE_ACCOUNT },
      stateFile: join(dataDir, GMAIL_STATE_FILE),
    });
    if (gmail.state?.outcome === 'unreadable') log.warn(`Gmail emulator state unreadable (${gmail.state.reason}): moved to ${gmail.state.movedTo}, starting afresh`);
    const info = await gmail.control.info();
    Object.assign(env, {
      GMAIL_API_ROOT_URL: `${info.gmailRootUrl.replace(/\/?$/, '/')}`,
      GOOGLE_CLIENT_ID: info.defaultClient.clientId,
      GOOGLE_CLIENT_SECRET: info.defaultClient.clientSecret,
      GOOGLE_OAUTH_TOKEN_URL: info.tokenUrl,
      GOOGLE_OAUTH_AUTH_URL: info.authUrl,
      GOOGLE_OAUTH_REVOKE_URL: info.revokeUrl,
      GOOGLE_CERTS_URL: info.pemCertsUrl,
      PUSH_AUDIENCE: pushEndpoint,
      PUSH_SERVICE_ACCOUNT_EMAIL: PUSH_SERVICE_ACCOUNT,
      GMAIL_PUSH_TOPIC: DEMO_TOPIC,
    });
    log.info(`no Google credentials: Gmail emulator at ${gmail.url} (quota profile ${cfg.GMAIL_QUOTA_PROFILE})`);
  }
  if (useAnthropic) {
    anthropic = await startAnthropicEmulator({ port: cfg.ANTHROPIC_EMULATOR_PORT, latencyMs: 300 });
    Object.assign(env, { ANTHROPIC_API_KEY: 'emulator', ANTHROPIC_BASE_URL: anthropic.url });
    log.info(`no ANTHROPIC_API_KEY: Anthropic emulator at ${anthropic.url}`);
  }
  if (useDiscord) {
    discord = await startDiscordEmulator({ port: cfg.DISCORD_EMULATOR_PORT });
    const webhook = await discord.control.createWebhook({ name: 'Durable Inbox' });
    env.DISCORD_WEBHOOK_URL = webhook.url;
    log.info(`no DISCORD_WEBHOOK_URL: Discord emulator at ${discord.url}`);
  }
  return {
    env,
    gmail,
    anthropic,
    discord,
    async close() {
      await gmail?.close();
      await anthropic?.close();
      await discord?.close();
    },
  };
}

/** The demo's routine sender: scheduling questions from them get an auto-reply, which waits for approval. */
export const DEMO_AUTO_REPLY_SENDER = 'alice.martin@example.com';
/** The demo sender whose scheduling mail goes to the example agent profile (docs/agent.md). */
export const DEMO_AGENT_SENDER = 'bob@okafor.example.org';

/**
 * Creates the demo account in the Gmail emulator with a seeded mailbox (its newsletters and notices
 * get the default actions), two newsletters the demo's triage lesson is learned from and two questions its
 * writing lesson is learned from (demo-lessons.ts), plus one scheduling question the demo rule answers with an auto-reply;
 * returns its refresh token.
 */
export async function seedDemoMailbox(gmail: RunningGmailEmulator, messages: number): Promise<{ refreshToken: string }> {
  const account = await gmail.control.createAccount({ email: DEMO_EMAIL, name: 'Demo User' });
  if (messages > 0) {
    const { inserted } = await gmail.control.seed(DEMO_EMAIL, { seed: 1, count: messages, spanDays: 7 });
    log.info(`demo mailbox ${DEMO_EMAIL}: ${inserted} messages from the last 7 days`);
  }
  await deliverDemoNewsletters(gmail, DEMO_EMAIL);
  await deliverDemoQuestions(gmail, DEMO_EMAIL);
  await gmail.control.deliver(DEMO_EMAIL, {
    from: { name: 'Alice Martin', email: DEMO_AUTO_REPLY_SENDER },
    to: [DEMO_EMAIL],
    subject: 'Can we move our call to Thursday?',
    text: 'Hi,\n\nWould Thursday at 15:00 work instead of Wednesday for our weekly call?\n\nThanks,\nAlice',
  });
  await gmail.control.deliver(DEMO_EMAIL, {
    from: { name: 'Bob Okafor', email: DEMO_AGENT_SENDER },
    to: [DEMO_EMAIL],
    subject: 'Re-scheduling our meeting',
    text: 'Hello,\n\nSomething came up on Tuesday. Could we meet on Wednesday morning instead?\n\nBob',
  });
  return { refreshToken: account.refreshToken };
}

/**
 * The demo's rules (once): one sender's scheduling mail goes to the example agent (docs/agent.md);
 * another's is answered with an auto-reply, which waits for approval as auto-replies are earned
 * (docs/actions.md).
 */
export async function ensureDemoRules(prisma: PrismaClient): Promise<void> {
  const demoRules = [
    {
      sender: DEMO_AGENT_SENDER,
      subject: '/call|meeting|schedul|lunch/',
      does: { route: 'scheduling' },
      says: 'goes to the agent profile "scheduling"',
    },
    {
      sender: DEMO_AUTO_REPLY_SENDER,
      subject: '/call|meeting|thursday|lunch/',
      does: { actions: [{ kind: 'auto_reply' }] },
      says: 'gets an auto-reply (it waits for your approval)',
    },
  ];
  for (const rule of demoRules) {
    if (await prisma.rule.findFirst({ where: { scope: 'sender', scopeRef: rule.sender, kind: 'deterministic' } })) continue;
    await prisma.rule.create({
      data: { scope: 'sender', scopeRef: rule.sender, kind: 'deterministic', conditions: { subject: rule.subject }, action: 'needs_response', priority: 0, ...rule.does },
    });
    log.info(`demo rule: scheduling mail from ${rule.sender} ${rule.says}`);
  }
}

export interface DemoAccountDeps extends AccountDeps {
  sync: SyncTarget & { client: Client };
}

export interface DemoAccount {
  accountId: string;
  /** continued: the restored mailbox and the account as they were; fresh: a new demo; reset: the old demo's state was dropped first. */
  how: 'continued' | 'fresh' | 'reset';
}

/**
 * Connects the demo account. A mailbox restored from the state file continues with the account
 * Postgres holds (a sync pass catches up). A new mailbox gets a new demo: any account of an earlier
 * one, whose threads and cursor belong to a mailbox that is gone, is reset first (its workflows
 * terminated, its rows deleted), as is one whose cursor is ahead of the restored mailbox (a state
 * file older than the database: history ids would be handed out again).
 */
export async function connectDemoAccount(gmail: RunningGmailEmulator, deps: DemoAccountDeps, opts: { messages: number; fullScanDays: number }): Promise<DemoAccount> {
  const { prisma } = deps;
  const existing = await prisma.account.findUnique({ where: { email: DEMO_EMAIL } });
  const mailbox = gmail.world.findAccount(DEMO_EMAIL)?.mailbox;
  if (mailbox && existing?.status === 'active' && existing.encryptedTokens) {
    if (!historyIdGreater(existing.historyId ?? undefined, String(mailbox.historyId))) {
      log.info(`demo mailbox ${DEMO_EMAIL} restored from the Gmail emulator's state file: continuing`);
      await notifySync(deps.sync, existing.id, { source: 'poll' });
      return { accountId: existing.id, how: 'continued' };
    }
    log.warn(`the demo account's cursor ${existing.historyId} is ahead of the restored mailbox (${mailbox.historyId}): starting the demo afresh`);
  }
  let how: DemoAccount['how'] = 'fresh';
  if (existing) {
    if (!mailbox) log.warn(`no Gmail emulator state to continue the demo from: resetting the demo account ${existing.id} in Postgres and Temporal`);
    await resetDemoAccount(deps.sync.client, prisma, existing.id);
    how = 'reset';
  }
  if (mailbox) await gmail.control.reset();
  const { refreshToken } = await seedDemoMailbox(gmail, opts.messages);
  const account = await registerAccount(deps, { refresh_token: refreshToken });
  // The seeded mail predates the cursor: the inbox scan hands it to the thread workflows.
  await requestFullScan(deps.sync, account.id, { days: opts.fullScanDays });
  return { accountId: account.id, how };
}

/** Terminates the account's workflows and deletes it (its rows go with it). */
async function resetDemoAccount(client: Client, prisma: PrismaClient, accountId: string): Promise<void> {
  let terminated = 0;
  for await (const execution of client.workflow.list({ query: `InboxAccountId = "${accountId}" AND ExecutionStatus = "Running"` })) {
    try {
      await client.workflow.getHandle(execution.workflowId, execution.runId).terminate('demo reset: its mailbox is gone');
      terminated++;
    } catch (err) {
      if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
    }
  }
  for (const s of await prisma.agentSchedule.findMany({ where: { accountId } })) {
    await client.schedule.getHandle(scheduleIdOf(s.id)).delete().catch((err: Error) => {
      if (err.name !== 'ScheduleNotFoundError') throw err;
    });
  }
  await prisma.agentStep.deleteMany({ where: { accountId } });
  await prisma.account.delete({ where: { id: accountId } });
  log.info(`demo account ${accountId} reset: ${terminated} workflows terminated, its rows deleted`);
}

export const DEMO_BRIEF_NAME = 'Morning brief';

/**
 * The demo's morning brief (docs/time.md): 07:30 every day in the account's zone, into the demo inbox
 * (label Brief). Created once; its Temporal Schedule again when the server lost it (a fresh dev server).
 * `npm run cli -- schedules trigger "Morning brief" --account demo@durable-inbox.test` shows one at once.
 */
export async function ensureDemoBrief(client: Client, prisma: PrismaClient, accountId: string, settings: UserScheduleSettings): Promise<string> {
  const db = prismaExecutor(prisma);
  const existing = await findAgentSchedule(db, accountId, DEMO_BRIEF_NAME);
  if (!existing) {
    const row = await addUserSchedule(client, db, {
      accountId,
      name: DEMO_BRIEF_NAME,
      profile: 'brief',
      prompt: 'What needs me today, and what did you do since the last brief?',
      timing: { at: '07:30', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] },
      timeZone: null,
      label: 'Brief',
      discord: true,
    }, settings);
    return row.id;
  }
  if (!(await userScheduleState(client, existing))) {
    await client.schedule.create(scheduleOptionsOf(existing, await zoneOf(db, existing, settings.defaultZone), settings));
  }
  return existing.id;
}
