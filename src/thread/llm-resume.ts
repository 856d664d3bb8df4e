// An operator's "the key is fixed": the account's LLM breaker closes, and its waiting thread
// workflows are told at once (llmResumed) instead of at their next recheck.
import type { Client } from '@temporalio/client';
import type { PrismaClient } from '../db/client.js';
import { createLogger } from '../shared/log.js';
import { llmResumedSignal } from './llm-pause.js';
import { afterSuccess, type BreakerState } from '../llm/breaker.js';
import { createBreakerStore } from '../llm/breaker-store.js';

const log = createLogger('llm');

export interface LlmResumed {
  /** The breaker before: closed when there was nothing to resume. */
  before: BreakerState;
  /** Thread workflows signalled; undefined without a Temporal client (their timers look again). */
  signalled: number | undefined;
}

export async function resumeLlm(deps: { prisma: PrismaClient; client?: Client }, accountId: string): Promise<LlmResumed> {
  const { before } = await createBreakerStore(deps.prisma).update(accountId, afterSuccess);
  if (!deps.client) return { before, signalled: undefined };
  let signalled = 0;
  const query = `InboxAccountId = "${accountId}" AND ExecutionStatus = "Running" AND WorkflowType = "threadWorkflow"`;
  for await (const wf of deps.client.workflow.list({ query })) {
    try {
      await deps.client.workflow.getHandle(wf.workflowId).signal(llmResumedSignal);
      signalled++;
    } catch (err) {
      log.warn(`could not resume ${wf.workflowId}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { before, signalled };
}
