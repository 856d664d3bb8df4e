// Why the product is degraded while Temporal and PostgreSQL both answer: each source is a small
// function returning its reasons (none when all is well). GET /healthz lists them all.
import type { SqlExecutor } from '../db/sql-executor.js';
import { currentBackfillAlerts } from '../backfill/alert-journal.js';
import { describePause } from '../llm/breaker.js';
import { listBreakers } from '../llm/breaker-store.js';

export interface DegradedReason {
  /** Stable, for alert rules: account_needs_reauth, push_silent, backfill_alert, ... */
  kind: string;
  message: string;
  accountId?: string;
  level?: 'warn' | 'critical';
}

export type ReasonSource = (db: SqlExecutor, now: Date) => Promise<DegradedReason[]>;

/** An account whose grant was revoked: its sync is paused until `accounts connect` runs again. */
export const accountsNeedingReauth: ReasonSource = async (db) => {
  const rows = await db.query<{ id: string; email: string }>(`SELECT id, email FROM accounts WHERE status = 'needs_reauth' ORDER BY email`, []);
  return rows.map((r) => ({
    kind: 'account_needs_reauth',
    accountId: r.id,
    level: 'critical',
    message: `${r.email} needs to be reconnected (npm run cli -- accounts connect --login-hint ${r.email}); its sync is paused`,
  }));
};

/**
 * An account with a live watch whose mailbox changed (found by the fallback poll or a scan) longer
 * than `silentAfterMs` after the last push: the push subscription is not delivering.
 */
export function pushSilent(silentAfterMs: number): ReasonSource {
  return async (db, now) => {
    const rows = await db.query<{ id: string; email: string; last_push_at: Date | null; last_history_at: Date }>(
      `SELECT id, email, last_push_at, last_history_at FROM accounts
       WHERE status = 'active' AND watch_expiration > $1 AND last_history_at IS NOT NULL
         AND last_history_at > COALESCE(last_push_at, '-infinity'::timestamptz) + make_interval(secs => $2::float8 / 1000)
       ORDER BY email`,
      [now, silentAfterMs],
    );
    return rows.map((r) => ({
      kind: 'push_silent',
      accountId: r.id,
      level: 'warn',
      message:
        `${r.email}: mail arrived (last change ${new Date(r.last_history_at).toISOString()}) but no Gmail push ` +
        `${r.last_push_at ? `since ${new Date(r.last_push_at).toISOString()}` : 'ever'}, longer than the poll interval; ` +
        'mail comes in through the fallback poll only: check the Pub/Sub push subscription',
    }));
  };
}

/** The current backfill's alerts at warn or critical. */
export const backfillAlerts: ReasonSource = async (db) =>
  (await currentBackfillAlerts(db))
    .filter((a) => a.level !== 'ok')
    .map((a) => ({
      kind: 'backfill_alert',
      accountId: a.accountId,
      level: a.level as 'warn' | 'critical',
      message: `${a.email}: backfill ${a.kind.replace('_', '-')} ${a.level}: ${a.detail}`,
    }));

/** An account whose LLM work is paused (its breaker is open): mail the rules decide keeps flowing. */
export const llmPaused: ReasonSource = async (db) =>
  (await listBreakers(db, { openOnly: true })).map((b) => ({
    kind: 'llm_paused',
    accountId: b.accountId,
    // An outage or a spent budget ends by itself; a refused key or credits need a person.
    level: b.reason === 'auth' || b.reason === 'credits' || b.reason === 'model' ? 'critical' : 'warn',
    message: `LLM paused for ${b.email} (${b.reason}): ${describePause(b, b.email)}`,
  }));

export function defaultReasonSources(settings: { pushSilentAfterMs: number }): ReasonSource[] {
  return [accountsNeedingReauth, pushSilent(settings.pushSilentAfterMs), backfillAlerts, llmPaused];
}
