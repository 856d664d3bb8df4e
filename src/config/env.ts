// Every setting durable-inbox reads from the environment, validated once at start-up.
// A wrong value stops the process with one line naming the variable and what it expects.
import { msToNumber, type Duration } from '@temporalio/common';
import { z } from 'zod';
import { ConfigError } from '../shared/config-error.js';
import { setLogLevel } from '../shared/log.js';
import { resolveTemporalProfileVars } from '../temporal/connection.js';
import { canonicalZone } from '../time/local-time.js';
import { parseWeeklyTime } from '../time/iso-week.js';
import { PriceOverridesSchema } from '../llm/prices.js';

const port = z.coerce.number().int().min(0).max(65535);
const url = z.url();
/** A duration as Temporal reads it ("15 minutes", "1h", "90s"). */
const duration = z.string().refine((v) => {
  try {
    return msToNumber(v as Duration) > 0;
  } catch {
    return false;
  }
}, 'expected a duration such as "15 minutes"');
/**
 * Every "how long" setting: a duration as Temporal reads it ("30 seconds", "72h", "90 days"), in
 * milliseconds once read. A bare number is refused: its unit would be a guess.
 */
const howLong = (opts: { zero?: boolean } = {}) =>
  z.string().transform((v, ctx) => {
    let ms: number;
    try {
      ms = /^\s*\d+(\.\d+)?\s*$/.test(v) ? NaN : msToNumber(v as Duration);
    } catch {
      ms = NaN;
    }
    if (!Number.isFinite(ms) || ms < 0 || (ms === 0 && !opts.zero)) {
      ctx.addIssue({ code: 'custom', message: `expected a duration with its unit, such as "30 seconds" or "72h"${opts.zero ? ' (0s: none)' : ''}` });
      return z.NEVER;
    }
    return ms;
  });
export const DAY_MS = 24 * 3600_000;
const hour = z.coerce.number().int().min(0).max(23);
/** The first part of a nested Gmail label ("Snooze" of "Snooze/Tomorrow"): the label's own name, without the "/". */
const labelPrefix = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .refine((v) => !v.endsWith('/'), 'expected a label name without a trailing "/", such as Snooze');
/** ISO weekday numbers, comma-separated ("6,7" = Saturday and Sunday); "none" for a seven-day week. */
const weekdays = z.string().transform((v, ctx) => {
  if (v.trim().toLowerCase() === 'none') return [];
  const days = v.split(',').map((d) => d.trim());
  if (!days.every((d) => /^[1-7]$/.test(d)) || new Set(days).size === 7) {
    ctx.addIssue({ code: 'custom', message: 'expected ISO weekday numbers 1 (Monday) to 7 (Sunday), comma-separated, such as "6,7" (or "none"), not all seven' });
    return z.NEVER;
  }
  return [...new Set(days.map(Number))];
});
const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** AES-256 keys as `id:base64key` pairs separated by commas; the first one encrypts, all decrypt. */
const encryptionKeys = z
  .string()
  .transform((raw, ctx) => {
    const keys: { id: string; key: Buffer }[] = [];
    for (const part of raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const sep = part.indexOf(':');
      const id = sep > 0 ? part.slice(0, sep) : '';
      const key = Buffer.from(sep > 0 ? part.slice(sep + 1) : '', 'base64');
      if (!id || key.length !== 32) {
        ctx.addIssue({ code: 'custom', message: 'expected comma-separated "keyId:base64" entries of 32-byte keys' });
        return z.NEVER;
      }
      keys.push({ id, key });
    }
    if (keys.length === 0) {
      ctx.addIssue({ code: 'custom', message: 'expected at least one "keyId:base64" key' });
      return z.NEVER;
    }
    return keys;
  })
  .optional();

export const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  /** dev mode: embedded defaults (dev server, dev keys, emulators) are allowed. */
  DURABLE_INBOX_MODE: z.enum(['dev', 'production']).default('dev'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  /** Where dev mode keeps the Temporal dev server's SQLite file (default <project>/.data). */
  DATA_DIR: z.string().min(1).optional(),

  /**
   * Where and how to reach Temporal, as the `temporal` CLI reads it (src/temporal/connection.ts): these
   * variables, else the profile TEMPORAL_PROFILE of the temporal.toml at TEMPORAL_CONFIG_FILE (default
   * ~/.config/temporalio/temporal.toml). An API key or any TLS setting turns TLS on; TEMPORAL_TLS=false turns it off.
   */
  TEMPORAL_ADDRESS: z.string().regex(/^[^:\s]+:\d+$/, 'expected host:port').default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_PROFILE: z.string().min(1).optional(),
  TEMPORAL_CONFIG_FILE: z.string().min(1).optional(),
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  TEMPORAL_TLS: z
    .enum(['true', 'false', '1', '0'])
    .transform((v) => v === 'true' || v === '1')
    .optional(),
  TEMPORAL_TLS_CLIENT_CERT_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_CLIENT_CERT_DATA: z.string().min(1).optional(),
  TEMPORAL_TLS_CLIENT_KEY_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_CLIENT_KEY_DATA: z.string().min(1).optional(),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: z.string().min(1).optional(),
  TEMPORAL_TLS_SERVER_CA_CERT_DATA: z.string().min(1).optional(),
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  TEMPORAL_UI_PORT: port.default(8233),
  TEMPORAL_CLI: z.string().min(1).optional(),
  /** The real Temporal server (`npm run temporal:server`): binaries instead of the cached build, and its database. */
  TEMPORAL_SERVER_BIN: z.string().min(1).optional(),
  TEMPORAL_SQL_TOOL_BIN: z.string().min(1).optional(),
  TEMPORAL_SCHEMA_DIR: z.string().min(1).optional(),
  TEMPORAL_UI_SERVER_BIN: z.string().min(1).optional(),
  TEMPORAL_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'expected a postgresql:// URL')
    .optional(),
  /** `npm run stack`: worker processes per role (workflow, gmail, llm). */
  STACK_WORKERS_PER_ROLE: z.coerce.number().int().positive().default(2),
  /** Task queues: workflows and Postgres activities, Gmail activities, LLM activities. */
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('durable-inbox'),
  GMAIL_TASK_QUEUE: z.string().min(1).default('durable-inbox-gmail'),
  LLM_TASK_QUEUE: z.string().min(1).default('durable-inbox-llm'),
  /** Workflow runs a workflow worker keeps in memory; a run outside it replays its history when it wakes (docs/performance.md). */
  WORKFLOW_CACHE_SIZE: z.coerce.number().int().min(0).default(1000),
  /** Activities per second a Gmail worker may start (all workers of the queue together). */
  GMAIL_ACTIVITIES_PER_SECOND: z.coerce.number().positive().optional(),
  LLM_ACTIVITIES_PER_SECOND: z.coerce.number().positive().optional(),

  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'expected a postgresql:// URL')
    .optional(),
  /** Connections each worker process keeps to PostgreSQL at most (several processes share the server's max_connections). */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /** Embedded PGlite when no PostgreSQL answers: auto (dev mode only), always, never. */
  EMBEDDED_POSTGRES: z.enum(['auto', 'always', 'never']).default('auto'),
  EMBEDDED_POSTGRES_PORT: port.default(54329),

  PAYLOAD_ENCRYPTION_KEYS: encryptionKeys,
  TOKEN_ENCRYPTION_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, 'expected a base64 32-byte key')
    .optional(),
  CODEC_SERVER_HOST: z.string().min(1).default('127.0.0.1'),
  CODEC_SERVER_PORT: port.default(8234),
  CODEC_SERVER_TOKEN: z.string().min(16, 'expected at least 16 characters').optional(),
  /** Origin allowed to call the codec server (the Temporal Web UI). */
  CODEC_CORS_ORIGIN: url.default('http://localhost:8233'),

  /** How long closed threads' rows and decisions are kept. */
  RETENTION: howLong().prefault('90 days'),

  HTTP_PORT: port.default(3000),
  HTTP_HOST: z.string().default('127.0.0.1'),

  /** Metrics (README "Metrics and health"): a worker process run alone serves our /metrics here (0: off); the HTTP server always does. */
  METRICS_PORT: port.default(9465),
  METRICS_HOST: z.string().default('127.0.0.1'),
  /** Traces (src/temporal/tracing.ts) go over OTLP/HTTP to this collector (e.g. http://otel-collector:4318); unset: no tracing at all. */
  OTEL_EXPORTER_OTLP_ENDPOINT: url.optional(),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  /** The Temporal SDK's own worker metrics (Prometheus, /metrics) on this port of every worker process (0: off). */
  TEMPORAL_METRICS_PORT: port.default(9464),
  /** The app's address as the user's browser reaches it (links in Discord messages); default http://127.0.0.1:<HTTP_PORT>. */
  PUBLIC_BASE_URL: url.optional(),

  /**
   * MCP over HTTP (docs/mcp.md): the browser origins (scheme://host[:port], comma-separated) whose
   * requests /mcp takes. A request with any other Origin header is refused (403) against DNS rebinding;
   * desktop clients send none. Default: none.
   */
  MCP_ALLOWED_ORIGINS: z
    .string()
    .default('')
    .transform((raw) => raw.split(',').map((s) => s.trim()).filter(Boolean))
    .pipe(z.array(z.url({ protocol: /^https?$/, error: 'expected comma-separated origins like https://app.example' }))),

  /** Approvals (docs/actions.md): signs the page's links and CSRF tokens; dev mode derives one from the token key. */
  APPROVALS_SECRET: z.string().min(32, 'expected at least 32 characters').optional(),
  /** Opens the list page (GET /approvals?token=…); unset: only the signed per-action links work. */
  APPROVALS_OPERATOR_TOKEN: z.string().min(16, 'expected at least 16 characters').optional(),
  /** How long a signed approval link stays valid. */
  APPROVALS_LINK_TTL: howLong().prefault('96 hours'),
  /** A Discord webhook (https://discord.com/api/webhooks/<id>/<token>) approval requests are posted to; a secret. */
  DISCORD_WEBHOOK_URL: url.optional(),
  DISCORD_EMULATOR_PORT: port.default(8237),

  GMAIL_API_ROOT_URL: url.optional(),
  GOOGLE_CLIENT_ID: z.string().min(1).optional(),
  GOOGLE_CLIENT_SECRET: z.string().min(1).optional(),
  GOOGLE_OAUTH_TOKEN_URL: url.optional(),
  GOOGLE_OAUTH_AUTH_URL: url.optional(),
  /** Where grants are revoked when an account is disconnected (default Google's). */
  GOOGLE_OAUTH_REVOKE_URL: url.optional(),
  GMAIL_EMULATOR_PORT: port.default(8235),
  GMAIL_QUOTA_PROFILE: z.enum(['legacy', '2026']).default('legacy'),
  /** The shared per-account quota bucket (src/quota): start rate and ceiling in units/s, burst in seconds of the rate, calls in flight per account per process. */
  GMAIL_QUOTA_START_RATE: z.coerce.number().positive().optional(),
  GMAIL_QUOTA_MAX_RATE: z.coerce.number().positive().optional(),
  GMAIL_QUOTA_BURST: howLong().optional(),
  GMAIL_QUOTA_MAX_CONCURRENCY: z.coerce.number().int().positive().optional(),
  /** The archiver's schedule (docs/backfill.md): interval, Trash instead of archive, created unpaused. */
  ARCHIVER_EVERY: duration.default('1 hour'),
  ARCHIVER_TRASH: bool.default(false),
  ARCHIVER_ENABLED: bool.default(false),
  /** Backfill alerts (docs/backfill.md): the metadata budget per account, and how often one alert may email the account. */
  BACKFILL_METADATA_BUDGET_BYTES: z.coerce.number().int().positive().default(16 * 1024 * 1024),
  BACKFILL_ALERT_EMAIL_EVERY: howLong({ zero: true }).prefault('6 hours'),
  /** An IMAP account's backfill (docs/backfill.md): its connections per account and worker process, and its ceiling in messages per second per account. */
  IMAP_BACKFILL_CONNECTIONS: z.coerce.number().int().positive().default(2),
  IMAP_BACKFILL_RATE: z.coerce.number().positive().default(20),

  /** Sync (docs/sync.md). The Pub/Sub topic users.watch publishes to; unset: no watch, polling only. */
  GMAIL_PUSH_TOPIC: z.string().regex(/^projects\/[^/]+\/topics\/[^/]+$/, 'expected projects/<p>/topics/<t>').optional(),
  /** The `aud` of the push subscription's OIDC token (usually the public URL of POST /gmail/push). Unset: no push endpoint. */
  PUSH_AUDIENCE: z.string().min(1).optional(),
  /** The push subscription's service account (the token's `email`). */
  PUSH_SERVICE_ACCOUNT_EMAIL: z.email().optional(),
  /** Certs (`{kid: PEM}`) that sign push tokens; default Google's. The emulator serves its own. */
  GOOGLE_CERTS_URL: url.optional(),
  /** Schedules: fallback sync of every active account, full inbox scan (and how far back), watch renewal. */
  SYNC_POLL_EVERY: duration.default('15 minutes'),
  /** IMAP accounts: the workflow worker keeps an IDLE connection on each INBOX, which wakes the sync (docs/imap.md). */
  IMAP_IDLE: bool.default(true),
  SYNC_FULL_SCAN_EVERY: duration.default('1 hour'),
  SYNC_FULL_SCAN_BACK: howLong().prefault('10 days'),
  WATCH_RENEWAL_EVERY: duration.default('1 day'),
  /** A watch expiring within this long is renewed (Gmail watches last 7 days). */
  WATCH_RENEW_WITHIN: howLong().prefault('156 hours'),

  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: url.optional(),
  ANTHROPIC_MODEL: z.string().min(1).default('claude-sonnet-4-6'),
  /** A model per role (docs/llm-cost.md): classification and expects-reply on a small model, the rest on ANTHROPIC_MODEL. */
  ANTHROPIC_MODEL_CLASSIFY: z.string().min(1).default('claude-haiku-5-5'),
  ANTHROPIC_MODEL_EXPECTS_REPLY: z.string().min(1).optional(),
  ANTHROPIC_MODEL_DRAFT: z.string().min(1).optional(),
  ANTHROPIC_MODEL_AGENT: z.string().min(1).optional(),
  ANTHROPIC_MODEL_LEARN: z.string().min(1).optional(),
  /** Wait before a call the API's anthropic-ratelimit-* headers say would be refused (src/llm/rate-gate.ts). */
  LLM_RATE_LIMIT_PACING: bool.default(true),
  /**
   * A backfill's hand-over classifies its threads through one Message Batch (half price, results
   * within 24 h) unless `backfill start` says otherwise (--batch-classify / --no-batch-classify).
   */
  LLM_BATCH_BACKFILL: bool.default(false),
  /** USD per million tokens over the list prices (src/llm/prices.ts), JSON: {"claude-haiku-4-5": {"input": 1, "output": 5}}. */
  LLM_PRICES: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined || raw.trim() === '') return {};
      try {
        const parsed = PriceOverridesSchema.safeParse(JSON.parse(raw));
        if (parsed.success) return parsed.data;
        ctx.addIssue({ code: 'custom', message: `not a price table: ${parsed.error.issues[0]?.message ?? ''}` });
      } catch {
        ctx.addIssue({ code: 'custom', message: 'not JSON' });
      }
      return z.NEVER;
    }),
  ANTHROPIC_EMULATOR_PORT: port.default(8236),

  /** How long one attempt of a thread's Gmail / LLM activity may take before it is retried (a dead worker's task waits this long). */
  GMAIL_ACTIVITY_TIMEOUT: howLong().optional(),
  LLM_ACTIVITY_TIMEOUT: howLong().optional(),
  /** A thread waiting on the user closes after this long without any event; one that needs nothing from us, sooner. */
  THREAD_IDLE_AFTER: howLong().prefault('30 days'),
  THREAD_SKIPPED_IDLE_AFTER: howLong().prefault('3 days'),
  /** While an account's grant is revoked, its threads look again this often even without a reconnect. */
  REAUTH_RECHECK_EVERY: howLong().prefault('6 hours'),
  /** A step retried this long on one message's errors gives up (Action Required); through an outage of the account's Gmail, threads look again this often. */
  STEP_GIVE_UP_AFTER: howLong().prefault('30 minutes'),
  GMAIL_OUTAGE_RECHECK_EVERY: howLong().prefault('1 minute'),

  LABEL_OUTBOX: z.string().min(1).default('Outbox'),
  LABEL_REWORK: z.string().min(1).default('Rework'),
  LABEL_DONE: z.string().min(1).default('Done'),
  LABEL_NEEDS_RESPONSE: z.string().min(1).default('Needs Response'),
  LABEL_ACTION_REQUIRED: z.string().min(1).default('Action Required'),
  /** On a thread whose follow-up fell due (docs/time.md). */
  LABEL_FOLLOW_UP: z.string().min(1).default('Follow Up'),
  /** On a thread back from a snooze. */
  LABEL_SNOOZED: z.string().min(1).default('Snoozed'),
  /** A sent message that expects an answer waits this many business days (in the account's zone) for it. */
  FOLLOW_UP_BUSINESS_DAYS: z.coerce.number().int().min(1).max(60).default(3),
  /** A fixed follow-up wait instead of business days (demos, tests); unset in production. */
  FOLLOW_UP_AFTER: howLong().optional(),

  /** Actions (docs/actions.md): a send waits this long (its undo window); an approval expires after this long. */
  SEND_DELAY: howLong({ zero: true }).prefault('2 minutes'),
  /** A user schedule's run missed while the cluster was down runs once if it is back within this long; later, not at all. */
  SCHEDULE_CATCHUP_WINDOW: howLong().prefault('6 hours'),
  /** User schedules start up to this long after their time, spread per schedule (many accounts share 07:30). */
  SCHEDULE_JITTER: howLong({ zero: true }).prefault('2 minutes'),
  APPROVAL_EXPIRY: howLong().prefault('72 hours'),
  /** The kill switch in Gmail: this label on any message pauses every automatic action. */
  LABEL_PAUSE: z.string().min(1).default('Assistant Paused'),
  /** How long the Gmail worker reuses its answer to "is the pause label set?" (the kill switch acts within this long). */
  PAUSE_LABEL_CHECK_EVERY: howLong({ zero: true }).prefault('30 seconds'),
  LABEL_AWAITING_APPROVAL: z.string().min(1).default('Awaiting Approval'),

  /** Reminders (docs/time.md): the label on their e-mails; an occurrence later than the window (cluster down) is skipped, not delivered. */
  LABEL_REMINDERS: z.string().min(1).default('Reminders'),
  /** The label on the weekly "what I learned" e-mail (docs/learning.md). */
  LABEL_LESSONS: z.string().min(1).default('Lessons'),
  REMINDER_CATCH_UP_WINDOW: howLong().prefault('6 hours'),

  /** Time (docs/time.md): the zone of an account that has none of its own, the hours "tomorrow" and "this evening" mean, the weekend business days skip. */
  DEFAULT_TIME_ZONE: z
    .string()
    .transform((v, ctx) => canonicalZone(v) ?? (ctx.addIssue({ code: 'custom', message: 'expected an IANA time zone such as Europe/Berlin or UTC' }), z.NEVER))
    .prefault('UTC'),
  MORNING_HOUR: hour.default(8),
  EVENING_HOUR: hour.default(18),
  WEEKEND_DAYS: weekdays.prefault('6,7'),
  /** Timer labels a user sets in Gmail: "<prefix>/<when>", e.g. Snooze/Tomorrow, Remind/3 days, Send/Tomorrow 8:00. */
  SNOOZE_LABEL_PREFIX: labelPrefix.default('Snooze'),
  REMIND_LABEL_PREFIX: labelPrefix.default('Remind'),
  SEND_LATER_LABEL_PREFIX: labelPrefix.default('Send'),

  /** Learning (docs/learning.md): off stops proposing lessons (accepted ones stay in force until reverted). */
  LEARNING: bool.default(true),
  /** A triage lesson is proposed once the user took the same action back (undo, reject) on this many threads of one sender. */
  TRIAGE_LESSON_AFTER: z.coerce.number().int().min(2).default(2),
  /** Corrections older than this teach nothing. */
  LEARNING_LOOKBACK: howLong().prefault('60 days'),
  /** The dry run tries a rule change on the stored threads of this long back. */
  DRY_RUN_WINDOW: howLong().prefault('30 days'),
  /** Our draft and what the user sent (and rework instructions) are kept this long as evidence, then only lessons and their provenance. */
  LEARNING_EVIDENCE_DAYS: z.coerce.number().int().min(1).default(14),
  /**
   * The corrections of triage the threads saw (table learning_corrections: senders and subjects of
   * the user's mail) are deleted this many days after they were recorded; lessons keep their
   * provenance. Unset: LEARNING_LOOKBACK in days, since older corrections teach nothing.
   */
  LEARNING_CORRECTIONS_DAYS: z.coerce.number().int().min(1).optional(),
  /** How often the learning Schedule proposes writing lessons from new evidence. */
  LEARNING_EVERY: duration.default('1 hour'),
  /**
   * The weekly "what I learned" e-mail: from this weekday and time of each ISO week, in the account's
   * zone (the first learning tick after it sends it), or "off".
   */
  LEARNING_WEEKLY_EMAIL: z
    .string()
    .transform((v, ctx) => {
      if (v.trim().toLowerCase() === 'off') return null;
      return parseWeeklyTime(v) ?? (ctx.addIssue({ code: 'custom', message: 'expected a weekday and a time such as "mon 08:00", or "off"' }), z.NEVER);
    })
    .prefault('mon 08:00'),
  /** Accepted writing lessons in a drafting prompt are cut to this many tokens (most specific first). */
  LESSON_PROMPT_TOKENS: z.coerce.number().int().min(0).default(300),

  MAX_REWORKS: z.coerce.number().int().min(0).default(3),
  DAILY_TOKEN_BUDGET: z.coerce.number().int().positive().default(200_000),
  /**
   * USD one account may spend on the LLM per UTC day, priced with the price table (LLM_PRICES); over
   * it, LLM work waits for the next UTC day, as over DAILY_TOKEN_BUDGET. Unset: no money budget.
   */
  LLM_DAILY_BUDGET_USD: z.coerce.number().positive().optional(),
  /** Long threads are cut to this many prompt tokens before an LLM call. */
  LLM_MAX_INPUT_TOKENS: z.coerce.number().int().min(500).default(8_000),
  /** The account's LLM circuit breaker: outage failures in a row (5xx, 429, 529) that pause LLM work… */
  LLM_BREAKER_FAILURES: z.coerce.number().int().positive().default(5),
  /** …then the model is probed after this wait, doubling per failed probe up to the max. */
  LLM_BREAKER_PROBE_MIN: howLong().prefault('30 seconds'),
  LLM_BREAKER_PROBE_MAX: howLong().prefault('10 minutes'),
  /** A thread's LLM / Gmail call whose worker stops heartbeating this long is retried elsewhere. */
  LLM_HEARTBEAT_TIMEOUT: howLong().prefault('30 seconds'),
  GMAIL_HEARTBEAT_TIMEOUT: howLong().prefault('30 seconds'),
  DEMO_MAILBOX_MESSAGES: z.coerce.number().int().min(0).default(40),
  EMULATORS: z.enum(['auto', 'always', 'never']).default('auto'),
});

export type Env = z.infer<typeof envSchema>;

export interface LoadConfigOptions {
  /**
   * The mode must be set, not defaulted into: the processes a deployment runs on their own (workers,
   * HTTP server, codec server). `npm run dev`, `npm run stack` and the tests choose dev for theirs.
   */
  modeRequired?: boolean;
}

/** Parses the environment; throws ConfigError with one line per bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, opts: LoadConfigOptions = {}): Env {
  // An empty variable (`FOO=` in .env or compose) means "not set", not an invalid value.
  const set = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '')) as Record<string, string>;
  // The Temporal connection settings a temporal.toml profile gives, where the variables do not.
  let present: Record<string, string>;
  try {
    present = { ...set, ...resolveTemporalProfileVars(set) };
  } catch (err) {
    throw new ConfigError(err instanceof Error ? err.message : String(err));
  }
  const result = envSchema.safeParse(present);
  if (result.success) {
    const cfg = result.data;
    if (opts.modeRequired && present['DURABLE_INBOX_MODE'] === undefined) {
      throw new ConfigError(
        'DURABLE_INBOX_MODE: not set; a deployment sets production (with its keys), dev (embedded defaults, keys generated in DATA_DIR) must be asked for',
      );
    }
    if (cfg.DURABLE_INBOX_MODE === 'production') {
      const missing = (['PAYLOAD_ENCRYPTION_KEYS', 'TOKEN_ENCRYPTION_KEY', 'DATABASE_URL', 'APPROVALS_SECRET'] as const).filter(
        (k) => cfg[k] === undefined,
      );
      if (missing.length > 0) {
        throw new ConfigError(`${missing[0]}: required when DURABLE_INBOX_MODE=production`);
      }
    } else {
      refuseExposedDevMode(cfg);
    }
    return cfg;
  }
  const first = result.error.issues[0]!;
  const name = String(first.path[0] ?? 'environment');
  throw new ConfigError(`${name}: ${first.message} (got ${JSON.stringify(present[name] ?? null)})`);
}

/** Where dev mode may listen and connect: this machine only. */
const LOOPBACK_ONLY_IN_DEV = ['HTTP_HOST', 'CODEC_SERVER_HOST', 'METRICS_HOST', 'TEMPORAL_ADDRESS', 'DATABASE_URL', 'TEMPORAL_DATABASE_URL'] as const;

/** localhost, 127.0.0.0/8, ::1; an empty host (a PostgreSQL URL over a Unix socket) is local too. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return h === '' || h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

function hostOf(name: (typeof LOOPBACK_ONLY_IN_DEV)[number], value: string): string {
  if (name === 'DATABASE_URL' || name === 'TEMPORAL_DATABASE_URL') return new URL(value).hostname;
  if (name === 'TEMPORAL_ADDRESS') return value.slice(0, value.lastIndexOf(':'));
  return value;
}

/**
 * Dev mode generates its keys next to its data and trusts everyone who can reach it: it is for one
 * machine. A process listening on, or connecting to, another address in dev mode is a deployment
 * that forgot DURABLE_INBOX_MODE=production, and does not start.
 */
function refuseExposedDevMode(cfg: Env): void {
  for (const name of LOOPBACK_ONLY_IN_DEV) {
    const value = cfg[name];
    if (value === undefined || isLoopbackHost(hostOf(name, value))) continue;
    throw new ConfigError(
      `${name}: ${hostOf(name, value)} is not a loopback address, and dev mode (DURABLE_INBOX_MODE unset or dev) runs on this machine only: ` +
        'a deployment sets DURABLE_INBOX_MODE=production with its keys',
    );
  }
}

/**
 * For entrypoints: the configuration, with the process's log level set from it; a bad value prints
 * the one-line error and exits 1 instead of a stack trace.
 */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env, opts: LoadConfigOptions = {}): Env {
  return exitOnConfigError(() => {
    const cfg = loadConfig(env, opts);
    setLogLevel(cfg.LOG_LEVEL);
    return cfg;
  });
}

/** Runs a step of an entrypoint's set-up; a ConfigError prints its one line and exits 1. */
export function exitOnConfigError<T>(step: () => T): T {
  try {
    return step();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`durable-inbox: invalid configuration: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
}
