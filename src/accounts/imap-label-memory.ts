// The IMAP label memory of one account in PostgreSQL (imap_label_memory): what the sync last knew of
// each message it follows, so that after a worker restart a keyword changed meanwhile is diffed
// against it (docs/imap.md "Changes"). One statement per read, per save and per first read of a message.
import type { LabelMemory, RememberedMessage } from '../imap/label-memory.js';
import type { SqlExecutor } from '../db/sql-executor.js';

interface Row extends Record<string, unknown> {
  uid: string;
  message_id: string;
  thread_id: string;
  labels: string[] | null;
  at_modseq: string;
  seen_by: string;
  before_labels: string[] | null;
  before_at: string | null;
  gone: boolean;
}

function rememberedOf(row: Row): RememberedMessage {
  return {
    id: row.message_id,
    threadId: row.thread_id,
    labels: row.labels ?? [],
    at: String(row.at_modseq),
    seenBy: row.seen_by === 'read' ? 'read' : 'changes',
    ...(row.before_at !== null ? { before: { labels: row.before_labels ?? [], at: String(row.before_at) } } : {}),
    ...(row.gone ? { gone: true } : {}),
  };
}

const NOTED_KEPT = 100_000;

export function postgresLabelMemory(sql: SqlExecutor, accountId: string): LabelMemory {
  /** Folders whose rows of another UIDVALIDITY (a reset mailbox) were dropped by this process. */
  const cleaned = new Set<string>();
  /** Read baselines this process has written (or found written): no second INSERT per read. */
  const noted = new Set<string>();
  const COLUMNS = 'uid::text, message_id, thread_id, labels, at_modseq::text, seen_by, before_labels, before_at::text, gone';

  async function dropOtherValidities(folder: string, uidValidity: string): Promise<void> {
    const key = `${uidValidity}:${folder}`;
    if (cleaned.has(key)) return;
    await sql.query('DELETE FROM imap_label_memory WHERE account_id = $1 AND folder = $2 AND uid_validity <> $3::bigint', [accountId, folder, uidValidity]);
    cleaned.add(key);
  }

  return {
    async load(folder, uidValidity, uids) {
      if (uids && uids.length === 0) return new Map();
      const rows = uids
        ? await sql.query<Row>(
            `SELECT ${COLUMNS} FROM imap_label_memory WHERE account_id = $1 AND folder = $2 AND uid_validity = $3::bigint AND uid = ANY($4::bigint[])`,
            [accountId, folder, uidValidity, uids.map(String)],
          )
        : await sql.query<Row>(`SELECT ${COLUMNS} FROM imap_label_memory WHERE account_id = $1 AND folder = $2 AND uid_validity = $3::bigint`, [accountId, folder, uidValidity]);
      return new Map(rows.map((row) => [Number(row.uid), rememberedOf(row)]));
    },

    async save(folder, uidValidity, seen, cursorModseq) {
      await dropOtherValidities(folder, uidValidity);
      await sql.query('DELETE FROM imap_label_memory WHERE account_id = $1 AND folder = $2 AND uid_validity = $3::bigint AND gone AND at_modseq <= $4::bigint', [
        accountId,
        folder,
        uidValidity,
        cursorModseq,
      ]);
      if (seen.size === 0) return;
      const entries = [...seen];
      // One row per UID: unnest of parallel arrays (labels travel as JSON, arrays of arrays being rectangular in Postgres).
      await sql.query(
        `INSERT INTO imap_label_memory AS m (account_id, folder, uid_validity, uid, message_id, thread_id, labels, at_modseq, seen_by, before_labels, before_at, gone, updated_at)
         SELECT $1, $2, $3::bigint, e.uid, e.message_id, e.thread_id,
                ARRAY(SELECT jsonb_array_elements_text(e.labels)), e.at_modseq, 'changes',
                ARRAY(SELECT jsonb_array_elements_text(coalesce(e.before_labels, '[]'::jsonb))), e.before_at, e.gone, CURRENT_TIMESTAMP
         FROM unnest($4::bigint[], $5::text[], $6::text[], $7::jsonb[], $8::bigint[], $9::jsonb[], $10::bigint[], $11::boolean[])
              AS e(uid, message_id, thread_id, labels, at_modseq, before_labels, before_at, gone)
         ON CONFLICT (account_id, folder, uid_validity, uid) DO UPDATE SET
           message_id = excluded.message_id, thread_id = excluded.thread_id, labels = excluded.labels, at_modseq = excluded.at_modseq,
           seen_by = excluded.seen_by, before_labels = excluded.before_labels, before_at = excluded.before_at, gone = excluded.gone, updated_at = excluded.updated_at`,
        [
          accountId,
          folder,
          uidValidity,
          entries.map(([uid]) => String(uid)),
          entries.map(([, m]) => m.id),
          entries.map(([, m]) => m.threadId),
          entries.map(([, m]) => JSON.stringify(m.labels)),
          entries.map(([, m]) => m.at),
          entries.map(([, m]) => (m.before ? JSON.stringify(m.before.labels) : null)),
          entries.map(([, m]) => m.before?.at ?? null),
          entries.map(([, m]) => m.gone === true),
        ],
      );
      for (const [uid] of entries) noted.add(`${uidValidity}:${folder}:${uid}`);
    },

    async noteRead(folder, uidValidity, uid, message) {
      const key = `${uidValidity}:${folder}:${uid}`;
      if (noted.has(key)) return;
      if (noted.size >= NOTED_KEPT) noted.clear();
      await sql.query(
        `INSERT INTO imap_label_memory (account_id, folder, uid_validity, uid, message_id, thread_id, labels, at_modseq, seen_by)
         VALUES ($1, $2, $3::bigint, $4::bigint, $5, $6, $7::text[], $8::bigint, 'read')
         ON CONFLICT (account_id, folder, uid_validity, uid) DO NOTHING`,
        [accountId, folder, uidValidity, String(uid), message.id, message.threadId, message.labels, message.at],
      );
      noted.add(key);
    },

    async noteBaselines(folder, uidValidity, baselines) {
      if (baselines.size === 0) return;
      await dropOtherValidities(folder, uidValidity);
      const entries = [...baselines];
      await sql.query(
        `INSERT INTO imap_label_memory (account_id, folder, uid_validity, uid, message_id, thread_id, labels, at_modseq, seen_by, updated_at)
         SELECT $1, $2, $3::bigint, e.uid, e.message_id, e.thread_id, ARRAY(SELECT jsonb_array_elements_text(e.labels)), e.at_modseq, 'changes', CURRENT_TIMESTAMP
         FROM unnest($4::bigint[], $5::text[], $6::text[], $7::jsonb[], $8::bigint[]) AS e(uid, message_id, thread_id, labels, at_modseq)
         ON CONFLICT (account_id, folder, uid_validity, uid) DO NOTHING`,
        [accountId, folder, uidValidity, entries.map(([uid]) => String(uid)), entries.map(([, m]) => m.id), entries.map(([, m]) => m.threadId), entries.map(([, m]) => JSON.stringify(m.labels)), entries.map(([, m]) => m.at)],
      );
    },
  };
}
