// Waits for many thread workflows to settle and says how each ended: the state its thread row holds
// (written when a step completes), whether the workflow failed (Temporal's visibility), and when it
// settled. Used by the real-mail corpus test, the SpamAssassin sample test and `npm run bench -- corpus`.
import type { Client } from '@temporalio/client';
import type { PrismaClient } from '../../src/db/client.js';
import { threadWorkflowId, type ThreadState } from '../../src/thread/contracts.js';
import { InboxLlmPaused } from '../../src/temporal/search-attributes.js';

/** States in which a thread still has work of ours ahead of it; every other state is settled. */
export const IN_PROGRESS_STATES: readonly ThreadState[] = ['pending', 'needs_response', 'rework_requested'];

export interface TrackedThread {
  /** What the caller calls this message (a fixture file, a corpus entry). */
  label: string;
  accountId: string;
  threadId: string;
  /** Epoch ms of the delivery. */
  deliveredAt: number;
}

export interface ThreadOutcome extends TrackedThread {
  /** The state of the thread row, if the workflow wrote one. */
  state?: string;
  /** Epoch ms at which the thread row was written in a settled state. */
  settledAt?: number;
  /** The workflow's execution status when it closed other than completed or continued (FAILED, TERMINATED...). */
  failed?: string;
  /** Why it did not settle in time: the last failure of a pending activity, if any. */
  stuck?: string;
}

export const isSettled = (o: ThreadOutcome): boolean =>
  o.failed === undefined && o.state !== undefined && !IN_PROGRESS_STATES.includes(o.state as ThreadState);

const BAD_CLOSE = ['Failed', 'Terminated', 'TimedOut', 'Canceled'];

/** Workflow ids of this account's thread workflows that closed badly, with their status. */
async function badlyClosed(client: Client, accountIds: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const accounts = accountIds.map((id) => `"${id}"`).join(', ');
  const statuses = BAD_CLOSE.map((s) => `"${s}"`).join(', ');
  const query = `WorkflowType = "threadWorkflow" AND InboxAccountId IN (${accounts}) AND ExecutionStatus IN (${statuses})`;
  for await (const wf of client.workflow.list({ query })) out.set(wf.workflowId, wf.status.name);
  return out;
}

export interface SettleOptions {
  timeoutMs: number;
  everyMs?: number;
  /** Called after each look with the outcomes so far. */
  onProgress?: (settled: number, failed: number, total: number) => void;
}

export async function awaitSettled(
  deps: { prisma: PrismaClient; client: Client },
  threads: TrackedThread[],
  opts: SettleOptions,
): Promise<ThreadOutcome[]> {
  const outcomes = new Map(threads.map((t) => [threadWorkflowId(t.accountId, t.threadId), { ...t } as ThreadOutcome]));
  const accountIds = [...new Set(threads.map((t) => t.accountId))];
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const rows = await deps.prisma.thread.findMany({
      where: { accountId: { in: accountIds } },
      select: { accountId: true, gmailThreadId: true, state: true, updatedAt: true },
    });
    for (const row of rows) {
      const o = outcomes.get(threadWorkflowId(row.accountId, row.gmailThreadId));
      if (!o) continue;
      o.state = row.state;
      if (isSettled(o)) o.settledAt ??= row.updatedAt.getTime();
      else delete o.settledAt;
    }
    for (const [workflowId, status] of await badlyClosed(deps.client, accountIds)) {
      const o = outcomes.get(workflowId);
      if (o) o.failed = status;
    }
    const all = [...outcomes.values()];
    const settled = all.filter(isSettled).length;
    const failed = all.filter((o) => o.failed).length;
    opts.onProgress?.(settled, failed, all.length);
    if (settled + failed === all.length || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 1000));
  }
  const result = [...outcomes.values()];
  await Promise.all(result.filter((o) => !isSettled(o) && !o.failed).map((o) => explainStuck(deps.client, o)));
  await Promise.all(
    result
      .filter((o) => o.failed)
      .slice(0, 50)
      .map((o) => explainFailure(deps.client, o)),
  );
  return result;
}

/** For a failed workflow: its status and the failure's message and cause. */
async function explainFailure(client: Client, o: ThreadOutcome): Promise<void> {
  try {
    await client.workflow.getHandle(threadWorkflowId(o.accountId, o.threadId)).result();
  } catch (err) {
    const e = err as Error & { cause?: Error & { cause?: Error } };
    o.failed = [o.failed, e.cause?.message, e.cause?.cause?.message].filter(Boolean).join(': ');
  }
}

/** For a thread that did not settle: what its workflow is doing (a retrying activity's last failure). */
async function explainStuck(client: Client, o: ThreadOutcome): Promise<void> {
  try {
    const d = await client.workflow.getHandle(threadWorkflowId(o.accountId, o.threadId)).describe();
    const activity = d.raw.pendingActivities?.find((a) => a.lastFailure);
    const llmPaused = d.typedSearchAttributes.get(InboxLlmPaused);
    o.stuck = activity
      ? `${activity.activityType?.name}: ${activity.lastFailure?.message}`
      : llmPaused
        ? `waiting: the LLM is paused (${llmPaused})`
        : `workflow ${d.status.name}, no failing activity`;
    if (d.status.name === 'FAILED' || d.status.name === 'TERMINATED' || d.status.name === 'TIMED_OUT')
      o.failed = d.status.name;
  } catch (err) {
    o.stuck = `describe failed: ${(err as Error).message}`;
  }
}
