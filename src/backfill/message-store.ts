// Postgres side of the backfill: idempotent message upserts (one statement per chunk; the rows are
// src/db/message-rows.ts's), the bad message registry, the per-account watermark, and the
// archiver's selection. Raw SQL through the SqlExecutor the quota limiter uses too (a Prisma client
// or a pg pool).
import type { SqlExecutor } from '../db/sql-executor.js';
import type { MessageRow } from '../db/message-rows.js';
import type { BackfillStoredState } from './activity-contracts.js';
import type { Granularity } from './contracts.js';

const UPSERT_SQL = `
INSERT INTO messages AS m (account_id, gmail_id, gmail_thread_id, rfc_message_id, label_ids, internal_date, headers, body_text, raw_size)
SELECT $1, x.gmail_id, x.thread_id, x.rfc_message_id,
       ARRAY(SELECT jsonb_array_elements_text(x.label_ids)),
       to_timestamp(x.internal_date / 1000.0), x.headers, x.body_text, x.raw_size
FROM jsonb_to_recordset($2::jsonb) AS x(gmail_id text, thread_id text, rfc_message_id text, label_ids jsonb,
                                        internal_date float8, headers jsonb, body_text text, raw_size int)
ON CONFLICT (account_id, gmail_id) DO UPDATE SET
  gmail_thread_id = EXCLUDED.gmail_thread_id,
  rfc_message_id = EXCLUDED.rfc_message_id,
  label_ids = CASE WHEN m.archived_at IS NULL THEN EXCLUDED.label_ids ELSE m.label_ids END,
  internal_date = EXCLUDED.internal_date,
  headers = EXCLUDED.headers,
  body_text = EXCLUDED.body_text,
  raw_size = EXCLUDED.raw_size,
  writes = m.writes + 1,
  updated_at = now()
RETURNING (xmax = 0 OR m.writes = 1) AS inserted`;

/**
 * Upserts the rows in one statement; returns how many were new to the backfill (a row the live path
 * stored first, writes 0, is the backfill's first write of it: src/sync/message-rows.ts).
 */
export async function upsertMessages(db: SqlExecutor, accountId: string, rows: MessageRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await db.query<{ inserted: boolean }>(UPSERT_SQL, [accountId, JSON.stringify(rows)]);
  return result.filter((r) => r.inserted).length;
}

export async function recordBadMessage(db: SqlExecutor, accountId: string, gmailId: string, reason: string): Promise<void> {
  await db.query(
    `INSERT INTO bad_messages AS b (account_id, gmail_id, reason) VALUES ($1, $2, $3)
     ON CONFLICT (account_id, gmail_id) DO UPDATE SET reason = EXCLUDED.reason, last_tried = now(), tries = b.tries + 1`,
    [accountId, gmailId, reason.slice(0, 2000)],
  );
}

const ms = (v: unknown): number | null => (v == null ? null : new Date(v as string | Date).getTime());

export async function loadBackfillState(db: SqlExecutor, accountId: string): Promise<BackfillStoredState> {
  const [row] = await db.query<{ watermark: Date | null; range_start: Date | null; range_end: Date | null; granularity: string | null }>(
    `SELECT watermark, range_start, range_end, granularity FROM backfill_state WHERE account_id = $1`,
    [accountId],
  );
  return {
    watermark: ms(row?.watermark),
    rangeStart: ms(row?.range_start),
    rangeEnd: ms(row?.range_end),
    granularity: (row?.granularity as Granularity | null) ?? null,
  };
}

export async function saveBackfillRange(
  db: SqlExecutor,
  accountId: string,
  backfillId: string,
  rangeStart: number,
  rangeEnd: number,
  granularity: Granularity,
): Promise<void> {
  await db.query(
    `INSERT INTO backfill_state (account_id, range_start, range_end, granularity, backfill_id)
     VALUES ($1, to_timestamp($2::float8 / 1000.0), to_timestamp($3::float8 / 1000.0), $4, $5)
     ON CONFLICT (account_id) DO UPDATE SET range_start = EXCLUDED.range_start, range_end = EXCLUDED.range_end,
       granularity = EXCLUDED.granularity, backfill_id = EXCLUDED.backfill_id, updated_at = now()`,
    [accountId, rangeStart, rangeEnd, granularity, backfillId],
  );
}

/** Moves the watermark forward only; returns the stored value. */
export async function commitWatermark(db: SqlExecutor, accountId: string, watermark: number): Promise<number> {
  const [row] = await db.query<{ watermark: Date }>(
    `INSERT INTO backfill_state AS s (account_id, watermark) VALUES ($1, to_timestamp($2::float8 / 1000.0))
     ON CONFLICT (account_id) DO UPDATE SET watermark = GREATEST(COALESCE(s.watermark, EXCLUDED.watermark), EXCLUDED.watermark), updated_at = now()
     RETURNING watermark`,
    [accountId, watermark],
  );
  return ms(row?.watermark) ?? watermark;
}

/**
 * Up to `limit` stored inbox messages strictly before the account's watermark, not yet archived,
 * with gmail id > afterId, in id order. Nothing without a watermark.
 */
export async function selectArchivable(db: SqlExecutor, accountId: string, afterId: string, limit: number): Promise<{ ids: string[]; watermark: number | null }> {
  const [state] = await db.query<{ watermark: Date | null }>(`SELECT watermark FROM backfill_state WHERE account_id = $1`, [accountId]);
  const watermark = ms(state?.watermark);
  if (watermark === null) return { ids: [], watermark };
  const rows = await db.query<{ gmail_id: string }>(
    `SELECT gmail_id FROM messages
     WHERE account_id = $1 AND internal_date < to_timestamp($2::float8 / 1000.0) AND archived_at IS NULL
       AND 'INBOX' = ANY(label_ids) AND gmail_id > $3
     ORDER BY gmail_id LIMIT $4`,
    [accountId, watermark, afterId, limit],
  );
  return { ids: rows.map((r) => r.gmail_id), watermark };
}

export async function markArchived(db: SqlExecutor, accountId: string, ids: string[], trashed: boolean): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `UPDATE messages SET archived_at = now(), updated_at = now(),
       label_ids = CASE WHEN $3::boolean THEN array_append(array_remove(label_ids, 'INBOX'), 'TRASH') ELSE array_remove(label_ids, 'INBOX') END
     WHERE account_id = $1 AND gmail_id = ANY(SELECT jsonb_array_elements_text($2::jsonb))`,
    [accountId, JSON.stringify(ids), trashed],
  );
}

export async function archiverAccountIds(db: SqlExecutor): Promise<string[]> {
  const rows = await db.query<{ account_id: string }>(
    `SELECT s.account_id FROM backfill_state s JOIN accounts a ON a.id = s.account_id
     WHERE s.watermark IS NOT NULL AND a.status = 'active' ORDER BY s.account_id`,
    [],
  );
  return rows.map((r) => r.account_id);
}
