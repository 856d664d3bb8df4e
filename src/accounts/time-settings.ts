// An account's time zone (accounts.time_zone) and the time settings activities compute with.
import type { PrismaClient } from '../db/client.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { canonicalZone, timeSettingsOf, TimeSpecError, type TimeDefaults, type TimeSettings } from '../time/index.js';

/** The account's time settings: its zone, else the configured default (UTC); null when there is no such account. */
export async function accountTimeSettings(
  prisma: PrismaClient,
  accountId: string,
  cfg: TimeDefaults,
): Promise<TimeSettings | null> {
  const row = await prisma.account.findUnique({ where: { id: accountId }, select: { timeZone: true } });
  return row ? timeSettingsOf(row, cfg) : null;
}

/** Sets the account's zone (canonical spelling) and returns it; an unknown zone is a TimeSpecError, nothing changed. */
export async function setAccountTimeZone(prisma: PrismaClient, accountId: string, zone: string): Promise<string> {
  const canonical = canonicalZone(zone.trim());
  if (!canonical)
    throw new TimeSpecError(
      `unknown time zone ${JSON.stringify(zone.slice(0, 64))}: expected an IANA name such as Europe/Berlin, America/New_York or UTC`,
    );
  await prisma.account.update({ where: { id: accountId }, data: { timeZone: canonical } });
  return canonical;
}

/**
 * The time zone an account's schedules follow unless they name their own: the account's
 * (accounts.time_zone, `accounts timezone`), else DEFAULT_TIME_ZONE (as timeSettingsOf reads it).
 */
export async function accountTimeZone(db: SqlExecutor, accountId: string, defaultZone = 'UTC'): Promise<string> {
  const [row] = await db.query<{ time_zone: string | null }>(`SELECT time_zone FROM accounts WHERE id = $1`, [accountId]);
  return (row?.time_zone && canonicalZone(row.time_zone)) || canonicalZone(defaultZone) || 'UTC';
}
