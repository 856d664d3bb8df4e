// User schedules in Postgres (tables agent_schedules and schedule_runs): the rows the CLI writes and
// the runs read. The Temporal Schedule holds when and its state; these rows hold what runs.
import type { SqlExecutor } from '../db/sql-executor.js';
import { uuid7 } from '../db/uuid7.js';
import { scheduleTiming, type AgentScheduleRow } from './contracts.js';

type Row = {
  id: string;
  account_id: string;
  name: string;
  profile: string;
  prompt: string;
  timing: unknown;
  time_zone: string | null;
  label: string;
  discord: boolean;
  delivery_thread_id: string | null;
};

const COLUMNS = 'id, account_id, name, profile, prompt, timing, time_zone, label, discord, delivery_thread_id';

function rowOf(r: Row): AgentScheduleRow {
  return {
    id: r.id,
    accountId: r.account_id,
    name: r.name,
    profile: r.profile,
    prompt: r.prompt,
    timing: scheduleTiming.parse(r.timing),
    timeZone: r.time_zone,
    label: r.label,
    discord: r.discord,
    deliveryThreadId: r.delivery_thread_id,
  };
}

export async function insertAgentSchedule(db: SqlExecutor, s: Omit<AgentScheduleRow, 'id' | 'deliveryThreadId'>): Promise<AgentScheduleRow> {
  const [row] = await db.query<Row>(
    `INSERT INTO agent_schedules (id, account_id, name, profile, prompt, timing, time_zone, label, discord)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9) RETURNING ${COLUMNS}`,
    [uuid7(), s.accountId, s.name, s.profile, s.prompt, JSON.stringify(s.timing), s.timeZone, s.label, s.discord],
  );
  return rowOf(row!);
}

export async function loadAgentSchedule(db: SqlExecutor, id: string): Promise<AgentScheduleRow | null> {
  const [row] = await db.query<Row>(`SELECT ${COLUMNS} FROM agent_schedules WHERE id = $1`, [id]);
  return row ? rowOf(row) : null;
}

export async function findAgentSchedule(db: SqlExecutor, accountId: string, name: string): Promise<AgentScheduleRow | null> {
  const [row] = await db.query<Row>(`SELECT ${COLUMNS} FROM agent_schedules WHERE account_id = $1 AND name = $2`, [accountId, name]);
  return row ? rowOf(row) : null;
}

export async function listAgentSchedules(db: SqlExecutor, accountId?: string): Promise<AgentScheduleRow[]> {
  const rows = accountId
    ? await db.query<Row>(`SELECT ${COLUMNS} FROM agent_schedules WHERE account_id = $1 ORDER BY name`, [accountId])
    : await db.query<Row>(`SELECT ${COLUMNS} FROM agent_schedules ORDER BY account_id, name`, []);
  return rows.map(rowOf);
}

export async function deleteAgentSchedule(db: SqlExecutor, id: string): Promise<void> {
  await db.query(`DELETE FROM agent_schedules WHERE id = $1`, [id]);
}

export interface ScheduleRunRow {
  workflowId: string;
  scheduledAt: Date;
  localSlot: string;
  status: string;
  output: string | null;
  steps: number;
  tokensIn: number;
  tokensOut: number;
  gmailMessageId: string | null;
  discordMessageId: string | null;
  note: string | null;
  startedAt: Date;
  finishedAt: Date | null;
}

export async function listScheduleRuns(db: SqlExecutor, scheduleId: string, limit = 10): Promise<ScheduleRunRow[]> {
  const rows = await db.query<Record<string, unknown>>(
    `SELECT workflow_id, scheduled_at, local_slot, status, output, steps, tokens_in, tokens_out, gmail_message_id,
            discord_message_id, note, started_at, finished_at
     FROM schedule_runs WHERE schedule_id = $1 ORDER BY started_at DESC, id DESC LIMIT $2`,
    [scheduleId, limit],
  );
  return rows.map((r) => ({
    workflowId: r.workflow_id as string,
    scheduledAt: r.scheduled_at as Date,
    localSlot: r.local_slot as string,
    status: r.status as string,
    output: r.output as string | null,
    steps: r.steps as number,
    tokensIn: r.tokens_in as number,
    tokensOut: r.tokens_out as number,
    gmailMessageId: r.gmail_message_id as string | null,
    discordMessageId: r.discord_message_id as string | null,
    note: r.note as string | null,
    startedAt: r.started_at as Date,
    finishedAt: r.finished_at as Date | null,
  }));
}
