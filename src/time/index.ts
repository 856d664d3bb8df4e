// The time module (docs/time.md): an account's zone and settings, "when" specs, business days,
// daylight-saving rules. Pure and free of Node built-ins.
export {
  TimeSpecError,
  isValidZone,
  canonicalZone,
  describeLocal,
  inZone,
  momentAt,
  momentsAt,
  type LocalDateTime,
} from './local-time.js';
export {
  DEFAULT_TIME_SETTINGS,
  checkTimeSettings,
  timeSettingsOf,
  type TimeSettings,
  type TimeDefaults,
} from './settings.js';
export { isoWeekOf, parseWeeklyTime, weeklyTimeIn, type WeeklyTime } from './iso-week.js';
export { addBusinessDays, isWeekend, MAX_BUSINESS_DAYS } from './business-days.js';
export { parseWhen, resolveWhen, MAX_AHEAD_DAYS, type WhenSpec } from './when.js';
export { MAX_WHEN_TEXT } from './phrases.js';
export {
  timerFromLabel,
  readTimerLabel,
  DEFAULT_TIMER_LABEL_PREFIXES,
  MAX_LABEL_NAME,
  type TimerKind,
  type TimerLabelPrefixes,
  type TimerFromLabel,
  type UnreadableTimerLabel,
} from './labels.js';
