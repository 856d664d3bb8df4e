// What the bench cases give the product: the environment its workers read (one Temporal server, one
// database, the Gmail and Anthropic emulators, test payload keys) and the dependencies for
// registering emulated accounts.
import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { TokenVault } from '../src/accounts/token-vault.js';
import type { AccountDeps } from '../src/sync/connect.js';
import { gmailOAuthSettings, threadSettingsFromConfig } from '../src/config/settings.js';
import type { Env } from '../src/config/env.js';
import type { PrismaClient } from '../src/db/client.js';
import type { PayloadKey } from '../src/temporal/codec.js';
import { createWorkerContext } from '../src/workers/context.js';
import { createGmailWorker } from '../src/workers/gmail-worker.js';
import { createLlmWorker } from '../src/workers/llm-worker.js';
import { createWorkflowWorker } from '../src/workers/workflow-worker.js';

export interface BenchEnvParts {
  temporalAddress: string;
  databaseUrl: string;
  keys: readonly PayloadKey[];
  /** The Gmail emulator: its API root and OAuth client. */
  gmail: { url: string; clientId: string; clientSecret: string; tokenUrl: string };
  anthropic: { apiKey: string; url: string };
}

/** The workers' environment; a case adds or overrides its own settings after it. */
export function benchWorkerEnv(p: BenchEnvParts): Record<string, string> {
  return {
    TEMPORAL_ADDRESS: p.temporalAddress,
    DATABASE_URL: p.databaseUrl,
    PAYLOAD_ENCRYPTION_KEYS: p.keys.map((k) => `${k.id}:${k.key.toString('base64')}`).join(','),
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    GMAIL_API_ROOT_URL: `${p.gmail.url}/`,
    GOOGLE_CLIENT_ID: p.gmail.clientId,
    GOOGLE_CLIENT_SECRET: p.gmail.clientSecret,
    GOOGLE_OAUTH_TOKEN_URL: p.gmail.tokenUrl,
    ANTHROPIC_API_KEY: p.anthropic.apiKey,
    ANTHROPIC_BASE_URL: p.anthropic.url,
  };
}

/** What registerAccount needs, from the loaded config; `pushTopic` when the case uses Gmail push. */
export function benchAccountDeps(prisma: PrismaClient, cfg: Env, client: Client, pushTopic?: string): AccountDeps {
  return {
    prisma,
    vault: new TokenVault(Buffer.from(cfg.TOKEN_ENCRYPTION_KEY!, 'base64')),
    oauth: gmailOAuthSettings(cfg),
    sync: { client },
    labels: threadSettingsFromConfig(cfg).labels,
    ...(pushTopic ? { pushTopic } : {}),
  };
}

/**
 * `count` accounts in the Gmail emulator (`prefix-0@example.com`, ...), each with its sealed grant in
 * Postgres as `accounts connect` stores it, without the rest of connecting (labels, watch, sync).
 */
export async function emulatedAccounts(
  gmail: { createAccount(input: { email: string }): Promise<{ refreshToken: string }> },
  prisma: PrismaClient,
  cfg: Env,
  prefix: string,
  count: number,
): Promise<{ id: string; email: string }[]> {
  const vault = new TokenVault(Buffer.from(cfg.TOKEN_ENCRYPTION_KEY!, 'base64'));
  const accounts: { id: string; email: string }[] = [];
  for (let a = 0; a < count; a++) {
    const email = `${prefix}-${a}@example.com`;
    const created = await gmail.createAccount({ email });
    const row = await prisma.account.create({ data: { email, encryptedTokens: vault.seal({ refresh_token: created.refreshToken }) } });
    accounts.push({ id: row.id, email });
  }
  return accounts;
}

/** The product's three workers in this process, on one worker context; `stop()` drains them and closes it. */
export async function startWorkersInProcess(cfg: Env, databaseUrl: string): Promise<{ stop(): Promise<void> }> {
  const ctx = await createWorkerContext(cfg, databaseUrl);
  const workers = [await createWorkflowWorker(ctx), await createGmailWorker(ctx), await createLlmWorker(ctx)];
  const running = workers.map((w) => w.run());
  return {
    async stop() {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await Promise.allSettled(running);
      await ctx.close();
    },
  };
}
