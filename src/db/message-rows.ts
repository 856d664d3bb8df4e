// The `messages` rows: a message as the backfill stores it (headers, labels, dates, body text), and
// the live path's writes (docs/cleanup.md "Senders at a glance"): the backfill stores the mail that
// was there before; each message a thread reads after that is stored the same way, and the label
// changes the sync reads in the mailbox's changes keep its labels (UNREAD among them) current.
// Idempotent statements, one per call.
import type { SqlExecutor } from './sql-executor.js';
import type { HistoryRecord, ThreadMessage } from '../mail/message.js';

export interface MessageRow {
  gmail_id: string;
  thread_id: string;
  rfc_message_id: string | null;
  label_ids: string[];
  internal_date: number;
  headers: Record<string, string>;
  body_text: string;
  raw_size: number;
}

// PostgreSQL text cannot hold NUL; a stray one must not make a message unstorable.
const NUL = String.fromCharCode(0);
const clean = (s: string) => (s.includes(NUL) ? s.split(NUL).join('\uFFFD') : s);

/**
 * The row for a message fetched with format full (or metadata). raw_size is Gmail's sizeEstimate;
 * without one, the message's size as reassembled: headers, body text and the sizes Gmail reports
 * for attachments.
 */
export function toMessageRow(m: ThreadMessage): MessageRow {
  const headers: Record<string, string> = {};
  let size = 2;
  for (const [name, value] of Object.entries(m.headers)) {
    headers[clean(name)] = clean(value);
    size += Buffer.byteLength(name) + Buffer.byteLength(value) + 4;
  }
  size += Buffer.byteLength(m.body) + m.attachments.reduce((sum, a) => sum + a.size, 0);
  return {
    gmail_id: m.id,
    thread_id: m.threadId,
    rfc_message_id: m.messageId ? clean(m.messageId) : null,
    label_ids: m.labelIds,
    internal_date: m.internalDate,
    headers,
    body_text: clean(m.body),
    raw_size: m.sizeEstimate ?? size,
  };
}


// writes 0: stored by the live path; the backfill's own upsert of the row counts its writes from 1.
// A row that is there keeps what it has but its labels (a message's headers and date never change).
const STORE_SQL = `
INSERT INTO messages AS m (account_id, gmail_id, gmail_thread_id, rfc_message_id, label_ids, internal_date, headers, body_text, raw_size, writes)
SELECT $1, x.gmail_id, x.thread_id, x.rfc_message_id,
       ARRAY(SELECT jsonb_array_elements_text(x.label_ids)),
       to_timestamp(x.internal_date / 1000.0), x.headers, x.body_text, x.raw_size, 0
FROM jsonb_to_recordset($2::jsonb) AS x(gmail_id text, thread_id text, rfc_message_id text, label_ids jsonb,
                                        internal_date float8, headers jsonb, body_text text, raw_size int)
ON CONFLICT (account_id, gmail_id) DO UPDATE SET label_ids = EXCLUDED.label_ids, updated_at = now()
WHERE m.archived_at IS NULL AND m.label_ids IS DISTINCT FROM EXCLUDED.label_ids`;

/** Stores the messages a thread read (drafts left out); the labels of those stored already brought up to date. */
export async function storeReadMessages(db: SqlExecutor, accountId: string, messages: readonly ThreadMessage[]): Promise<void> {
  const rows = messages.filter((m) => !m.isDraft).map(toMessageRow);
  if (rows.length === 0) return;
  await db.query(STORE_SQL, [accountId, JSON.stringify(rows)]);
}

/**
 * The labels each message has after the changes of a page (a record's message carries its labels
 * just after the change; the last one of the page wins), on the rows stored already. Messages not
 * stored are left to their thread or the backfill.
 */
export async function recordLabelChanges(db: SqlExecutor, accountId: string, records: readonly HistoryRecord[]): Promise<void> {
  const latest = new Map<string, string[]>();
  for (const record of records) {
    for (const change of [...record.labelsAdded, ...record.labelsRemoved]) latest.set(change.message.id, change.message.labelIds);
  }
  await storeLabels(db, accountId, [...latest].map(([gmail_id, label_ids]) => ({ gmail_id, label_ids })));
}

export type StoredLabels = {
  gmail_id: string;
  label_ids: string[];
};

/** The labels of stored messages as the mailbox has them now, on the rows stored already (one statement). */
export async function storeLabels(db: SqlExecutor, accountId: string, rows: readonly StoredLabels[]): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await db.query(
    `UPDATE messages AS m SET label_ids = ARRAY(SELECT jsonb_array_elements_text(x.label_ids)), updated_at = now()
     FROM jsonb_to_recordset($2::jsonb) AS x(gmail_id text, label_ids jsonb)
     WHERE m.account_id = $1 AND m.gmail_id = x.gmail_id AND m.archived_at IS NULL
       AND m.label_ids IS DISTINCT FROM ARRAY(SELECT jsonb_array_elements_text(x.label_ids))
     RETURNING m.gmail_id`,
    [accountId, JSON.stringify(rows)],
  );
  return result.length;
}

/** The stored received messages (drafts left out) of the account received at or after `sinceMs`, with their labels. */
export async function storedLabelsSince(db: SqlExecutor, accountId: string, sinceMs: number): Promise<StoredLabels[]> {
  return db.query<StoredLabels>(
    `SELECT gmail_id, label_ids FROM messages
     WHERE account_id = $1 AND internal_date >= to_timestamp($2::float8 / 1000.0) AND archived_at IS NULL AND NOT ('DRAFT' = ANY(label_ids))`,
    [accountId, sinceMs],
  );
}

/**
 * What a rescan (docs/cleanup.md "Senders at a glance") reads again: the stored messages whose INBOX
 * or UNREAD is not what the mailbox's listings of the window say (the user archived, read or
 * trashed them while their changes were out of our sight). `listed`: every message of the window in
 * the inbox, and every unread one anywhere. A listing that says too little only costs a reading.
 */
export function labelsToRead(rows: readonly StoredLabels[], listed: { inbox: ReadonlySet<string>; unread: ReadonlySet<string> }): string[] {
  return rows
    .filter((r) => r.label_ids.includes('INBOX') !== listed.inbox.has(r.gmail_id) || r.label_ids.includes('UNREAD') !== listed.unread.has(r.gmail_id))
    .map((r) => r.gmail_id);
}
