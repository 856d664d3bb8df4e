// Postgres activities of the actions (local activities of the thread workflow): the journal's
// transitions and reads. Proposals are judged and journaled in the Gmail step that carries them out.
import type { SqlExecutor } from '../db/sql-executor.js';
import type { ActionStoreActivities } from './activity-contracts.js';
import { journalTimer, loadAction, transitionAction } from './journal.js';

export function createActionStoreActivities({ db }: { db: SqlExecutor }): ActionStoreActivities {
  return {
    settleAction: ({ scheduledForMs, ...t }) =>
      transitionAction(db, { ...t, ...(scheduledForMs !== undefined ? { scheduledFor: new Date(scheduledForMs) } : {}) }),
    readAction: ({ id }) => loadAction(db, id),
    journalTimer: (input) => journalTimer(db, input),
  };
}
