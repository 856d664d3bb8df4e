// Task queue priority and fairness: which work goes first when workers are busy.
// Live mail (a new email, the user's labels, the sync that delivers them) goes before everything;
// a backfill waits behind it. Within a level, the account is the fairness key, so one account's
// backlog cannot starve the others. Child workflows and activities inherit their workflow's.
import type { Priority } from '@temporalio/common';

export type WorkKind = 'live' | 'handoff' | 'maintenance' | 'backfill';

/** Lower runs first (Temporal's range is 1..5, default 3). */
export const PRIORITY_KEYS: Readonly<Record<WorkKind, number>> = {
  live: 1,
  handoff: 3,
  maintenance: 4,
  backfill: 5,
};

export function priorityFor(kind: WorkKind, accountId?: string): Priority {
  return { priorityKey: PRIORITY_KEYS[kind], ...(accountId ? { fairnessKey: accountId } : {}) };
}
