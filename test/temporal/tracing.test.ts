// OpenTelemetry across the boundaries, all real (dev server, Postgres, the Gmail and Anthropic
// emulators over HTTP, the push endpoint): one email delivered to the mailbox is one trace, from the
// Gmail push through the sync workflow and its activity, the thread workflow, readThread and its Gmail
// HTTP call, the LLM calls, to the draft placed in Gmail. Spans land in the SDK's in-memory exporter.
import { mailboxAccounts } from '../../src/accounts/mailbox-accounts.js';
import { randomUUID } from 'node:crypto';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAccount } from '../../src/sync/connect.js';
import { TokenVault } from '../../src/accounts/token-vault.js';
import { gmailOAuthSettings, quotaOptionsFromConfig } from '../../src/config/settings.js';
import { startHttpServer, type HttpServer } from '../../src/shared/http-server.js';
import { QuotaLimiter } from '../../src/quota/limiter.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { createSyncActivities } from '../../src/sync/sync-activities.js';
import { pushRoute, PUSH_PATH } from '../../src/sync/push-route.js';
import { syncWorkflowId } from '../../src/sync/contracts.js';
import { syncStatusQuery } from '../../src/sync/sync-workflow.js';
import { threadWorkflowId } from '../../src/thread/contracts.js';
import { connectClient } from '../../src/temporal/client.js';
import { temporalConnectionOptions } from '../../src/temporal/connection.js';
import { createDataConverter } from '../../src/temporal/data-converter.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { startTracing, stopTracing, workerTracingOptions } from '../../src/temporal/tracing.js';
import { getWorkflowBundle } from '../../src/workers/workflow-bundle.js';
import { deliver, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { recordedHistories, replayHistories } from '../helpers/histories.js';
import { waitUntil } from '../helpers/wait-until.js';

const TOPIC = 'projects/durable-inbox-test/topics/gmail';
const PUSH_EMAIL = 'gmail-push@durable-inbox-emulator.iam.gserviceaccount.com';
const spans = new InMemorySpanExporter();

let h: InboxHarness;
let client: Client;
let http: HttpServer;
let syncWorker: Worker;
let syncRunning: Promise<void>;
let nativeConnection: NativeConnection;
const syncQueue = `tracing-sync-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  // Before any client or worker exists: they take their interceptors (and the traced bundle) at creation.
  expect(await startTracing({}, { serviceName: 'tracing-test', spanProcessor: new SimpleSpanProcessor(spans) })).toBe(true);
  h = await startInboxHarness();
  await h.startWorkers();
  client = await connectClient(h.cfg, fixedTestPayloadKeys());
  const vault = new TokenVault(Buffer.from(h.cfg.TOKEN_ENCRYPTION_KEY!, 'base64'));
  const oauth = gmailOAuthSettings(h.cfg);
  const sync = { client, taskQueue: syncQueue };

  nativeConnection = await NativeConnection.connect(temporalConnectionOptions(h.cfg));
  syncWorker = await Worker.create({
    connection: nativeConnection,
    taskQueue: syncQueue,
    workflowBundle: await getWorkflowBundle(),
    activities: createSyncActivities({
      prisma: h.prisma,
      accounts: mailboxAccounts(h.prisma, vault, oauth),
      client,
      threadSettings: h.settings,
      syncTaskQueue: syncQueue,
      threadTaskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
      pushTopic: TOPIC,
      accountIds: [h.accountId],
      limiter: new QuotaLimiter(prismaExecutor(h.prisma), quotaOptionsFromConfig(h.cfg)),
    }),
    dataConverter: createDataConverter(fixedTestPayloadKeys()),
    ...workerTracingOptions(),
  });
  syncRunning = syncWorker.run();

  // The push endpoint, and the emulator's Pub/Sub subscription pointing at it.
  // The route needs its own URL (the token's audience): it is made once the server listens.
  const routes: { push?: ReturnType<typeof pushRoute> } = {};
  http = await startHttpServer({ host: '127.0.0.1', port: 0, routes: { [`POST ${PUSH_PATH}`]: (req, res) => routes.push!(req, res) } });
  const audience = `${http.url}${PUSH_PATH}`;
  routes.push = pushRoute({ prisma: h.prisma, sync, audience, serviceAccountEmail: PUSH_EMAIL, certsUrl: `${h.gmail.url}/oauth2/v1/certs` });
  await h.gmail.control.setPush({ topics: { [TOPIC]: { endpoint: audience } }, coalesceMs: 200 });
  // Connected as `accounts connect` does it: labels, cursor, watch, the sync workflow.
  await registerAccount(
    { prisma: h.prisma, vault, oauth, sync, labels: h.settings.labels, pushTopic: TOPIC },
    { refresh_token: (await h.gmail.control.createAccount({ email: h.email })).refreshToken },
  );
  // The first pass (started by connecting, not by a push) is done before the mail comes.
  await waitUntil('the first sync pass', async () => {
    const s = await client.workflow.getHandle(syncWorkflowId(h.accountId)).query(syncStatusQuery);
    return s.idle && s.stats.passes > 0;
  }, { timeoutMs: 30_000, everyMs: 200 });
}, 120_000);

afterAll(async () => {
  await http?.close();
  if (syncWorker?.getState() === 'RUNNING') syncWorker.shutdown();
  await syncRunning;
  await nativeConnection?.close();
  await client?.connection.close();
  await h?.close();
  await stopTracing();
});

/** The span and its ancestors, nearest first. */
function ancestry(span: ReadableSpan, all: ReadableSpan[]): ReadableSpan[] {
  const byId = new Map(all.map((s) => [s.spanContext().spanId, s]));
  const chain = [span];
  for (let at = byId.get(span.parentSpanId ?? ''); at; at = byId.get(at.parentSpanId ?? '')) chain.push(at);
  return chain;
}

describe('tracing', () => {
  it('follows one email in one trace: push → sync → thread workflow → readThread → Gmail → LLM → draft', async () => {
    const { threadId } = await deliver(h, {
      from: 'Alice Example <alice@partner.example>',
      subject: 'Quarterly numbers',
      text: 'Hi,\n\nCould you send me the quarterly numbers by Friday?\n\nThanks, Alice',
    });
    await h.waitFor(threadId, (s) => s.state === 'drafted', 45_000);

    // Workflow spans leave the sandbox through a sink after their activation; a workflow's own run
    // span ends (and is exported) when the run does: the user marks the thread Done, and it closes.
    await h.gmail.control.modifyLabels(h.email, { threadId, add: [h.settings.labels.done] });
    await client.workflow.getHandle(threadWorkflowId(h.accountId, threadId)).result();
    const run = await waitUntil('the thread workflow run span', async () =>
      spans.getFinishedSpans().find((s) => s.name === 'RunWorkflow:threadWorkflow' && s.attributes['workflowId'] === threadWorkflowId(h.accountId, threadId)),
    { timeoutMs: 10_000, everyMs: 200 });
    const traceId = run.spanContext().traceId;
    // Activity spans end in the I/O workers' processors, not in step with the workflow's: wait for them.
    const trace = await waitUntil('the run\'s activity spans', async () => {
      const inTrace = spans.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
      const names = ['RunActivity:readThread', 'RunActivity:triageWithLlm', 'RunActivity:placeDraft', 'gmail drafts.create'];
      return names.every((name) => inTrace.some((s) => s.name === name)) && inTrace;
    }, { timeoutMs: 30_000, everyMs: 200 }).catch(() => spans.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId));
    // A run evicted from the cache and replayed (a loaded machine) ends in a second run span of the
    // same workflow: what its first worker scheduled hangs under the first. Any of them is the run.
    const runs = trace.filter((s) => s.name === 'RunWorkflow:threadWorkflow' && s.attributes['workflowId'] === threadWorkflowId(h.accountId, threadId));
    const one = (name: string, under?: ReadableSpan) => {
      const within = under === run ? runs : under ? [under] : [];
      const found = trace.filter((s) => s.name === name && (!under || ancestry(s, trace).some((a) => within.includes(a))));
      expect(found.map((s) => s.name), `${name}${under ? ` under ${under.name}` : ''}`).not.toEqual([]);
      return found[0]!;
    };

    // push → the sync workflow's pass → the thread workflow it started, parent by parent.
    const push = one('gmail push');
    expect(push.parentSpanId).toBeUndefined();
    expect(ancestry(run, trace).map((s) => s.name)).toEqual([
      'RunWorkflow:threadWorkflow',
      'SignalWithStartWorkflow:threadWorkflow',
      'RunActivity:syncHistoryPage',
      'StartActivity:syncHistoryPage',
      'HandleSignal:syncNotify',
      'SignalWithStartWorkflow:syncWorkflow',
      'gmail push',
    ]);
    one('gmail history.list', one('RunActivity:syncHistoryPage'));

    // In the thread's run: readThread and its Gmail HTTP call, the LLM's HTTP calls, the draft placed in Gmail.
    const readThread = one('RunActivity:readThread', run);
    one('gmail threads.get', readThread);
    const llm = one('RunActivity:triageWithLlm', run);
    const llmCall = one('anthropic POST /v1/messages', llm);
    expect(llmCall.attributes['http.response.status_code']).toBe(200);
    const placeDraft = one('RunActivity:placeDraft', run);
    one('gmail drafts.create', placeDraft);
    expect(readThread.startTime[0] * 1e9 + readThread.startTime[1]).toBeLessThan(placeDraft.startTime[0] * 1e9 + placeDraft.startTime[1]);

    // Nothing of the mail in span names or attributes (the workflow spans carry ids, not the memo).
    expect(Object.keys(run.attributes).sort()).toEqual(['attempt', 'namespace', 'runId', 'taskQueue', 'workflowId', 'workflowType']);
    const text = JSON.stringify(trace.map((s) => [s.name, s.attributes]));
    expect(text).not.toContain('Quarterly');
    expect(text).not.toContain('alice@partner.example');
  }, 90_000);

  it('leaves workflow code deterministic: every recorded history replays with the traced bundle', async () => {
    const files = await recordedHistories();
    expect(files.length).toBeGreaterThanOrEqual(5);
    const workflowBundle = await getWorkflowBundle(); // traced: tracing is on in this file
    const results = await replayHistories({ workflowBundle, dataConverter: createDataConverter(fixedTestPayloadKeys()), ...workerTracingOptions() }, files);
    expect([...results.keys()]).toEqual(files);
    const failed = [...results].filter(([, error]) => error).map(([file, error]) => `${file}: ${error!.message}`);
    expect(failed).toEqual([]);
  }, 120_000);
});
