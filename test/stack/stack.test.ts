// The production shape, proven here: one stack as `npm run stack` starts it (src/stack/stack.ts):
// the Temporal server 1.30.9 on PostgreSQL, two processes of each worker, the codec and HTTP
// servers, the schedules; the Gmail, Anthropic and Discord emulators in this process (as the demo
// world), with mTLS on the frontend. The scenarios run in sequence on it: a thread's lifecycle and the sync through push,
// gap repair, schedules and visibility through the Temporal CLI, and bursts of mail through
// SIGKILLed workers and a restarted server. Its databases are named after the run's test database.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { gmailOAuthSettings, threadSettingsFromConfig } from '../../src/config/settings.js';
import { loadConfig } from '../../src/config/env.js';
import { TokenVault } from '../../src/accounts/token-vault.js';
import { registerAccount, type AccountDeps } from '../../src/sync/connect.js';
import { databaseNameOf, withDatabaseName } from '../../src/db/connection-url.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { defaultMigrationsDir } from '../../src/db/paths.js';
import { startDemoWorld, type DemoWorld } from '../../src/dev/demo.js';
import { freePort } from '../../src/shared/free-port.js';
import { createLogger } from '../../src/shared/log.js';
import { startStack, type Stack } from '../../src/stack/stack.js';
import { WORKER_ROLES, workerTaskQueues } from '../../src/stack/worker-processes.js';
import { syncStatusQuery } from '../../src/sync/sync-workflow.js';
import { syncWorkflowId } from '../../src/sync/contracts.js';
import { SYNC_POLL_SCHEDULE_ID } from '../../src/schedules/schedules.js';
import { resolveTemporalCli } from '../../src/temporal/cli-binary.js';
import { temporalConnectionEnv } from '../../src/temporal/connection.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { resolveTemporalServer } from '../../src/temporal/server-binary.js';
import { ensureTlsCertificates } from '../../src/temporal/tls-certificates.js';
import { threadStatusQuery } from '../../src/thread/signals.js';
import { threadWorkflowId, type ThreadStatus } from '../../src/thread/contracts.js';
import { dropDatabase, recreateDatabase } from '../setup/database.js';
import { waitUntil } from '../helpers/wait-until.js';

const execFileAsync = promisify(execFile);
const log = process.env['STACK_TEST_LOG'] ? (m: string) => console.error(`[stack] ${m}`) : undefined;

let stack: Stack;
let demo: DemoWorld;
let temporalCli: string;
let dataDir: string;
let appDatabaseUrl: string;
let temporalDatabaseUrl: string;
let accountDeps: AccountDeps;
const email = 'stack-user@example.com';
let accountId: string;

const question = (subject: string) => ({
  from: 'Alice Example <alice@partner.example>',
  subject,
  text: 'Hi,\n\nCould you send me the quarterly numbers by Friday?\n\nThanks, Alice',
});

beforeAll(async () => {
  const [binaries, cli] = await Promise.all([
    resolveTemporalServer({ log: (m) => console.info(`[stack.test] ${m}`) }),
    resolveTemporalCli({ log: (m) => console.info(`[stack.test] ${m}`) }),
  ]);
  if (!binaries || !cli) throw new Error('these tests need Go (to build the Temporal server and CLI)');
  temporalCli = cli.path;

  // Named after the run's test database (the run holds a lock on that name): ours alone.
  const base = databaseNameOf(inject('databaseUrl'));
  appDatabaseUrl = withDatabaseName(inject('databaseUrl'), `${base}_stack`);
  temporalDatabaseUrl = withDatabaseName(appDatabaseUrl, `${base}_stack_temporal`);
  await Promise.all([
    recreateDatabase(appDatabaseUrl).then(() => applyMigrations(appDatabaseUrl, defaultMigrationsDir)),
    dropDatabase(temporalDatabaseUrl),
    dropDatabase(`${temporalDatabaseUrl}_visibility`),
  ]);

  dataDir = mkdtempSync(join(tmpdir(), 'stack-test-'));
  const httpPort = await freePort();
  const keys = fixedTestPayloadKeys();
  const env: Record<string, string> = {
    LOG_LEVEL: 'warn',
    EMULATORS: 'always',
    DATA_DIR: dataDir,
    TEMPORAL_ADDRESS: '127.0.0.1:0',
    TEMPORAL_DATABASE_URL: temporalDatabaseUrl,
    PAYLOAD_ENCRYPTION_KEYS: keys.map((k) => `${k.id}:${k.key.toString('base64')}`).join(','),
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    APPROVALS_SECRET: randomBytes(24).toString('base64url'),
    HTTP_PORT: String(httpPort),
    CODEC_SERVER_PORT: '0',
    GMAIL_EMULATOR_PORT: '0',
    ANTHROPIC_EMULATOR_PORT: '0',
    DISCORD_EMULATOR_PORT: '0',
    GMAIL_QUOTA_PROFILE: '2026',
    DATABASE_POOL_SIZE: '4',
    METRICS_PORT: '0',
    TEMPORAL_METRICS_PORT: '0',
  };
  demo = await startDemoWorld(loadConfig(env), dataDir);
  Object.assign(env, demo.env);
  const cfg = loadConfig(env);
  stack = await startStack({
    cfg,
    env,
    // mTLS on the frontend, as `npm run stack` runs it: every worker process and the CLI present the client certificate.
    tls: await ensureTlsCertificates(join(dataDir, 'tls')),
    databaseUrl: appDatabaseUrl,
    // The suite runs beside other test files on a PostgreSQL with 100 connections: keep this stack's share small.
    server: { binaries, port: 0, headless: true, sqlMaxConns: { persistence: 8, visibility: 4 } },
    workersPerRole: 2,
    workerOutput: log ? (name, line) => log(`${name}: ${line}`) : undefined,
    log: log ? createLogger('stack') : undefined,
  });
  accountDeps = {
    prisma: stack.prisma,
    vault: new TokenVault(Buffer.from(cfg.TOKEN_ENCRYPTION_KEY!, 'base64')),
    oauth: gmailOAuthSettings(cfg),
    sync: { client: stack.client, taskQueue: cfg.TEMPORAL_TASK_QUEUE },
    labels: threadSettingsFromConfig(cfg).labels,
    pushTopic: cfg.GMAIL_PUSH_TOPIC,
  };
  const created = await demo.gmail!.control.createAccount({ email, name: 'Stack User' });
  accountId = (await registerAccount(accountDeps, { refresh_token: created.refreshToken })).id;
}, 10 * 60_000);

afterAll(async () => {
  await stack?.stop();
  await demo?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  if (temporalDatabaseUrl) {
    await dropDatabase(temporalDatabaseUrl);
    await dropDatabase(`${temporalDatabaseUrl}_visibility`);
    await dropDatabase(appDatabaseUrl);
  }
}, 120_000);

async function cli(...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(temporalCli, args, {
    env: { ...process.env, ...temporalConnectionEnv(stack.cfg) },
    timeout: 30_000,
  });
  return stdout;
}

async function threadStatus(account: string, threadId: string): Promise<ThreadStatus> {
  const handle = stack.client.workflow.getHandle(threadWorkflowId(account, threadId));
  try {
    return await handle.query(threadStatusQuery);
  } catch (err) {
    // A closed workflow answers with its result.
    if ((await handle.describe()).status.name !== 'COMPLETED') throw err;
    return (await handle.result()) as ThreadStatus;
  }
}

function waitForThread(threadId: string, done: (s: ThreadStatus) => boolean, timeoutMs = 60_000, account = accountId) {
  return waitUntil(`thread ${threadId}`, async () => {
    const s = await threadStatus(account, threadId);
    return done(s) && s;
  }, { timeoutMs, everyMs: 250 });
}

async function mailbox(of = email) {
  return demo.gmail!.control.getState(of);
}

async function draftsOf(threadId: string) {
  return (await mailbox()).drafts.filter((d) => d.threadId === threadId);
}

/** Every thread drafted, with exactly one draft each. */
async function expectOneDraftEach(threadIds: string[], timeoutMs: number) {
  await waitUntil(`${threadIds.length} threads drafted`, async () => {
    const states = await Promise.all(threadIds.map((t) => threadStatus(accountId, t).catch(() => undefined)));
    return states.every((s) => s?.state === 'drafted' && s.pendingEvents === 0);
  }, { timeoutMs, everyMs: 1_000 });
  const drafts = (await mailbox()).drafts;
  for (const threadId of threadIds) expect(drafts.filter((d) => d.threadId === threadId)).toHaveLength(1);
}

describe('the stack: Temporal server on PostgreSQL, two processes per worker', () => {
  it('runs two processes of each worker, each polling its task queue on the server', async () => {
    const queues = workerTaskQueues(stack.cfg);
    for (const role of WORKER_ROLES) expect(stack.workers.pids(role)).toHaveLength(2);
    await stack.workers.untilPolling(stack.client, queues);
    const health = await fetch(`${stack.http.url}/healthz`);
    expect(health.status).toBe(200);
  });

  it('takes a thread through classify, draft, rework and sent, and another to done, all through push and sync', async () => {
    const mail = await demo.gmail!.control.deliver(email, { to: [email], ...question('Quarterly numbers') });
    const drafted = await waitForThread(mail.threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0, 90_000);
    expect(drafted.category).toBe('needs_response');
    expect(drafted.decisions.map((d) => d.kind)).toEqual(expect.arrayContaining(['classify', 'draft']));
    const [draft] = await draftsOf(mail.threadId);
    expect(draft?.id).toBe(drafted.draftId);

    // Rework: the user types an instruction into the draft and adds the Rework label in Gmail.
    const current = (await mailbox()).messages.find((m) => m.id === draft!.messageId);
    await demo.gmail!.control.editDraft(email, draft!.id, { text: `Mention the Friday deadline\n\n${current?.snippet ?? ''}` });
    await demo.gmail!.control.modifyLabels(email, { threadId: mail.threadId, add: ['Rework'] });
    const reworked = await waitForThread(mail.threadId, (s) => s.reworkCount === 1 && s.state === 'drafted' && s.pendingEvents === 0);
    expect(reworked.draftId).toBe(drafted.draftId);
    expect(await draftsOf(mail.threadId)).toHaveLength(1);

    // Visibility on the server's SQL store: the thread is listed as drafted.
    const query = `InboxState="drafted" AND InboxAccountId="${accountId}"`;
    await waitUntil('listed as drafted', async () => {
      const listed = JSON.parse(await cli('workflow', 'list', '--query', query, '--output', 'json')) as Array<{ execution: { workflowId: string } }>;
      return listed.some((w) => w.execution.workflowId === threadWorkflowId(accountId, mail.threadId));
    }, { timeoutMs: 20_000, everyMs: 500 });

    // The user sends it from Gmail.
    await demo.gmail!.control.sendDraft(email, draft!.id);
    const sent = await waitForThread(mail.threadId, (s) => s.state === 'sent');
    expect(sent.draftId).toBe(drafted.draftId);

    // Another thread: drafted, then Done in Gmail archives it and closes its workflow.
    const other = await demo.gmail!.control.deliver(email, { to: [email], ...question('Lunch next week') });
    await waitForThread(other.threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0);
    await demo.gmail!.control.modifyLabels(email, { threadId: other.threadId, add: ['Done'] });
    await waitForThread(other.threadId, (s) => s.state === 'archived');
    // The query answers 'archived' as soon as the state changes; the workflow closes after its last steps.
    const otherHandle = stack.client.workflow.getHandle(threadWorkflowId(accountId, other.threadId));
    await otherHandle.result();
    const closed = await otherHandle.describe();
    expect(closed.status.name).toBe('COMPLETED');

    const listedSent = await waitUntil('listed as sent', async () => {
      const out = await cli('workflow', 'count', '--query', `InboxState="sent" AND InboxAccountId="${accountId}"`);
      return /Total: 1\b/.test(out) && out;
    }, { timeoutMs: 20_000, everyMs: 500 });
    expect(listedSent).toMatch(/Total: 1\b/);
  }, 240_000);

  it('repairs a gap: a mailbox behind the cursor gets an inbox scan, and its mail is handled', async () => {
    const restored = 'restored@example.com';
    const created = await demo.gmail!.control.createAccount({ email: restored });
    const waiting = await demo.gmail!.control.deliver(restored, { to: [restored], ...question('Waiting since the restore') });
    const current = BigInt((await mailbox(restored)).historyId);
    await stack.prisma.account.create({ data: { email: restored, status: 'disconnected', historyId: String(current + 100_000n) } });
    const account = await registerAccount(accountDeps, { refresh_token: created.refreshToken });
    const repaired = await waitUntil('gap repair', async () => {
      const s = await stack.client.workflow.getHandle(syncWorkflowId(account.id)).query(syncStatusQuery);
      return s.stats.gapRepairs > 0 && s.idle && s;
    }, { timeoutMs: 60_000, everyMs: 250 });
    expect(BigInt(repaired.cursor!)).toBeLessThan(current + 100_000n);
    await waitForThread(waiting.threadId, (s) => s.state === 'drafted', 60_000, account.id);
  }, 120_000);

  it('has its schedules on the server, managed with `temporal schedule`', async () => {
    const listed = await cli('schedule', 'list');
    for (const id of stack.schedules) expect(listed).toContain(id);

    await cli('schedule', 'toggle', '--schedule-id', SYNC_POLL_SCHEDULE_ID, '--pause', '--reason', 'stack test');
    const paused = JSON.parse(await cli('schedule', 'describe', '--schedule-id', SYNC_POLL_SCHEDULE_ID, '--output', 'json')) as {
      schedule: { state: { paused?: boolean; notes?: string } };
    };
    expect(paused.schedule.state.paused).toBe(true);
    await cli('schedule', 'toggle', '--schedule-id', SYNC_POLL_SCHEDULE_ID, '--unpause', '--reason', 'stack test done');

    // A trigger runs the poll through the server's scheduler, and our workers run it.
    await cli('schedule', 'trigger', '--schedule-id', SYNC_POLL_SCHEDULE_ID);
    const run = await waitUntil('the triggered poll', async () => {
      const info = JSON.parse(await cli('schedule', 'describe', '--schedule-id', SYNC_POLL_SCHEDULE_ID, '--output', 'json')) as {
        info: { recentActions?: Array<{ startWorkflowResult: { workflowId: string; runId: string } }> };
      };
      return info.info.recentActions?.[0]?.startWorkflowResult;
    }, { timeoutMs: 30_000, everyMs: 500 });
    await stack.client.workflow.getHandle(run.workflowId, run.runId).result();
  }, 90_000);

  it('settles every email of a burst, one draft per thread, through a SIGKILLed workflow worker and Gmail worker', async () => {
    const before = stack.workers.pids();
    const threadIds: string[] = [];
    for (let i = 0; i < 20; i++) {
      const mail = await demo.gmail!.control.deliver(email, { to: [email], ...question(`Burst one, question ${i}`) });
      threadIds.push(mail.threadId);
      if (i === 8) await Promise.all([stack.workers.kill('workflow', 0), stack.workers.kill('gmail', 1)]);
    }
    expect(stack.workers.counts.kills).toMatchObject({ workflow: 1, gmail: 1 });
    expect(stack.workers.pids()).toHaveLength(6);
    expect(stack.workers.pids().filter((p) => !before.includes(p))).toHaveLength(2);
    await expectOneDraftEach(threadIds, 180_000);
  }, 240_000);

  it('settles every email of a burst, one draft per thread, through a restart of the Temporal server', async () => {
    const threadIds: string[] = [];
    const deliver = async (i: number) => threadIds.push((await demo.gmail!.control.deliver(email, { to: [email], ...question(`Burst two, question ${i}`) })).threadId);
    // Mail keeps arriving while the server is down: its pushes fail and are redelivered.
    const burst = (async () => {
      for (let i = 0; i < 14; i++) {
        await deliver(i);
        await sleep(300);
      }
    })();
    await waitUntil('the burst under way', async () => threadIds.length >= 5);
    await stack.restartServer();
    await burst;
    await expectOneDraftEach(threadIds, 180_000);
    // The workers rode it out or were started again: still two of each.
    expect(stack.workers.pids()).toHaveLength(6);
  }, 300_000);
});
