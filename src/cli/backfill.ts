// `npm run cli -- backfill <start|status|cancel|archive> ...`
//   start  <account> [--granularity auto|day|week|month] [--from DATE] [--to DATE]
//                    [--batch-size N] [--window N] [--hand-off-days N] [--batch-classify | --no-batch-classify] [--watch]
//   status <account> [--watch]        progress bar, rate and ETA (from the workflow's query)
//   cancel <account>                  cancels the backfill and its running slices; the watermark stays
//   archive [--account A] [--dry-run] [--trash]   runs the archiver now (all accounts by default)
// <account> is an account id or its email address.
import { parseArgs } from 'node:util';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Env } from '../config/env.js';
import { createPrismaClient } from '../db/client.js';
import { resolveDatabase } from '../db/resolve-database.js';
import { createLogger } from '../shared/log.js';
import { connectClient } from '../temporal/client.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';
import { InboxAccountId } from '../temporal/search-attributes.js';
import { archiverWorkflow } from '../backfill/archiver-workflow.js';
import { backfillWorkflow, type BackfillResult } from '../backfill/backfill-workflow.js';
import { priorityFor } from '../temporal/priority.js';
import { backfillProgressQuery, backfillWorkflowId, type BackfillOptions, type BackfillProgress } from '../backfill/contracts.js';

const log = createLogger('cli');

export interface BackfillCliIo {
  out: (line: string) => void;
  /** Redraws in place when the output is a terminal. */
  tty?: boolean;
}

export const USAGE = `usage: npm run cli -- backfill start <account> [--granularity auto|day|week|month] [--from DATE] [--to DATE] [--batch-size N] [--window N] [--hand-off-days N] [--batch-classify | --no-batch-classify] [--watch]
       npm run cli -- backfill status <account> [--watch]
       npm run cli -- backfill cancel <account>
       npm run cli -- backfill archive [--account <account>] [--dry-run] [--trash]`;

function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** The status lines for a progress snapshot: bar, counts, rate, ETA, watermark, alerts. */
export function renderProgress(p: BackfillProgress, now: number, width = 30): string[] {
  const c = p.counters;
  const finished = c.inserted + c.bad + c.gone;
  const total = Math.max(c.messagesTotal, finished);
  const fraction = p.state === 'done' ? 1 : total > 0 ? finished / total : p.slicesTotal > 0 ? p.slicesDone / p.slicesTotal : 0;
  const filled = Math.round(Math.min(1, fraction) * width);
  const remaining = Math.max(0, total - finished);
  const eta = p.state === 'done' ? 0 : p.rate > 0 ? (remaining / p.rate) * 1000 : NaN;
  const lines = [
    `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(fraction * 100).toFixed(1)}%  ${p.state}`,
    `messages: ${c.inserted} stored, ${c.bad} bad, ${c.gone} gone, of ~${c.messagesTotal} (${c.stored - c.inserted} rewritten: slice overlap or replays)`,
    `slices:   ${p.slicesDone}/${p.slicesTotal} done, ${p.slicesRunning} running (${p.granularity ?? '?'})`,
    `rate:     ${p.rate.toFixed(1)} messages/s   elapsed ${duration(now - p.startedAt)}   ETA ${p.state === 'done' ? 'done' : duration(eta)}`,
    `watermark: ${p.watermark === null ? '-' : new Date(p.watermark).toISOString()} (range ${p.rangeStart === null ? '?' : new Date(p.rangeStart).toISOString().slice(0, 10)} → ${p.rangeEnd === null ? '?' : new Date(p.rangeEnd).toISOString().slice(0, 10)})`,
  ];
  if (p.waitingFor) lines.push(`WAITING for the account to be reconnected (npm run cli -- accounts connect): ${p.waitingFor}`);
  for (const alert of Object.values(p.alerts)) lines.push(`ALERT ${alert.level}: ${alert.detail}`);
  return lines;
}

function parseDate(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new Error(`--${name}: not a date: ${value}`);
  return t;
}

async function resolveAccountId(cfg: Env, account: string): Promise<string> {
  if (!account.includes('@')) return account;
  const database = await resolveDatabase(cfg, log);
  const prisma = createPrismaClient(database.url);
  try {
    const found = await prisma.account.findUnique({ where: { email: account } });
    if (!found) throw new Error(`no account ${account} (see npm run cli -- accounts list)`);
    return found.id;
  } finally {
    await prisma.$disconnect();
    await database.stop();
  }
}

async function showStatus(client: Client, accountId: string, watch: boolean, io: BackfillCliIo): Promise<number> {
  const handle = client.workflow.getHandle(backfillWorkflowId(accountId));
  let drawn = 0;
  for (;;) {
    let description;
    try {
      description = await handle.describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) {
        io.out(`no backfill for account ${accountId}`);
        return 1;
      }
      throw err;
    }
    const status = description.status.name;
    let lines: string[];
    if (status === 'RUNNING' || status === 'COMPLETED') {
      try {
        lines = renderProgress(await handle.query(backfillProgressQuery), Date.now());
      } catch (err) {
        if (status !== 'COMPLETED') throw err;
        const r = (await handle.result()) as BackfillResult;
        lines = [`done: ${r.counters.stored} stored, ${r.counters.bad} bad, ${r.slicesDone} slices, watermark ${new Date(r.watermark).toISOString()}`];
      }
    } else {
      lines = [`backfill ${status.toLowerCase()}`];
    }
    // On a terminal, move up over the previous snapshot and clear it before drawing the new one.
    const prefix = io.tty && drawn > 0 ? `\x1b[${drawn}A\x1b[J` : '';
    lines.forEach((line, i) => io.out(i === 0 ? prefix + line : line));
    drawn = lines.length;
    if (!watch || status !== 'RUNNING') return status === 'FAILED' || status === 'TERMINATED' ? 1 : 0;
    if (!io.tty) io.out('');
    await new Promise((r) => setTimeout(r, 2000));
  }
}

export async function runBackfillCli(cfg: Env, argv: string[], io: BackfillCliIo = { out: (l) => console.log(l), tty: process.stdout.isTTY }): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      granularity: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      'batch-size': { type: 'string' },
      window: { type: 'string' },
      'hand-off-days': { type: 'string' },
      'batch-classify': { type: 'boolean' },
      'no-batch-classify': { type: 'boolean' },
      watch: { type: 'boolean', default: false },
      account: { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      trash: { type: 'boolean', default: false },
    },
  });
  const needsAccount = sub === 'start' || sub === 'status' || sub === 'cancel';
  if (!sub || !['start', 'status', 'cancel', 'archive'].includes(sub) || (needsAccount && !positionals[0])) {
    io.out(USAGE);
    return 2;
  }
  const client = await connectClient(cfg, await resolvePayloadKeys(cfg));
  const taskQueue = cfg.TEMPORAL_TASK_QUEUE;
  const taskQueues = { workflows: cfg.TEMPORAL_TASK_QUEUE, gmail: cfg.GMAIL_TASK_QUEUE, llm: cfg.LLM_TASK_QUEUE };
  try {
    if (sub === 'archive') {
      const accountIds = values.account ? [await resolveAccountId(cfg, values.account)] : undefined;
      const result = await client.workflow.execute(archiverWorkflow, {
        workflowId: `archiver-manual-${Date.now()}`,
        taskQueue,
        args: [{ ...(accountIds ? { accountIds } : {}), dryRun: values['dry-run'], trash: values.trash, taskQueues }],
      });
      for (const a of result.accounts) {
        io.out(`${a.accountId}: ${result.dryRun ? 'would archive' : 'archived'} ${a.archived} (watermark ${a.watermark === null ? '-' : new Date(a.watermark).toISOString()})`);
        for (const id of a.wouldArchive ?? []) io.out(`  ${id}`);
      }
      return 0;
    }
    const accountId = await resolveAccountId(cfg, positionals[0]!);
    const workflowId = backfillWorkflowId(accountId);
    if (sub === 'cancel') {
      await client.workflow.getHandle(workflowId).cancel();
      io.out(`cancelling backfill of ${accountId}; its watermark stays where it is`);
      return 0;
    }
    if (sub === 'start') {
      const granularity = values.granularity ?? 'auto';
      if (!['auto', 'day', 'week', 'month'].includes(granularity)) throw new Error(`--granularity: auto, day, week or month`);
      const options: BackfillOptions = {
        accountId,
        granularity: granularity as BackfillOptions['granularity'],
        ...(values.from ? { rangeStart: parseDate(values.from, 'from') } : {}),
        ...(values.to ? { rangeEnd: parseDate(values.to, 'to') } : {}),
        ...(values['batch-size'] ? { batchSize: Number(values['batch-size']) } : {}),
        ...(values.window ? { window: Number(values.window) } : {}),
        ...(values['hand-off-days'] ? { handToThreadsDays: Number(values['hand-off-days']) } : {}),
        classifyInBatch: values['no-batch-classify'] ? false : (values['batch-classify'] ?? cfg.LLM_BATCH_BACKFILL),
        reauthRecheckMs: cfg.REAUTH_RECHECK_EVERY,
        taskQueues,
      };
      try {
        await client.workflow.start(backfillWorkflow, {
          workflowId,
          taskQueue,
          args: [options],
          typedSearchAttributes: [{ key: InboxAccountId, value: accountId }],
          priority: priorityFor('backfill', accountId),
        });
        io.out(`backfill of ${accountId} started (workflow ${workflowId})`);
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
        io.out(`a backfill of ${accountId} is already running`);
      }
    }
    return await showStatus(client, accountId, values.watch, io);
  } finally {
    await client.connection.close();
  }
}
