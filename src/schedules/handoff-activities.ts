// A scheduled run's hand-off of the actions its agent proposes to the thread they are for (task
// queue durable-inbox, beside the workflows): the thread's workflow judges, journals and carries
// them out as its own (src/thread/action-steps.ts carryOutProposal), so approval, undo, a send's
// delay and exactly-once are the thread's; this waits for the journal to say what became of each.
import { heartbeat } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { actionKey } from '../actions/contracts.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import type { ThreadSettings } from '../thread/contracts.js';
import { requestAgentProposal } from '../thread/ingest.js';
import type { ProposedThreadAction, ScheduleHandoffActivities } from './activity-contracts.js';
import { proposedAsJournaled } from './store-activities.js';

export interface ScheduleHandoffDeps {
  db: SqlExecutor;
  client: () => Promise<Client>;
  settings: ThreadSettings;
  /** The thread workflows' task queue. */
  taskQueue: string;
}

/** States on the way: the thread has not finished its step with the action yet. */
const UNDER_WAY = ['queued', 'approved', 'handed_over'];

export function createScheduleHandoffActivities(deps: ScheduleHandoffDeps): ScheduleHandoffActivities {
  return {
    async proposeToThread({ accountId, threadId, event, waitMs = 60_000 }) {
      await requestAgentProposal(await deps.client(), { accountId, threadId, settings: deps.settings, event, taskQueue: deps.taskQueue });
      let proposed: ProposedThreadAction[] = event.actions.map((a) => ({
        threadId,
        subject: event.subject,
        kind: a.kind,
        ...(a.argument ? { argument: a.argument } : {}),
        key: actionKey({ accountId, threadId, messageId: event.messageId }, a),
        state: 'handed_over',
        because: [],
      }));
      const deadline = Date.now() + waitMs;
      for (;;) {
        proposed = await proposedAsJournaled(deps.db, proposed);
        if (!proposed.some((p) => UNDER_WAY.includes(p.state)) || Date.now() >= deadline) return proposed;
        heartbeat();
        await new Promise((r) => setTimeout(r, 250));
      }
    },
  };
}
