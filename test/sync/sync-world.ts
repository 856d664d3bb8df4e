// The Gmail sync end to end, all real: dev server, Postgres, the Gmail emulator (push with OIDC
// tokens signed by its key, history 404s, revocation) over googleapis/google-auth-library, the
// Anthropic emulator, the thread workflow's three workers (test/helpers/inbox-harness.ts), a sync
// worker and the push endpoint. One world per sync test file (sync-*.test.ts): the files run side by
// side, where one file of all of them took the longest of the suite.
import { randomUUID } from 'node:crypto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { startDiscordEmulator, type RunningDiscordEmulator } from '../../emulators/discord/index.js';
import { mailboxAccounts } from '../../src/accounts/mailbox-accounts.js';
import { TokenVault } from '../../src/accounts/token-vault.js';
import { createSyncActivities } from '../../src/sync/sync-activities.js';
import { DEFAULT_TIMER_LABEL_PREFIXES } from '../../src/time/index.js';
import { QuotaLimiter } from '../../src/quota/limiter.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { startHttpServer, type HttpServer } from '../../src/shared/http-server.js';
import { pushRoute, PUSH_PATH } from '../../src/sync/push-route.js';
import { registerAccount, type AccountDeps } from '../../src/sync/connect.js';
import type { SyncTarget } from '../../src/sync/notify.js';
import { createDataConverter } from '../../src/temporal/data-converter.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { gmailOAuthSettings, quotaOptionsFromConfig } from '../../src/config/settings.js';
import { getWorkflowBundle } from '../../src/workers/workflow-bundle.js';
import { syncStatusQuery } from '../../src/sync/sync-workflow.js';
import { syncWorkflowId, type SyncStatus } from '../../src/sync/contracts.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';

export const TOPIC = 'projects/durable-inbox-test/topics/gmail';
const PUSH_EMAIL = 'gmail-push@durable-inbox-emulator.iam.gserviceaccount.com';

export const question = (subject: string) => ({
  from: 'Alice Example <alice@partner.example>',
  subject,
  text: 'Hi,\n\nCould you send me the signed contract by Friday?\n\nThanks, Alice',
});

export interface SyncWorld {
  h: InboxHarness;
  discord: RunningDiscordEmulator;
  webhookId: string;
  sync: SyncTarget;
  syncQueue: string;
  accountDeps: AccountDeps;
  /** Accounts of this world: the schedule fan-outs only see these (the test database is shared). */
  accountIds: string[];
  syncStatus(accountId: string): Promise<SyncStatus>;
  /** A new emulator account, connected as the CLI would: labels, cursor, watch, sync workflow. */
  connectEmulatorAccount(email: string): Promise<string>;
  /** A push token as Pub/Sub signs it, for this world's endpoint; claims override. */
  signedPushToken(claims?: Record<string, unknown>): string;
  /** A Pub/Sub push envelope carrying `data`. */
  envelope(data: unknown): string;
  /** POSTs to the push endpoint. */
  post(body: string, token?: string): Promise<Response>;
  close(): Promise<void>;
}

export async function startSyncWorld(): Promise<SyncWorld> {
  const discord = await startDiscordEmulator();
  const webhook = await discord.control.createWebhook({ name: 'Durable Inbox' });
  const h = await startInboxHarness({ env: { DISCORD_WEBHOOK_URL: webhook.url } });
  await h.startWorkers();
  const syncQueue = `sync-test-${randomUUID().slice(0, 8)}`;
  const sync: SyncTarget = { client: h.client, taskQueue: syncQueue };
  const vault = new TokenVault(Buffer.from(h.cfg.TOKEN_ENCRYPTION_KEY!, 'base64'));
  const oauth = gmailOAuthSettings(h.cfg);
  const accountIds: string[] = [];

  const nativeConnection = await NativeConnection.connect({ address: h.cfg.TEMPORAL_ADDRESS });
  const syncWorker = await Worker.create({
    connection: nativeConnection,
    taskQueue: syncQueue,
    workflowBundle: await getWorkflowBundle(),
    activities: createSyncActivities({
      prisma: h.prisma,
      accounts: mailboxAccounts(h.prisma, vault, oauth),
      client: h.client,
      threadSettings: h.settings,
      syncTaskQueue: syncQueue,
      threadTaskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
      pushTopic: TOPIC,
      accountIds,
      limiter: new QuotaLimiter(prismaExecutor(h.prisma), quotaOptionsFromConfig(h.cfg)),
      timerLabels: { prefixes: DEFAULT_TIMER_LABEL_PREFIXES, time: h.cfg },
    }),
    dataConverter: createDataConverter(fixedTestPayloadKeys()),
  });
  const syncRunning = syncWorker.run();

  // The push endpoint, and the emulator's Pub/Sub subscription pointing at it.
  const routes: { push?: ReturnType<typeof pushRoute> } = {};
  const http: HttpServer = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    routes: { [`POST ${PUSH_PATH}`]: (req, res) => routes.push!(req, res) },
  });
  const audience = `${http.url}${PUSH_PATH}`;
  routes.push = pushRoute({ prisma: h.prisma, sync, audience, serviceAccountEmail: PUSH_EMAIL, certsUrl: `${h.gmail.url}/oauth2/v1/certs` });
  await h.gmail.control.setPush({ topics: { [TOPIC]: { endpoint: audience } }, coalesceMs: 200 });

  const accountDeps: AccountDeps = { prisma: h.prisma, vault, oauth, sync, labels: h.settings.labels, pushTopic: TOPIC };
  const world: SyncWorld = {
    h,
    discord,
    webhookId: webhook.id,
    sync,
    syncQueue,
    accountDeps,
    accountIds,
    syncStatus: (accountId) => h.client.workflow.getHandle(syncWorkflowId(accountId)).query(syncStatusQuery),
    async connectEmulatorAccount(email) {
      const created = await h.gmail.control.createAccount({ email });
      const account = await registerAccount(accountDeps, { refresh_token: created.refreshToken });
      if (!accountIds.includes(account.id)) accountIds.push(account.id);
      return account.id;
    },
    signedPushToken(claims = {}) {
      const iat = Math.floor(Date.now() / 1000);
      return h.gmail.world.keys.signJwt({
        iss: 'https://accounts.google.com',
        aud: audience,
        email: PUSH_EMAIL,
        email_verified: true,
        sub: '1234567890',
        iat,
        exp: iat + 3600,
        ...claims,
      });
    },
    envelope(data) {
      return JSON.stringify({
        message: { data: Buffer.from(JSON.stringify(data)).toString('base64'), messageId: '1', publishTime: new Date().toISOString() },
        subscription: 'projects/durable-inbox-test/subscriptions/gmail-push',
      });
    },
    post(body, token) {
      return fetch(audience, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body,
      });
    },
    async close() {
      await http.close();
      if (syncWorker.getState() === 'RUNNING') syncWorker.shutdown();
      await syncRunning;
      await nativeConnection.close();
      await h.close();
      await discord.close();
    },
  };
  // The harness's account, connected as the CLI would.
  await world.connectEmulatorAccount(h.email);
  return world;
}
