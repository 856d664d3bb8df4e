// The time zone an account's schedules follow unless they name their own. Until accounts carry a
// zone (accounts.time_zone, branch `time`), every account is on UTC.
import type { SqlExecutor } from '../db/sql-executor.js';

export async function accountTimeZone(_db: SqlExecutor, _accountId: string): Promise<string> {
  return 'UTC';
}
