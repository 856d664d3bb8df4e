// An account's time settings: its zone, what "morning" and "evening" mean, which days are its weekend.
import { canonicalZone, TimeSpecError } from './local-time.js';

export interface TimeSettings {
  /** IANA zone name, e.g. "Europe/Berlin"; "UTC" when the account has none. */
  zone: string;
  /** The hour "tomorrow", "next week", "monday" and a bare date mean (0–23). */
  morningHour: number;
  /** The hour "this evening" / "tonight" mean (0–23). */
  eveningHour: number;
  /** ISO weekday numbers (1 = Monday … 7 = Sunday) business days skip; default [6, 7]. */
  weekend: number[];
}

export const DEFAULT_TIME_SETTINGS: TimeSettings = { zone: 'UTC', morningHour: 8, eveningHour: 18, weekend: [6, 7] };

/** The settings, or a TimeSpecError naming what is wrong with them. */
export function checkTimeSettings(settings: TimeSettings): TimeSettings {
  if (!canonicalZone(settings.zone))
    throw new TimeSpecError(`unknown time zone ${JSON.stringify(settings.zone.slice(0, 64))}`);
  for (const [name, hour] of [
    ['morningHour', settings.morningHour],
    ['eveningHour', settings.eveningHour],
  ] as const) {
    if (!Number.isInteger(hour) || hour < 0 || hour > 23)
      throw new TimeSpecError(`${name}: expected an hour 0–23 (got ${hour})`);
  }
  if (!settings.weekend.every((d) => Number.isInteger(d) && d >= 1 && d <= 7)) {
    throw new TimeSpecError(
      `weekend: expected ISO weekday numbers 1 (Monday) to 7 (Sunday) (got ${settings.weekend.join(',')})`,
    );
  }
  if (new Set(settings.weekend).size >= 7)
    throw new TimeSpecError('weekend: at least one day of the week must be a business day');
  return settings;
}

/** The configuration's defaults for every account (src/config/env.ts: MORNING_HOUR, EVENING_HOUR, WEEKEND_DAYS, DEFAULT_TIME_ZONE). */
export interface TimeDefaults {
  DEFAULT_TIME_ZONE: string;
  MORNING_HOUR: number;
  EVENING_HOUR: number;
  WEEKEND_DAYS: number[];
}

/**
 * An account's time settings: its own zone (accounts.time_zone) when set and known, else the
 * configured default (UTC unless DEFAULT_TIME_ZONE says otherwise); hours and weekend from the configuration.
 */
export function timeSettingsOf(account: { timeZone: string | null }, cfg: TimeDefaults): TimeSettings {
  const zone = (account.timeZone && canonicalZone(account.timeZone)) || canonicalZone(cfg.DEFAULT_TIME_ZONE) || 'UTC';
  return checkTimeSettings({
    zone,
    morningHour: cfg.MORNING_HOUR,
    eveningHour: cfg.EVENING_HOUR,
    weekend: [...cfg.WEEKEND_DAYS],
  });
}
