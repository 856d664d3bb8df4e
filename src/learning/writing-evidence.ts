// What writing lessons are learned from (docs/learning.md): our draft beside what the user sent
// (edited or not), and the rework instructions the user typed into a draft. One row per sent draft
// or rework round (its key), kept LEARNING_EVIDENCE_DAYS, then deleted by retention: a lesson keeps
// only its provenance (thread, time, this row's id), never the mail text.
import { uuid7 } from '../db/uuid7.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { replyLines } from '../mail/reply-text.js';
import type { EvidenceInput } from './activity-contracts.js';

export interface LineDiff {
  added: string[];
  removed: string[];
  /** The sent reply's first line, when the user added it (a greeting). */
  opens?: string;
  /** The sent reply's last line, when the user added it (a sign-off). */
  closes?: string;
}

/** The lines the user added to and removed from our draft (a longest-common-subsequence line diff). */
export function lineDiff(draft: string, sent: string): LineDiff {
  const a = replyLines(draft);
  const b = replyLines(sent);
  // lcs[i][j]: the common subsequence of a[i..] and b[j..]
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  const diff: LineDiff = { added: [], removed: [] };
  let [i, j] = [0, 0];
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) [i, j] = [i + 1, j + 1];
    else if (j < b.length && (i === a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) diff.added.push(b[j++]!);
    else diff.removed.push(a[i++]!);
  }
  if (b.length > 0 && !a.includes(b[0]!)) diff.opens = b[0]!;
  if (b.length > 1 && !a.includes(b.at(-1)!)) diff.closes = b.at(-1)!;
  return diff;
}

/** Records one piece of evidence; idempotent by key. Returns whether it was new. */
export async function recordEvidence(db: SqlExecutor, e: EvidenceInput): Promise<boolean> {
  const diff = e.source === 'sent' ? lineDiff(e.draft, e.final) : { added: [], removed: [] };
  const edited = e.source === 'rework' || diff.added.length + diff.removed.length > 0;
  const rows = await db.query<{ id: string }>(
    `INSERT INTO writing_evidence (id, account_id, gmail_thread_id, source, key, sender, subject, draft, final, edited, diff)
     SELECT $1, $2, $3, $4, $5, COALESCE(a.sender, ''), COALESCE(a.subject, ''), $6, $7, $8, $9::jsonb
     FROM (SELECT 1) one LEFT JOIN actions a ON a.key = $10
     ON CONFLICT (key) DO NOTHING RETURNING id`,
    [uuid7(), e.accountId, e.threadId, e.source, e.key, e.draft, e.final, edited, JSON.stringify(diff), e.draftKey],
  );
  return rows.length > 0;
}

export interface WritingEvidence {
  id: string;
  threadId: string;
  source: 'sent' | 'rework';
  sender: string;
  subject: string;
  draft: string;
  final: string;
  edited: boolean;
  diff: LineDiff;
  learned: boolean;
  at: Date;
}

type Row = Pick<WritingEvidence, 'id' | 'source' | 'sender' | 'subject' | 'draft' | 'final' | 'edited'> & {
  gmail_thread_id: string;
  diff: Partial<LineDiff> | null;
  learned_at: Date | null;
  created_at: Date;
};

const evidenceOf = (r: Row): WritingEvidence => ({
  id: r.id,
  threadId: r.gmail_thread_id,
  source: r.source,
  sender: r.sender,
  subject: r.subject,
  draft: r.draft,
  final: r.final,
  edited: r.edited,
  diff: { ...r.diff, added: r.diff?.added ?? [], removed: r.diff?.removed ?? [] },
  learned: r.learned_at !== null,
  at: r.created_at,
});

const EVIDENCE_SELECT = `SELECT id, gmail_thread_id, source, sender, subject, draft, final, edited, diff, learned_at, created_at FROM writing_evidence`;

/** The account's evidence, oldest first (all of it is within the bound: retention deletes the rest). */
export async function loadEvidence(db: SqlExecutor, accountId: string): Promise<WritingEvidence[]> {
  const rows = await db.query<Row>(`${EVIDENCE_SELECT} WHERE account_id = $1 ORDER BY created_at, id`, [accountId]);
  return rows.map(evidenceOf);
}

/** The evidence rows a lesson names that are still kept (the others were deleted after their days). */
export async function evidenceByIds(db: SqlExecutor, ids: string[]): Promise<Map<string, WritingEvidence>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<Row>(`${EVIDENCE_SELECT} WHERE id = ANY($1::text[])`, [ids]);
  return new Map(rows.map((r) => [r.id, evidenceOf(r)]));
}

/** Accounts (still there) with edits no derivation has read yet. */
export async function accountsWithNewEvidence(db: SqlExecutor, only?: string[]): Promise<string[]> {
  const rows = await db.query<{ account_id: string }>(
    `SELECT DISTINCT e.account_id FROM writing_evidence e JOIN accounts a ON a.id = e.account_id
     WHERE e.learned_at IS NULL AND e.edited AND ($1::text[] IS NULL OR e.account_id = ANY($1::text[])) ORDER BY e.account_id`,
    [only ?? null],
  );
  return rows.map((r) => r.account_id);
}

/** The evidence a derivation read is marked, so the next one runs only when there is more. */
export async function markLearned(db: SqlExecutor, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query(`UPDATE writing_evidence SET learned_at = clock_timestamp() WHERE id = ANY($1::text[]) AND learned_at IS NULL`, [ids]);
}
