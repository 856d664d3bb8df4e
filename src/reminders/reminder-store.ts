// Postgres side of reminders: the reminders row (its rule, zone and state: the truth the workflow
// plans from) and one reminder_occurrences row per occurrence handled, keyed by (reminder, due time).
import type { SqlExecutor } from '../db/sql-executor.js';
import { uuid7 } from '../db/uuid7.js';
import type { Recurrence } from './recurrence.js';

export const REMINDER_STATES = ['active', 'paused', 'removed', 'finished'] as const;
export type ReminderState = (typeof REMINDER_STATES)[number];

export interface ReminderRow extends Recurrence {
  id: string;
  accountId: string;
  accountEmail: string;
  title: string;
  /** The reminder's own zone; null: it follows the account's. */
  timeZone: string | null;
  /** The zone it runs in now: its own, else the account's, else the configured default (DEFAULT_TIME_ZONE). */
  zone: string;
  state: ReminderState;
  notBefore: Date;
  nextAt: Date | null;
  gmailThreadId: string | null;
  createdAt: Date;
}

export interface OccurrenceRow {
  reminderId: string;
  dueAt: Date;
  localTime: string;
  state: 'due' | 'sent' | 'skipped';
  emailMessageId: string | null;
  discordStartedAt: Date | null;
  discordMessageId: string | null;
  sentAt: Date | null;
  notes: string[];
}

type Row = {
  id: string;
  account_id: string;
  email: string;
  title: string;
  rrule: string;
  start_local: string;
  time_zone: string | null;
  account_time_zone: string | null;
  state: string;
  not_before: Date;
  next_at: Date | null;
  gmail_thread_id: string | null;
  created_at: Date;
};

const SELECT = `SELECT r.id, r.account_id, a.email, r.title, r.rrule, r.start_local, r.time_zone, a.time_zone AS account_time_zone,
  r.state, r.not_before, r.next_at, r.gmail_thread_id, r.created_at
  FROM reminders r JOIN accounts a ON a.id = r.account_id`;

/** `defaultZone`: the zone of an account that has none (DEFAULT_TIME_ZONE, docs/time.md). */
function reminderOf(r: Row, defaultZone: string): ReminderRow {
  return {
    id: r.id,
    accountId: r.account_id,
    accountEmail: r.email,
    title: r.title,
    rrule: r.rrule,
    startLocal: r.start_local,
    timeZone: r.time_zone,
    zone: r.time_zone ?? r.account_time_zone ?? defaultZone,
    state: r.state as ReminderState,
    notBefore: r.not_before,
    nextAt: r.next_at,
    gmailThreadId: r.gmail_thread_id,
    createdAt: r.created_at,
  };
}

export async function insertReminder(
  db: SqlExecutor,
  input: { accountId: string; title: string; recurrence: Recurrence; timeZone: string | null },
): Promise<string> {
  const id = uuid7();
  await db.query(
    `INSERT INTO reminders (id, account_id, title, rrule, start_local, time_zone, state, not_before, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'active', now(), now())`,
    [id, input.accountId, input.title, input.recurrence.rrule, input.recurrence.startLocal, input.timeZone],
  );
  return id;
}

export async function loadReminder(db: SqlExecutor, id: string, defaultZone = 'UTC'): Promise<ReminderRow | undefined> {
  // An id that is not ours (any text from the command line) simply finds nothing.
  const rows = await db.query<Row>(`${SELECT} WHERE r.id = $1`, [id]);
  return rows[0] ? reminderOf(rows[0], defaultZone) : undefined;
}

export async function listReminders(
  db: SqlExecutor,
  filter: { accountId?: string; includeEnded?: boolean } = {},
  defaultZone = 'UTC',
): Promise<ReminderRow[]> {
  const rows = await db.query<Row>(
    `${SELECT} WHERE ($1::text IS NULL OR r.account_id = $1) AND ($2 OR r.state IN ('active', 'paused')) ORDER BY r.created_at`,
    [filter.accountId ?? null, filter.includeEnded ?? false],
  );
  return rows.map((r) => reminderOf(r, defaultZone));
}

/**
 * The account's zone changed: its reminders without a zone of their own start over from now
 * (nothing before the change is delivered late in the new zone). Returns their ids.
 */
export async function restartRemindersFollowingAccountZone(db: SqlExecutor, accountId: string): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `UPDATE reminders SET not_before = now(), updated_at = now()
     WHERE account_id = $1 AND time_zone IS NULL AND state IN ('active', 'paused') RETURNING id`,
    [accountId],
  );
  return rows.map((r) => r.id);
}

/**
 * A state change. Resuming (and any change to when it fires) sets not_before to now: what fell
 * due while paused is not delivered late. Returns false when the reminder is gone or ended.
 */
export async function setReminderState(db: SqlExecutor, id: string, state: 'active' | 'paused' | 'removed'): Promise<boolean> {
  const rows = await db.query<{ id: string }>(
    `UPDATE reminders SET state = $2, updated_at = now(),
       not_before = CASE WHEN $2 = 'active' AND state <> 'active' THEN now() ELSE not_before END,
       next_at = CASE WHEN $2 = 'active' THEN next_at ELSE NULL END
     WHERE id = $1 AND state IN ('active', 'paused') RETURNING id`,
    [id, state],
  );
  return rows.length > 0;
}

export async function setNextAt(db: SqlExecutor, id: string, nextAt: Date | null): Promise<void> {
  // Only while active: a pause that came in meanwhile keeps it empty.
  await db.query(`UPDATE reminders SET next_at = $2 WHERE id = $1 AND state = 'active'`, [id, nextAt]);
}

export async function finishReminder(db: SqlExecutor, id: string): Promise<void> {
  await db.query(`UPDATE reminders SET state = 'finished', next_at = NULL, updated_at = now() WHERE id = $1 AND state = 'active'`, [id]);
}

export async function setReminderThread(db: SqlExecutor, id: string, gmailThreadId: string): Promise<void> {
  await db.query(`UPDATE reminders SET gmail_thread_id = $2 WHERE id = $1 AND gmail_thread_id IS NULL`, [id, gmailThreadId]);
}

// ---- occurrences ----------------------------------------------------------------------------

type OccurrenceDbRow = {
  reminder_id: string;
  due_at: Date;
  local_time: string;
  state: string;
  email_message_id: string | null;
  discord_started_at: Date | null;
  discord_message_id: string | null;
  sent_at: Date | null;
  notes: string[] | null;
};

function occurrenceOf(r: OccurrenceDbRow): OccurrenceRow {
  return {
    reminderId: r.reminder_id,
    dueAt: r.due_at,
    localTime: r.local_time,
    state: r.state as OccurrenceRow['state'],
    emailMessageId: r.email_message_id,
    discordStartedAt: r.discord_started_at,
    discordMessageId: r.discord_message_id,
    sentAt: r.sent_at,
    notes: r.notes ?? [],
  };
}

/** The occurrence's row, created as due if new (the idempotency key is reminder and due time). */
export async function openOccurrence(db: SqlExecutor, ref: { reminderId: string; dueAt: Date; localTime: string }): Promise<OccurrenceRow> {
  await db.query(
    `INSERT INTO reminder_occurrences (reminder_id, due_at, local_time, state) VALUES ($1, $2, $3, 'due') ON CONFLICT DO NOTHING`,
    [ref.reminderId, ref.dueAt, ref.localTime],
  );
  return (await loadOccurrence(db, ref.reminderId, ref.dueAt))!;
}

export async function loadOccurrence(db: SqlExecutor, reminderId: string, dueAt: Date): Promise<OccurrenceRow | undefined> {
  const rows = await db.query<OccurrenceDbRow>(`SELECT * FROM reminder_occurrences WHERE reminder_id = $1 AND due_at = $2`, [reminderId, dueAt]);
  return rows[0] ? occurrenceOf(rows[0]) : undefined;
}

/** The latest occurrence already delivered or skipped: planning never goes back before it. */
export async function lastHandledDueAt(db: SqlExecutor, reminderId: string): Promise<Date | undefined> {
  const rows = await db.query<{ due_at: Date | null }>(`SELECT max(due_at) AS due_at FROM reminder_occurrences WHERE reminder_id = $1 AND state IN ('sent', 'skipped')`, [reminderId]);
  return rows[0]?.due_at ?? undefined;
}

export async function listOccurrences(db: SqlExecutor, reminderId: string, limit = 20): Promise<OccurrenceRow[]> {
  const rows = await db.query<OccurrenceDbRow>(
    `SELECT * FROM reminder_occurrences WHERE reminder_id = $1 ORDER BY due_at DESC LIMIT $2`,
    [reminderId, limit],
  );
  return rows.map(occurrenceOf);
}

export async function saveOccurrenceEmail(db: SqlExecutor, reminderId: string, dueAt: Date, messageId: string): Promise<void> {
  await db.query(`UPDATE reminder_occurrences SET email_message_id = $3 WHERE reminder_id = $1 AND due_at = $2`, [reminderId, dueAt, messageId]);
}

/** Marks a Discord post as started; false when an earlier attempt had (it may have posted). */
export async function startDiscordPost(db: SqlExecutor, reminderId: string, dueAt: Date): Promise<boolean> {
  const rows = await db.query<{ reminder_id: string }>(
    `UPDATE reminder_occurrences SET discord_started_at = now() WHERE reminder_id = $1 AND due_at = $2 AND discord_started_at IS NULL RETURNING reminder_id`,
    [reminderId, dueAt],
  );
  return rows.length > 0;
}

/** A post that failed with an answer (nothing posted): the next attempt may post. */
export async function clearDiscordPost(db: SqlExecutor, reminderId: string, dueAt: Date): Promise<void> {
  await db.query(`UPDATE reminder_occurrences SET discord_started_at = NULL WHERE reminder_id = $1 AND due_at = $2 AND discord_message_id IS NULL`, [reminderId, dueAt]);
}

export async function saveOccurrenceDiscord(db: SqlExecutor, reminderId: string, dueAt: Date, messageId: string): Promise<void> {
  await db.query(`UPDATE reminder_occurrences SET discord_message_id = $3 WHERE reminder_id = $1 AND due_at = $2`, [reminderId, dueAt, messageId]);
}

export async function addOccurrenceNotes(db: SqlExecutor, reminderId: string, dueAt: Date, notes: string[]): Promise<void> {
  if (notes.length === 0) return;
  await db.query(`UPDATE reminder_occurrences SET notes = COALESCE(notes, '{}') || $3::text[] WHERE reminder_id = $1 AND due_at = $2`, [reminderId, dueAt, notes]);
}

export async function markSent(db: SqlExecutor, reminderId: string, dueAt: Date): Promise<void> {
  await db.query(
    `UPDATE reminder_occurrences SET state = 'sent', sent_at = COALESCE(sent_at, now()) WHERE reminder_id = $1 AND due_at = $2 AND state <> 'skipped'`,
    [reminderId, dueAt],
  );
}

export async function recordSkipped(db: SqlExecutor, ref: { reminderId: string; dueAt: Date; localTime: string }, why: string): Promise<void> {
  await db.query(
    `INSERT INTO reminder_occurrences (reminder_id, due_at, local_time, state, notes) VALUES ($1, $2, $3, 'skipped', ARRAY[$4])
     ON CONFLICT (reminder_id, due_at) DO UPDATE SET state = 'skipped', notes = COALESCE(reminder_occurrences.notes, '{}') || ARRAY[$4]
       WHERE reminder_occurrences.state = 'due' AND reminder_occurrences.email_message_id IS NULL AND reminder_occurrences.discord_started_at IS NULL`,
    [ref.reminderId, ref.dueAt, ref.localTime, why],
  );
}
