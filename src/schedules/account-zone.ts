// The time zone an account's schedules follow unless they name their own: the account's
// (accounts.time_zone, `accounts timezone`), else DEFAULT_TIME_ZONE (as timeSettingsOf reads it).
import type { SqlExecutor } from '../db/sql-executor.js';
import { canonicalZone } from '../time/index.js';

export async function accountTimeZone(db: SqlExecutor, accountId: string, defaultZone = 'UTC'): Promise<string> {
  const [row] = await db.query<{ time_zone: string | null }>(`SELECT time_zone FROM accounts WHERE id = $1`, [accountId]);
  return (row?.time_zone && canonicalZone(row.time_zone)) || canonicalZone(defaultZone) || 'UTC';
}
