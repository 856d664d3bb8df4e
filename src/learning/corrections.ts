// Corrections of triage the thread sees in the mailbox (table learning_corrections): a thread the
// assistant archived that the user moved back to the inbox, a label it added that the user removed,
// a label the user added that it did not. Gmail's history does not say who changed a label, so the
// journal decides: only a change against an action a rule, the LLM or an agent did (and that is
// still done: our own undo is not a correction) counts, and a label added counts only when no action
// of ours on the thread names it. One row per corrected action (per thread and label for an added
// label), so the several messages of one moved thread, or a redelivered change, count once.
import type { SqlExecutor } from '../db/sql-executor.js';
import type { CorrectionSource, RecordedCorrection, SeenLabelChange } from './activity-contracts.js';

const FROM_OUR_ACTIONS = `
INSERT INTO learning_corrections (account_id, gmail_thread_id, key, change_id, source, kind, argument, action_id, sender, subject, category)
SELECT a.account_id, a.gmail_thread_id, s.source || ':' || a.id, $3, s.source, a.kind, a.argument, a.id, a.sender, a.subject, t.category
FROM actions a
  CROSS JOIN LATERAL (SELECT CASE a.kind WHEN 'archive' THEN 'moved_back' ELSE 'label_removed' END AS source) s
  LEFT JOIN threads t ON t.account_id = a.account_id AND t.gmail_thread_id = a.gmail_thread_id
WHERE a.account_id = $1 AND a.gmail_thread_id = $2 AND a.state = 'done' AND a.sender <> ''
  AND a.reason->>'source' IN ('rule', 'llm', 'agent')
  AND ((a.kind = 'archive' AND $4::boolean) OR (a.kind = 'add_label' AND lower(a.argument) = ANY($5::text[])))
ON CONFLICT (account_id, key) DO NOTHING
RETURNING source, kind, argument`;

// The sender and subject of a thread are the journal's (every action row carries them).
const ADDED_BY_USER = `
WITH who AS (
  SELECT a.sender, a.subject FROM actions a
  WHERE a.account_id = $1 AND a.gmail_thread_id = $2 AND a.sender <> '' ORDER BY a.created_at DESC LIMIT 1),
labels AS (SELECT DISTINCT ON (lower(name)) name FROM unnest($4::text[]) AS name)
INSERT INTO learning_corrections (account_id, gmail_thread_id, key, change_id, source, kind, argument, action_id, sender, subject, category)
SELECT $1, $2, 'label_added:' || $2 || ':' || lower(l.name), $3, 'label_added', 'add_label', l.name, NULL, who.sender, who.subject,
  (SELECT t.category FROM threads t WHERE t.account_id = $1 AND t.gmail_thread_id = $2)
FROM labels l CROSS JOIN who
WHERE NOT EXISTS (
  SELECT 1 FROM actions a WHERE a.account_id = $1 AND a.gmail_thread_id = $2 AND lower(a.argument) = lower(l.name))
ON CONFLICT (account_id, key) DO NOTHING
RETURNING source, kind, argument`;

/**
 * Whether a label change of this thread could be a correction at all: both kinds need an action of
 * ours on the thread (the corrected one, or the sender's row). The sync asks before it starts a
 * learn-only run for a thread whose workflow has ended, so the user's labels on mail we never
 * handled start nothing.
 */
export async function mayHoldCorrections(db: SqlExecutor, accountId: string, threadId: string): Promise<boolean> {
  const [row] = await db.query<{ found: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM actions WHERE account_id = $1 AND gmail_thread_id = $2 AND sender <> '') AS found`,
    [accountId, threadId],
  );
  return row?.found === true;
}

/** Records the corrections a label change shows; returns the new ones (none when seen before). */
export async function recordCorrections(db: SqlExecutor, change: SeenLabelChange): Promise<RecordedCorrection[]> {
  const out: RecordedCorrection[] = [];
  const removed = change.labelsRemoved.map((l) => l.toLowerCase());
  if (change.inboxAdded || removed.length > 0) {
    out.push(...(await db.query<{ source: CorrectionSource; kind: string; argument: string | null }>(FROM_OUR_ACTIONS, [change.accountId, change.threadId, change.changeId, change.inboxAdded, removed])).map(rowOf));
  }
  if (change.labelsAdded.length > 0) {
    out.push(...(await db.query<{ source: CorrectionSource; kind: string; argument: string | null }>(ADDED_BY_USER, [change.accountId, change.threadId, change.changeId, [...change.labelsAdded]])).map(rowOf));
  }
  return out;
}

const rowOf = (r: { source: CorrectionSource; kind: string; argument: string | null }): RecordedCorrection => ({
  source: r.source,
  kind: r.kind,
  ...(r.argument !== null ? { argument: r.argument } : {}),
});
