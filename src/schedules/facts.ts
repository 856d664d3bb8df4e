// What a brief or a digest is written from: the assistant's own records in Postgres (threads, the
// action journal), with each thread's subject and sender read from Gmail, and how the facts are put
// before the model (as data) and under its report (the links, whatever the model wrote).
import type { SqlExecutor } from '../db/sql-executor.js';
import { describeLocal, inZone } from '../time/index.js';

/** Items per section at most: a brief is read in a minute. */
export const SECTION_LIMIT = 20;


/** A thread to list: its id and why; subject and sender come from Gmail or the journal. */
export interface FactRef {
  threadId: string;
  detail: string;
  subject?: string;
  from?: string;
}

export interface FactSection {
  title: string;
  refs: FactRef[];
  note?: string;
}

const day = (d: Date) => d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

async function threadsIn(db: SqlExecutor, accountId: string, state: string): Promise<FactRef[]> {
  const rows = await db.query<{ gmail_thread_id: string; updated_at: Date }>(
    `SELECT gmail_thread_id, updated_at FROM threads WHERE account_id = $1 AND state = $2 AND closed_at IS NULL
     ORDER BY updated_at DESC LIMIT ${SECTION_LIMIT}`,
    [accountId, state],
  );
  return rows.map((r) => ({ threadId: r.gmail_thread_id, detail: `since ${day(r.updated_at)}` }));
}

/**
 * Threads awaiting the other side's answer whose follow-up has fired (labelled Follow Up): still
 * `awaiting_reply` with no follow-up pending after `now`. The date is the fired follow-up's.
 */
async function awaitingReplyPastDate(db: SqlExecutor, accountId: string, now: Date, zone: string): Promise<FactRef[]> {
  const rows = await db.query<{ gmail_thread_id: string; due: Date | null }>(
    `SELECT t.gmail_thread_id,
       (SELECT max(coalesce(a.scheduled_for, a.done_at)) FROM actions a
        WHERE a.account_id = t.account_id AND a.gmail_thread_id = t.gmail_thread_id AND a.kind = 'follow_up' AND a.state = 'done') AS due
     FROM threads t
     WHERE t.account_id = $1 AND t.state = 'awaiting_reply' AND t.closed_at IS NULL
       AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(t.wakes, '[]'::jsonb)) w
                       WHERE w->>'kind' = 'follow_up' AND (w->>'at')::bigint > $2)
     ORDER BY due NULLS LAST LIMIT ${SECTION_LIMIT}`,
    [accountId, now.getTime()],
  );
  return rows.map((r) => ({ threadId: r.gmail_thread_id, detail: r.due ? `no answer, follow-up was due ${describeLocal(r.due, zone)}` : 'no answer, follow-up due' }));
}

/** Snoozed threads whose snooze ends between now and the end of today in the account's zone. */
async function snoozedBackToday(db: SqlExecutor, accountId: string, now: Date, zone: string): Promise<FactRef[]> {
  const endOfDay = inZone(now, zone).endOf('day').toMillis();
  const rows = await db.query<{ gmail_thread_id: string; at: string }>(
    `SELECT t.gmail_thread_id, w->>'at' AS at
     FROM threads t, jsonb_array_elements(coalesce(t.wakes, '[]'::jsonb)) w
     WHERE t.account_id = $1 AND t.closed_at IS NULL AND w->>'kind' = 'snooze' AND (w->>'at')::bigint BETWEEN $2 AND $3
     ORDER BY (w->>'at')::bigint LIMIT ${SECTION_LIMIT}`,
    [accountId, now.getTime(), endOfDay],
  );
  return rows.map((r) => ({ threadId: r.gmail_thread_id, detail: `back at ${describeLocal(new Date(Number(r.at)), zone)}` }));
}

/** The brief's sections: what needs the user today ("today" in the account's zone). */
export async function briefSections(db: SqlExecutor, accountId: string, now: Date, zone: string): Promise<FactSection[]> {
  const approvals = await db.query<{ gmail_thread_id: string; kind: string; subject: string; sender: string; expires_at: Date | null }>(
    `SELECT gmail_thread_id, kind, subject, sender, expires_at FROM actions
     WHERE account_id = $1 AND state = 'awaiting_approval' ORDER BY expires_at NULLS LAST, created_at LIMIT ${SECTION_LIMIT}`,
    [accountId],
  );
  return [
    { title: 'Action Required', refs: await threadsIn(db, accountId, 'action_required') },
    {
      title: 'Approvals waiting',
      refs: approvals.map((a) => ({
        threadId: a.gmail_thread_id,
        subject: a.subject,
        from: a.sender,
        detail: `${a.kind.replace(/_/g, ' ')}${a.expires_at ? `, expires ${day(a.expires_at)}` : ''}`,
      })),
    },
    { title: 'Drafts waiting in Outbox', refs: await threadsIn(db, accountId, 'drafted') },
    { title: 'Awaiting a reply past their date', refs: await awaitingReplyPastDate(db, accountId, now, zone) },
    { title: 'Snoozed, coming back today', refs: await snoozedBackToday(db, accountId, now, zone) },
  ];
}

/** The digest's section: the newsletters archived since the last digest. */
export async function digestSections(db: SqlExecutor, accountId: string, since: Date): Promise<FactSection[]> {
  const rows = await db.query<{ gmail_thread_id: string; subject: string; sender: string; done_at: Date }>(
    `SELECT DISTINCT ON (a.gmail_thread_id) a.gmail_thread_id, a.subject, a.sender, a.done_at
     FROM actions a JOIN threads t ON t.account_id = a.account_id AND t.gmail_thread_id = a.gmail_thread_id
     WHERE a.account_id = $1 AND a.kind = 'archive' AND a.state = 'done' AND a.done_at >= $2 AND t.category = 'newsletter'
     ORDER BY a.gmail_thread_id, a.done_at DESC`,
    [accountId, since],
  );
  rows.sort((a, b) => a.done_at.getTime() - b.done_at.getTime());
  return [
    {
      title: 'Newsletters archived',
      refs: rows.slice(0, SECTION_LIMIT * 2).map((r) => ({ threadId: r.gmail_thread_id, subject: r.subject, from: r.sender, detail: `archived ${day(r.done_at)}` })),
    },
  ];
}

/** What the assistant did since: done actions by kind, and threads it handled. */
export async function doneSince(db: SqlExecutor, accountId: string, since: Date): Promise<Record<string, number>> {
  const rows = await db.query<{ kind: string; n: string }>(
    `SELECT kind, count(*)::text AS n FROM actions WHERE account_id = $1 AND state = 'done' AND done_at >= $2 GROUP BY kind ORDER BY kind`,
    [accountId, since],
  );
  const [threads] = await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM threads WHERE account_id = $1 AND created_at >= $2`, [accountId, since]);
  return { threads_handled: Number(threads?.n ?? 0), ...Object.fromEntries(rows.map((r) => [r.kind, Number(r.n)])) };
}

