// What a brief or a digest is written from: the assistant's own records in Postgres (threads, the
// action journal), with each thread's subject and sender read from Gmail, and how the facts are put
// before the model (as data) and under its report (the links, whatever the model wrote).
import type { SqlExecutor } from '../db/sql-executor.js';

/** Items per section at most: a brief is read in a minute. */
export const SECTION_LIMIT = 20;

export function gmailThreadLink(email: string, threadId: string): string {
  return `https://mail.google.com/mail/?authuser=${encodeURIComponent(email)}#all/${encodeURIComponent(threadId)}`;
}

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

/**
 * Where threads awaiting a reply past their date and snoozed threads coming back come from, once the
 * per-thread timers record them (issue #25). Until then each section says it is not tracked.
 */
export interface TimerFacts {
  awaitingReplyPastDate(db: SqlExecutor, accountId: string, now: Date): Promise<FactRef[] | null>;
  snoozedBackToday(db: SqlExecutor, accountId: string, now: Date): Promise<FactRef[] | null>;
}

export const NO_TIMER_FACTS: TimerFacts = {
  awaitingReplyPastDate: async () => null,
  snoozedBackToday: async () => null,
};

const day = (d: Date) => d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

async function threadsIn(db: SqlExecutor, accountId: string, state: string): Promise<FactRef[]> {
  const rows = await db.query<{ gmail_thread_id: string; updated_at: Date }>(
    `SELECT gmail_thread_id, updated_at FROM threads WHERE account_id = $1 AND state = $2 AND closed_at IS NULL
     ORDER BY updated_at DESC LIMIT ${SECTION_LIMIT}`,
    [accountId, state],
  );
  return rows.map((r) => ({ threadId: r.gmail_thread_id, detail: `since ${day(r.updated_at)}` }));
}

/** The brief's sections: what needs the user today. */
export async function briefSections(db: SqlExecutor, accountId: string, now: Date, timers: TimerFacts): Promise<FactSection[]> {
  const approvals = await db.query<{ gmail_thread_id: string; kind: string; subject: string; sender: string; expires_at: Date | null }>(
    `SELECT gmail_thread_id, kind, subject, sender, expires_at FROM actions
     WHERE account_id = $1 AND state = 'awaiting_approval' ORDER BY expires_at NULLS LAST, created_at LIMIT ${SECTION_LIMIT}`,
    [accountId],
  );
  const untracked = 'not tracked yet (per-thread timers)';
  const awaiting = await timers.awaitingReplyPastDate(db, accountId, now);
  const snoozed = await timers.snoozedBackToday(db, accountId, now);
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
    { title: 'Awaiting a reply past their date', refs: awaiting ?? [], ...(awaiting ? {} : { note: untracked }) },
    { title: 'Snoozed, coming back today', refs: snoozed ?? [], ...(snoozed ? {} : { note: untracked }) },
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

