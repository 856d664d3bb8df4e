// Postgres side of backfill alerts: level changes journaled per (account, backfill, kind) in
// backfill_alerts, their delivery recorded on the row, the metadata estimate, and the current
// levels the health endpoint and the metrics read.
import { uuid7 } from '../db/uuid7.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import type { AlertKind, AlertLevel, Judgement } from './contracts.js';

export interface BackfillAlertRow {
  id: string;
  accountId: string;
  backfillId: string;
  kind: AlertKind;
  level: AlertLevel;
  detail: string;
  raisedAt: Date;
  deliveredAt: Date | null;
  discordMessageId: string | null;
  emailMessageId: string | null;
  emailSentAt: Date | null;
  deliveryNotes: string[];
}

type Row = {
  id: string;
  account_id: string;
  backfill_id: string;
  kind: string;
  level: string;
  detail: string;
  raised_at: Date;
  delivered_at: Date | null;
  discord_message_id: string | null;
  email_message_id: string | null;
  email_sent_at: Date | null;
  delivery_notes: string[] | null;
};

const COLUMNS = `id, account_id, backfill_id, kind, level, detail, raised_at, delivered_at, discord_message_id, email_message_id, email_sent_at, delivery_notes`;

function alertOf(r: Row): BackfillAlertRow {
  return {
    id: r.id,
    accountId: r.account_id,
    backfillId: r.backfill_id,
    kind: r.kind as AlertKind,
    level: r.level as AlertLevel,
    detail: r.detail,
    raisedAt: new Date(r.raised_at),
    deliveredAt: r.delivered_at ? new Date(r.delivered_at) : null,
    discordMessageId: r.discord_message_id,
    emailMessageId: r.email_message_id,
    emailSentAt: r.email_sent_at ? new Date(r.email_sent_at) : null,
    deliveryNotes: r.delivery_notes ?? [],
  };
}

/** The latest level of each kind for this backfill (kinds never raised are absent: ok). */
export async function alertLevels(db: SqlExecutor, accountId: string, backfillId: string): Promise<Partial<Record<AlertKind, AlertLevel>>> {
  const rows = await db.query<{ kind: string; level: string }>(
    `SELECT DISTINCT ON (kind) kind, level FROM backfill_alerts WHERE account_id = $1 AND backfill_id = $2 ORDER BY kind, raised_at DESC, id DESC`,
    [accountId, backfillId],
  );
  return Object.fromEntries(rows.map((r) => [r.kind, r.level])) as Partial<Record<AlertKind, AlertLevel>>;
}

/**
 * Journals each judgement whose level differs from the backfill's current one for that kind; a
 * return to ok needs no delivery. A retried call finds its rows and journals nothing again.
 */
export async function journalAlertLevels(
  db: SqlExecutor,
  input: { accountId: string; backfillId: string; judgements: Partial<Record<AlertKind, Judgement>> },
): Promise<BackfillAlertRow[]> {
  const current = await alertLevels(db, input.accountId, input.backfillId);
  const raised: BackfillAlertRow[] = [];
  for (const [kind, judgement] of Object.entries(input.judgements) as Array<[AlertKind, Judgement]>) {
    if (judgement.level === (current[kind] ?? 'ok')) continue;
    const [row] = await db.query<Row>(
      `INSERT INTO backfill_alerts (id, account_id, backfill_id, kind, level, detail, measured, raised_at, delivered_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, clock_timestamp(), CASE WHEN $5 = 'ok' THEN clock_timestamp() END)
       RETURNING ${COLUMNS}`,
      [uuid7(), input.accountId, input.backfillId, kind, judgement.level, judgement.detail, JSON.stringify(judgement.measured)],
    );
    raised.push(alertOf(row!));
  }
  return raised;
}

/** Alerts of this backfill whose delivery is still due, oldest first. */
export async function undeliveredAlerts(db: SqlExecutor, accountId: string, backfillId: string): Promise<BackfillAlertRow[]> {
  const rows = await db.query<Row>(
    `SELECT ${COLUMNS} FROM backfill_alerts WHERE account_id = $1 AND backfill_id = $2 AND delivered_at IS NULL ORDER BY raised_at, id`,
    [accountId, backfillId],
  );
  return rows.map(alertOf);
}

export async function loadAlert(db: SqlExecutor, id: string): Promise<BackfillAlertRow | null> {
  const [row] = await db.query<Row>(`SELECT ${COLUMNS} FROM backfill_alerts WHERE id = $1`, [id]);
  return row ? alertOf(row) : null;
}

export async function saveDiscordDelivery(db: SqlExecutor, id: string, messageId: string): Promise<void> {
  await db.query(`UPDATE backfill_alerts SET discord_message_id = $2 WHERE id = $1`, [id, messageId]);
}

export async function saveEmailDelivery(db: SqlExecutor, id: string, messageId: string): Promise<void> {
  await db.query(`UPDATE backfill_alerts SET email_message_id = $2, email_sent_at = clock_timestamp() WHERE id = $1`, [id, messageId]);
}

export async function finishDelivery(db: SqlExecutor, id: string, notes: string[]): Promise<void> {
  await db.query(`UPDATE backfill_alerts SET delivered_at = clock_timestamp(), delivery_notes = $2::text[] WHERE id = $1 AND delivered_at IS NULL`, [id, notes]);
}

/** When an email about this kind and level last went to the account (any backfill), if ever. */
export async function lastAlertEmail(db: SqlExecutor, accountId: string, kind: AlertKind, level: AlertLevel): Promise<Date | null> {
  const [row] = await db.query<{ at: Date | null }>(
    `SELECT max(email_sent_at) AS at FROM backfill_alerts WHERE account_id = $1 AND kind = $2 AND level = $3`,
    [accountId, kind, level],
  );
  return row?.at ? new Date(row.at) : null;
}

/** The account's backfill metadata as stored: its bad-message records and its progress row, in bytes. */
export async function storedMetadataBytes(db: SqlExecutor, accountId: string): Promise<number> {
  const [row] = await db.query<{ bytes: number | string | null }>(
    `SELECT (SELECT COALESCE(sum(pg_column_size(b.*)), 0) FROM bad_messages b WHERE b.account_id = $1)
          + (SELECT COALESCE(sum(pg_column_size(s.*)), 0) FROM backfill_state s WHERE s.account_id = $1) AS bytes`,
    [accountId],
  );
  return Number(row?.bytes ?? 0);
}

export interface CurrentAlert {
  accountId: string;
  email: string;
  kind: AlertKind;
  level: AlertLevel;
  detail: string;
  raisedAt: Date;
}

/** Each account's current level per kind, for its latest backfill (backfill_state.backfill_id). */
export async function currentBackfillAlerts(db: SqlExecutor): Promise<CurrentAlert[]> {
  const rows = await db.query<{ account_id: string; email: string; kind: string; level: string; detail: string; raised_at: Date }>(
    `SELECT DISTINCT ON (a.account_id, a.kind) a.account_id, acc.email, a.kind, a.level, a.detail, a.raised_at
     FROM backfill_alerts a
     JOIN backfill_state s ON s.account_id = a.account_id AND s.backfill_id = a.backfill_id
     JOIN accounts acc ON acc.id = a.account_id
     ORDER BY a.account_id, a.kind, a.raised_at DESC, a.id DESC`,
    [],
  );
  return rows.map((r) => ({
    accountId: r.account_id,
    email: r.email,
    kind: r.kind as AlertKind,
    level: r.level as AlertLevel,
    detail: r.detail,
    raisedAt: new Date(r.raised_at),
  }));
}
