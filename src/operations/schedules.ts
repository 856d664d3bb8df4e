// The scheduled agent runs as the operator surfaces (the CLI's `schedules` commands, the MCP server's
// tools) name and trigger them.
import type { Client } from '@temporalio/client';
import type { PrismaClient } from '../db/client.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { scheduleIdOf, type AgentScheduleRow } from '../schedules/contracts.js';
import { findAgentSchedule, loadAgentSchedule } from '../schedules/schedule-store.js';
import { accountIdOf } from './account-ref.js';
import { InvalidRequest } from './errors.js';

/** The schedule a reference names: its id, schedule-<id>, or its name with the account. */
export async function findSchedule(prisma: PrismaClient, db: SqlExecutor, ref: string | undefined, account: unknown): Promise<AgentScheduleRow> {
  if (!ref) throw new InvalidRequest('expected a schedule (its id, schedule-<id>, or its name with --account)');
  const id = ref.startsWith('schedule-') ? ref.slice('schedule-'.length) : ref;
  const byId = /^[0-9a-f-]{36}$/.test(id) ? await loadAgentSchedule(db, id) : null;
  if (byId) return byId;
  const accountId = await accountIdOf(prisma, account as string | undefined);
  const byName = accountId ? await findAgentSchedule(db, accountId, ref) : null;
  if (!byName) throw new InvalidRequest(`no schedule ${ref}${accountId ? '' : ' (a name needs --account)'}`);
  return byName;
}

/** Runs the schedule now, through its Temporal Schedule (it shows in `temporal schedule describe`); a run stands for the time it starts. */
export async function triggerSchedule(client: Client, row: AgentScheduleRow): Promise<void> {
  await client.schedule.getHandle(scheduleIdOf(row.id)).trigger();
}
