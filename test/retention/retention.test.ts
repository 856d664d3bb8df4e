// The foundation end to end: a real workflow on the real dev server runs a real activity that
// writes through Prisma to PostgreSQL — the retention workflow, run through its Schedule.
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { createPrismaClient } from '../../src/db/client.js';
import { ensureSchedules, RETENTION_SCHEDULE_ID } from '../../src/schedules/schedules.js';
import { createDataConverter } from '../../src/temporal/data-converter.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { createWorkerContext, type WorkerContext } from '../../src/workers/context.js';
import { createWorkflowWorker } from '../../src/workers/workflow-worker.js';
import { retentionWorkflow } from '../../src/retention/retention-workflow.js';
import { recordWorkflowHistory } from '../helpers/histories.js';
import { waitUntil } from '../helpers/wait-until.js';

const tag = randomUUID().slice(0, 8);
const keys = fixedTestPayloadKeys();
const cfg = loadConfig({
  TEMPORAL_ADDRESS: inject('temporalAddress'),
  DATABASE_URL: inject('databaseUrl'),
  PAYLOAD_ENCRYPTION_KEYS: keys.map((k) => `${k.id}:${k.key.toString('base64')}`).join(','),
  TEMPORAL_TASK_QUEUE: `retention-${tag}`,
});
const prisma = createPrismaClient(cfg.DATABASE_URL!);
let ctx: WorkerContext;
let client: Client;

beforeAll(async () => {
  ctx = await createWorkerContext(cfg, cfg.DATABASE_URL!);
  client = new Client({
    connection: await Connection.connect({ address: cfg.TEMPORAL_ADDRESS }),
    dataConverter: createDataConverter(keys),
  });
});

afterAll(async () => {
  await client?.connection.close();
  await ctx?.close();
  await prisma.$disconnect();
});

const daysAgo = (n: number) => new Date(Date.now() - n * 24 * 3600 * 1000);

async function seedThreads() {
  const account = await prisma.account.create({ data: { email: `retention-${tag}@example.com` } });
  const thread = (gmailThreadId: string, closedAt: Date | null) =>
    prisma.thread.create({ data: { accountId: account.id, gmailThreadId, state: closedAt ? 'sent' : 'drafted', closedAt } });
  const oldClosed = await thread('old-closed', daysAgo(100));
  const recentClosed = await thread('recent-closed', daysAgo(5));
  const oldOpen = await thread('old-open', null);
  await prisma.decision.createMany({
    data: [
      { accountId: account.id, threadId: oldOpen.id, kind: 'classify', source: 'rules', createdAt: daysAgo(120) },
      { accountId: account.id, threadId: oldOpen.id, kind: 'draft', source: 'llm', createdAt: daysAgo(1) },
    ],
  });
  // A Message Batch a backfill left before its hand-over (10 days old), and one of today's.
  const batch = (key: string, createdAt: Date) =>
    prisma.llmBatch.create({ data: { batchKey: `${tag}/${key}`, accountId: account.id, createdAt, requests: { create: [{ customId: 'c-1', threadId: 't1', messageId: 'm1', prompt: {} }] } } });
  await batch('left', daysAgo(10));
  await batch('today', new Date());
  return { account, oldClosed, recentClosed, oldOpen };
}

describe('retention workflow', () => {
  it('prunes closed threads and decisions past the retention age through Prisma, never open threads', async () => {
    const { account, oldClosed, recentClosed, oldOpen } = await seedThreads();
    const worker = await createWorkflowWorker(ctx);
    const workflowId = `retention-test-${tag}`;
    const result = await worker.runUntil(
      client.workflow.execute(retentionWorkflow, {
        workflowId,
        taskQueue: cfg.TEMPORAL_TASK_QUEUE,
        args: [{ retentionDays: 30, batchRequestsDays: 3 }],
      }),
    );
    // The old batch's request rows are gone, today's kept; the batch rows stay.
    expect(result.batchRequestsDeleted).toBeGreaterThanOrEqual(1);
    const requests = await prisma.llmBatchRequest.findMany({ where: { batch: { accountId: account.id } } });
    expect(requests.map((r) => r.batchKey)).toEqual([`${tag}/today`]);
    expect(await prisma.llmBatch.count({ where: { accountId: account.id } })).toBe(2);
    expect(result.threadsDeleted).toBeGreaterThanOrEqual(1);
    expect(result.decisionsDeleted).toBeGreaterThanOrEqual(1);
    const remaining = await prisma.thread.findMany({ where: { accountId: account.id } });
    expect(remaining.map((t) => t.id).sort()).toEqual([recentClosed.id, oldOpen.id].sort());
    expect(remaining.find((t) => t.id === oldClosed.id)).toBeUndefined();
    const decisions = await prisma.decision.findMany({ where: { accountId: account.id } });
    expect(decisions.map((d) => d.kind)).toEqual(['draft']);
    await recordWorkflowHistory(client.workflow.getHandle(workflowId), 'retention');
  });

  it('runs from its Schedule, created idempotently with an operator pause kept', async () => {
    const scheduleSettings = { retentionDays: 30, taskQueue: cfg.TEMPORAL_TASK_QUEUE, idPrefix: `${tag}-` };
    const [id] = await ensureSchedules(client, scheduleSettings);
    expect(id).toBe(`${tag}-${RETENTION_SCHEDULE_ID}`);
    const handle = client.schedule.getHandle(id!);
    await handle.pause('operator says so');
    await ensureSchedules(client, scheduleSettings); // start-up again: updates, keeps the pause
    const described = await handle.describe();
    expect(described.state.paused).toBe(true);
    expect(described.state.note).toBe('operator says so');

    const worker = await createWorkflowWorker(ctx);
    await worker.runUntil(async () => {
      await handle.trigger();
      const run = await waitUntil('the schedule to start the retention workflow', async () => (await handle.describe()).info.recentActions[0]?.action.workflow, { timeoutMs: 10_000 });
      const output = await client.workflow.getHandle(run.workflowId, run.firstExecutionRunId).result();
      expect(output).toMatchObject({ cutoff: expect.any(String) });
    });
    await handle.delete();
  });
});
