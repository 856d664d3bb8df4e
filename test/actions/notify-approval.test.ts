// The approval notification against the Discord webhook emulator (emulators/discord): what the
// message says and does not say, once per action, and Discord's 429 / 4xx / 5xx as Temporal sees them.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ApplicationFailure } from '@temporalio/common';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { deriveApprovalKeys, verifyLink } from '../../src/actions/approval-links.js';
import { loadAction } from '../../src/actions/journal.js';
import { createApprovalNotifyActivities, type ApprovalNotifyDeps } from '../../src/actions/notify-activities.js';
import { startDiscordEmulator, type RunningDiscordEmulator } from '../../emulators/discord/index.js';
import type { SqlExecutor } from '../../src/db/sql-executor.js';
import { bundleWorkflows } from '../../src/workers/workflow-bundle.js';
import { openJournal, seedAction } from '../helpers/approvals.js';

const keys = deriveApprovalKeys('notify-test-secret-of-at-least-32-characters');
const BODY = 'Dear Alice, the merger closes Friday; the wire code is 7741-PRIVATE.';
const SENDER = 'alice@secret-partner.example';
const BASE_URL = 'https://inbox.example.com/app';

let journal: Awaited<ReturnType<typeof openJournal>>;
let db: SqlExecutor;
let discord: RunningDiscordEmulator;
let webhook: { id: string; token: string; url: string };
let accountId: string;

function notifier(settings: Partial<ApprovalNotifyDeps['settings']> = {}) {
  return createApprovalNotifyActivities({
    db,
    keys: async () => keys,
    settings: { discordWebhookUrl: webhook.url, publicBaseUrl: BASE_URL, linkTtlMs: 96 * 3600_000, ...settings },
  });
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  return err as ApplicationFailure;
}

beforeAll(async () => {
  journal = await openJournal('notify-test@durable-inbox.test');
  ({ db, accountId } = journal);
  discord = await startDiscordEmulator();
});

beforeEach(async () => {
  await discord.control.reset();
  webhook = await discord.control.createWebhook({ name: 'Durable Inbox' });
});

afterAll(async () => {
  await discord?.close();
  await journal?.close();
});

describe('notifyApproval', () => {
  it('posts a short summary with a signed link to the page, and no mail content', async () => {
    const action = await seedAction(db, {
      accountId,
      kind: 'auto_reply',
      sender: SENDER,
      because: ['auto_reply is a dangerous action: it needs your approval'],
      result: { body: BODY, draftId: 'r-secret-draft' },
    });
    expect(await notifier().notifyApproval({ actionId: action.id })).toEqual({ notified: true, channel: 'discord' });

    const [sent, ...more] = await discord.control.messages(webhook.id);
    expect(more).toEqual([]);
    const content = sent!.message.content;
    expect(content).toContain('**Approval needed:** `auto_reply` in `notify-test@durable-inbox.test`');
    expect(content).toContain('Proposed by the LLM (confidence 0.91, claude-sonnet-4-6)');
    expect(content).toContain('auto\\_reply is a dangerous action: it needs your approval');
    expect(sent!.allowedMentions).toEqual({ parse: [] });

    const link = /<(https:\/\/inbox\.example\.com\/app\/approvals\/a\/[^>]+)>/.exec(content)?.[1];
    expect(link, content).toBeDefined();
    const url = new URL(link!);
    expect(url.pathname).toBe(`/app/approvals/a/${action.id}`);
    expect([...url.searchParams.keys()]).toEqual(['exp', 'sig']);
    const check = verifyLink(keys, { actionId: action.id, exp: url.searchParams.get('exp'), sig: url.searchParams.get('sig') });
    expect(check.ok).toBe(true);
    expect(Number(url.searchParams.get('exp')) * 1000 - Date.now()).toBeGreaterThan(95 * 3600_000);

    // Whole phrases: a short number can turn up in a random id or a timestamp.
    for (const secret of ['merger', '7741-PRIVATE', 'Dear Alice', SENDER, 'r-secret-draft', webhook.token, action.threadId]) {
      expect(JSON.stringify(sent), secret).not.toContain(secret);
    }
    expect((await loadAction(db, action.id))?.result).toMatchObject({ body: BODY, discordMessageId: sent!.message.id });
  });

  it('posts once per action: a retry or a second call finds the message it journaled', async () => {
    const action = await seedAction(db, { accountId, kind: 'trash' });
    const activities = notifier();
    await activities.notifyApproval({ actionId: action.id });
    expect(await activities.notifyApproval({ actionId: action.id })).toEqual({ notified: true, channel: 'discord' });
    expect(await discord.control.messages(webhook.id)).toHaveLength(1);
  });

  it('does nothing without a webhook, or for an action no longer waiting', async () => {
    const waiting = await seedAction(db, { accountId, kind: 'forward', argument: 'boss@example.com' });
    expect(await notifier({ discordWebhookUrl: undefined }).notifyApproval({ actionId: waiting.id })).toEqual({ notified: false });
    const approved = await seedAction(db, { accountId, kind: 'forward', argument: 'cfo@example.com', state: 'approved' });
    expect(await notifier().notifyApproval({ actionId: approved.id })).toEqual({ notified: false });
    expect(await discord.control.messages()).toEqual([]);
  });

  it("answers Discord's 429 with a retry after its retry_after", async () => {
    const action = await seedAction(db, { accountId, kind: 'trash' });
    await discord.control.setFaults({ rateLimited: 1, retryAfterSeconds: 1.25 });
    const failure = await failureOf(notifier().notifyApproval({ actionId: action.id }));
    expect(failure).toMatchObject({ type: 'DiscordRateLimited', nonRetryable: false, nextRetryDelay: 1250 });
    expect(await discord.control.messages()).toEqual([]);
    expect((await loadAction(db, action.id))?.result).toBeUndefined();
  });

  it('gives up on a 4xx with Discord\'s reason, without the webhook token; retries a 5xx', async () => {
    const action = await seedAction(db, { accountId, kind: 'trash' });
    await discord.control.setFaults({ serverErrors: 1, serverErrorStatus: 502 });
    expect(await failureOf(notifier().notifyApproval({ actionId: action.id }))).toMatchObject({ type: 'DiscordUnavailable', nonRetryable: false });

    await discord.control.deleteWebhook(webhook.id);
    const failure = await failureOf(notifier().notifyApproval({ actionId: action.id }));
    expect(failure).toMatchObject({ type: 'DiscordWebhookRejected', nonRetryable: true });
    expect(failure.message).toBe('Discord refused the message: 404 Unknown Webhook (code 10015)');
    expect(failure.message).not.toContain(webhook.token);
  });
});

describe('notifyApproval in a worker', () => {
  let connection: Connection;
  let nativeConnection: NativeConnection;
  let workflowBundle: WorkflowBundle;

  beforeAll(async () => {
    const address = inject('temporalAddress');
    connection = await Connection.connect({ address });
    nativeConnection = await NativeConnection.connect({ address });
    workflowBundle = await bundleWorkflows(fileURLToPath(new URL('../fixtures/workflows/approval-stand-ins.ts', import.meta.url)));
  });

  afterAll(async () => {
    await nativeConnection?.close();
    await connection?.close();
  });

  async function runNotify(actionId: string) {
    const taskQueue = `notify-approval-${randomUUID()}`;
    const worker = await Worker.create({ connection: nativeConnection, taskQueue, workflowBundle, activities: notifier() });
    const client = new Client({ connection });
    return worker.runUntil(client.workflow.execute('notifyApprovalOnce', { taskQueue, workflowId: `notify-${randomUUID()}`, args: [{ actionId }] }));
  }

  it("waits out Discord's retry_after, not the retry policy's 50 ms, and posts once", async () => {
    const action = await seedAction(db, { accountId, kind: 'trash' });
    await discord.control.setFaults({ rateLimited: 2, retryAfterSeconds: 0.8 });
    const started = Date.now();
    expect(await runNotify(action.id)).toEqual({ notified: true, channel: 'discord' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1600);
    expect(await discord.control.messages(webhook.id)).toHaveLength(1);
    expect((await discord.control.metrics()).rateLimited).toBe(2);
  });

  it('fails the activity for good on a deleted webhook', async () => {
    const action = await seedAction(db, { accountId, kind: 'trash' });
    await discord.control.deleteWebhook(webhook.id);
    const err = await runNotify(action.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const activityFailure = (err as WorkflowFailedError).cause;
    expect((activityFailure?.cause as ApplicationFailure | undefined)?.message).toBe('Discord refused the message: 404 Unknown Webhook (code 10015)');
    expect((await discord.control.metrics()).byStatus).toEqual({ '404': 1 });
  });
});
