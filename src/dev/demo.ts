// Dev mode without Google, Anthropic or Discord credentials: the bundled emulators stand in, with a
// demo mailbox whose mail flows through the real sync → thread workflows → Gmail path, and a
// Discord webhook that approval requests are posted to.
import type { Env } from '../config.js';
import { startGmailEmulator, type RunningGmailEmulator } from '../emulator/gmail/index.js';
import { startAnthropicEmulator, type AnthropicEmulator } from '../emulator/anthropic/index.js';
import type { PrismaClient } from '../db/client.js';
import { startDiscordEmulator, type RunningDiscordEmulator } from '../emulator/discord/index.js';
import { createLogger } from '../shared/log.js';

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

/** Starts the emulators the configuration lacks credentials for. */
export async function startDemoWorld(cfg: Env): Promise<DemoWorld> {
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
    });
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
 * get the default actions), plus one scheduling question the demo rule answers with an auto-reply;
 * returns its refresh token.
 */
export async function seedDemoMailbox(gmail: RunningGmailEmulator, messages: number): Promise<{ refreshToken: string }> {
  const account = await gmail.control.createAccount({ email: DEMO_EMAIL, name: 'Demo User' });
  if (messages > 0) {
    const { inserted } = await gmail.control.seed(DEMO_EMAIL, { seed: 1, count: messages, spanDays: 7 });
    log.info(`demo mailbox ${DEMO_EMAIL}: ${inserted} messages from the last 7 days`);
  }
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
