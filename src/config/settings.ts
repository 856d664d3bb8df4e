// Each part's settings, from the one configuration: the composition floor (workers, cli, http, dev,
// stack, codec server) maps the environment (env.ts) into the settings types the features declare.
import { msToNumber, type Duration } from '@temporalio/common';
import type { GmailDoctorSettings } from '../accounts/gmail-doctor.js';
import type { BackfillAlertSettings } from '../backfill/contracts.js';
import type { ApprovalsSettings } from '../actions/contracts.js';
import type { ArchiverScheduleSettings } from '../backfill/archiver-schedule.js';
import type { LearningSettings } from '../learning/contracts.js';
import type { LlmSettings } from '../llm/guard.js';
import type { QuotaLimiterOptions } from '../quota/limiter.js';
import type { ReminderSettings } from '../reminders/contracts.js';
import type { SyncScheduleSettings } from '../schedules/schedules.js';
import type { UserScheduleSettings } from '../schedules/user-schedules.js';
import { ConfigError } from '../shared/config-error.js';
import { GMAIL_TASK_QUEUE, LLM_TASK_QUEUE, WORKFLOW_TASK_QUEUE } from '../shared/task-queues.js';
import { PUSH_PATH } from '../sync/push-route.js';
import type { ThreadSettings } from '../thread/contracts.js';
import type { TimerLabelPrefixes } from '../time/labels.js';
import { DAY_MS, type Env } from './env.js';
import { priceTable, type PriceTable } from '../llm/prices.js';


/** What every thread workflow is started with (labels, limits, task queues). */
export function threadSettingsFromConfig(cfg: Env): ThreadSettings {
  return {
    labels: {
      outbox: cfg.LABEL_OUTBOX,
      rework: cfg.LABEL_REWORK,
      done: cfg.LABEL_DONE,
      needsResponse: cfg.LABEL_NEEDS_RESPONSE,
      actionRequired: cfg.LABEL_ACTION_REQUIRED,
      followUp: cfg.LABEL_FOLLOW_UP,
      snoozed: cfg.LABEL_SNOOZED,
    },
    followUp: { businessDays: cfg.FOLLOW_UP_BUSINESS_DAYS, ...(cfg.FOLLOW_UP_AFTER !== undefined ? { afterMs: cfg.FOLLOW_UP_AFTER } : {}) },
    maxReworks: cfg.MAX_REWORKS,
    idleTimeoutMs: cfg.THREAD_IDLE_AFTER,
    skippedIdleTimeoutMs: cfg.THREAD_SKIPPED_IDLE_AFTER,
    llmAttempts: 3,
    reauthRecheckMs: cfg.REAUTH_RECHECK_EVERY,
    stepLimits: { giveUpAfterMs: cfg.STEP_GIVE_UP_AFTER, outageRecheckMs: cfg.GMAIL_OUTAGE_RECHECK_EVERY },
    taskQueues: { gmail: cfg.GMAIL_TASK_QUEUE, llm: cfg.LLM_TASK_QUEUE },
    heartbeatTimeouts: { gmailMs: cfg.GMAIL_HEARTBEAT_TIMEOUT, llmMs: cfg.LLM_HEARTBEAT_TIMEOUT },
    ...(cfg.GMAIL_ACTIVITY_TIMEOUT !== undefined || cfg.LLM_ACTIVITY_TIMEOUT !== undefined
      ? {
          activityTimeouts: {
            ...(cfg.GMAIL_ACTIVITY_TIMEOUT !== undefined ? { gmailMs: cfg.GMAIL_ACTIVITY_TIMEOUT } : {}),
            ...(cfg.LLM_ACTIVITY_TIMEOUT !== undefined ? { llmMs: cfg.LLM_ACTIVITY_TIMEOUT } : {}),
          },
        }
      : {}),
    actions: {
      sendDelayMs: cfg.SEND_DELAY,
      approvalExpiryMs: cfg.APPROVAL_EXPIRY,
      pauseLabel: cfg.LABEL_PAUSE,
      awaitingApprovalLabel: cfg.LABEL_AWAITING_APPROVAL,
    },
  };
}

/** The prefixes of the timer labels (src/time/labels.ts). */
export function timerLabelPrefixesFromConfig(cfg: Env): TimerLabelPrefixes {
  return { snooze: cfg.SNOOZE_LABEL_PREFIX, remind: cfg.REMIND_LABEL_PREFIX, sendLater: cfg.SEND_LATER_LABEL_PREFIX };
}

/** The LLM worker's model, budget and circuit breaker. */
export function llmSettingsFromConfig(cfg: Env): LlmSettings {
  const probeMinMs = cfg.LLM_BREAKER_PROBE_MIN;
  return {
    model: cfg.ANTHROPIC_MODEL,
    models: {
      classify: cfg.ANTHROPIC_MODEL_CLASSIFY,
      expects_reply: cfg.ANTHROPIC_MODEL_EXPECTS_REPLY ?? cfg.ANTHROPIC_MODEL_CLASSIFY,
      draft: cfg.ANTHROPIC_MODEL_DRAFT ?? cfg.ANTHROPIC_MODEL,
      agent_turn: cfg.ANTHROPIC_MODEL_AGENT ?? cfg.ANTHROPIC_MODEL,
      learn: cfg.ANTHROPIC_MODEL_LEARN ?? cfg.ANTHROPIC_MODEL,
    },
    dailyTokenBudget: cfg.DAILY_TOKEN_BUDGET,
    ...(cfg.LLM_DAILY_BUDGET_USD !== undefined ? { dailyBudgetUsd: cfg.LLM_DAILY_BUDGET_USD } : {}),
    prices: priceTable(cfg.LLM_PRICES),
    maxInputTokens: cfg.LLM_MAX_INPUT_TOKENS,
    lessonPromptTokens: cfg.LESSON_PROMPT_TOKENS,
    breaker: {
      failuresToOpen: cfg.LLM_BREAKER_FAILURES,
      probeMinMs,
      probeMaxMs: Math.max(probeMinMs, cfg.LLM_BREAKER_PROBE_MAX),
    },
  };
}

/** The shared Gmail quota limiter's options. */
export function quotaOptionsFromConfig(cfg: Env): QuotaLimiterOptions {
  return {
    profile: cfg.GMAIL_QUOTA_PROFILE,
    ...(cfg.GMAIL_QUOTA_START_RATE !== undefined ? { startRate: cfg.GMAIL_QUOTA_START_RATE } : {}),
    ...(cfg.GMAIL_QUOTA_MAX_RATE !== undefined ? { maxRate: cfg.GMAIL_QUOTA_MAX_RATE } : {}),
    ...(cfg.GMAIL_QUOTA_BURST !== undefined ? { burstSeconds: cfg.GMAIL_QUOTA_BURST / 1000 } : {}),
    ...(cfg.GMAIL_QUOTA_MAX_CONCURRENCY !== undefined ? { maxConcurrency: cfg.GMAIL_QUOTA_MAX_CONCURRENCY } : {}),
  };
}

/**
 * The IMAP backfill's limiter: a bucket of its own per account (`<account>:imap-backfill`; the sync
 * meters the same account in Gmail units under the account's key) of IMAP_BACKFILL_RATE units
 * (operations, about messages read) per second, at the ceiling from the start (no 429 to find it by; a slow server still halves it by its
 * latency), and as many calls in flight per process as the backfill has connections.
 */
export function imapBackfillLimiterOptions(cfg: Env): QuotaLimiterOptions {
  const rate = cfg.IMAP_BACKFILL_RATE;
  return { profile: 'imap', bucket: 'imap-backfill', startRate: rate, maxRate: rate, minRate: rate * 0.05, increaseStep: rate * 0.05, maxConcurrency: cfg.IMAP_BACKFILL_CONNECTIONS };
}

export function syncScheduleSettingsFromConfig(cfg: Env): SyncScheduleSettings {
  return {
    pollEvery: cfg.SYNC_POLL_EVERY,
    fullScanEvery: cfg.SYNC_FULL_SCAN_EVERY,
    fullScanDays: wholeDays(cfg.SYNC_FULL_SCAN_BACK),
    watchRenewalEvery: cfg.WATCH_RENEWAL_EVERY,
    watchRenewWithinMs: cfg.WATCH_RENEW_WITHIN,
  };
}

/** User schedules' policies, and the task queues their runs use when they are not the defaults. */
export function userScheduleSettingsFromConfig(cfg: Env): UserScheduleSettings {
  const queues = { workflow: cfg.TEMPORAL_TASK_QUEUE, gmail: cfg.GMAIL_TASK_QUEUE, llm: cfg.LLM_TASK_QUEUE };
  const defaults = queues.workflow === WORKFLOW_TASK_QUEUE && queues.gmail === GMAIL_TASK_QUEUE && queues.llm === LLM_TASK_QUEUE;
  return { catchupWindowMs: cfg.SCHEDULE_CATCHUP_WINDOW, jitterMs: cfg.SCHEDULE_JITTER, defaultZone: cfg.DEFAULT_TIME_ZONE, ...(defaults ? {} : { taskQueues: queues }) };
}

export function archiverScheduleSettingsFromConfig(cfg: Env): ArchiverScheduleSettings {
  return { every: cfg.ARCHIVER_EVERY, trash: cfg.ARCHIVER_TRASH, enabled: cfg.ARCHIVER_ENABLED };
}

export function approvalsSettingsFromConfig(cfg: Env): ApprovalsSettings {
  return {
    ...(cfg.APPROVALS_OPERATOR_TOKEN ? { operatorToken: cfg.APPROVALS_OPERATOR_TOKEN } : {}),
    linkTtlMs: cfg.APPROVALS_LINK_TTL,
    publicBaseUrl: (cfg.PUBLIC_BASE_URL ?? `http://127.0.0.1:${cfg.HTTP_PORT}`).replace(/\/+$/, ''),
    ...(cfg.DISCORD_WEBHOOK_URL ? { discordWebhookUrl: cfg.DISCORD_WEBHOOK_URL } : {}),
  };
}

export function reminderSettingsFromConfig(cfg: Env): ReminderSettings {
  return {
    label: cfg.LABEL_REMINDERS,
    catchUpWindowMs: cfg.REMINDER_CATCH_UP_WINDOW,
    ...(cfg.GMAIL_ACTIVITY_TIMEOUT !== undefined ? { deliveryTimeoutMs: cfg.GMAIL_ACTIVITY_TIMEOUT } : {}),
    ...(cfg.DISCORD_WEBHOOK_URL ? { discordWebhookUrl: cfg.DISCORD_WEBHOOK_URL } : {}),
  };
}

export function backfillAlertSettingsFromConfig(cfg: Env): BackfillAlertSettings {
  return {
    metadataBudgetBytes: cfg.BACKFILL_METADATA_BUDGET_BYTES,
    ...(cfg.DISCORD_WEBHOOK_URL ? { discordWebhookUrl: cfg.DISCORD_WEBHOOK_URL } : {}),
    emailEveryMs: cfg.BACKFILL_ALERT_EMAIL_EVERY,
  };
}

/** The codec server: it decrypts every payload for whoever calls it, so production requires its token. */
export interface CodecServerSettings {
  host: string;
  port: number;
  token?: string;
  corsOrigin: string;
}


export function codecServerSettingsFromConfig(cfg: Env): CodecServerSettings {
  if (cfg.DURABLE_INBOX_MODE === 'production' && !cfg.CODEC_SERVER_TOKEN) {
    throw new ConfigError('CODEC_SERVER_TOKEN: required when DURABLE_INBOX_MODE=production (the codec server decrypts every payload for whoever calls it)');
  }
  return {
    host: cfg.CODEC_SERVER_HOST,
    port: cfg.CODEC_SERVER_PORT,
    ...(cfg.CODEC_SERVER_TOKEN ? { token: cfg.CODEC_SERVER_TOKEN } : {}),
    corsOrigin: cfg.CODEC_CORS_ORIGIN,
  };
}

/** The health endpoint's thresholds: push is silent when mail arrived by other means this long after the last push. */
export function healthSettingsFromConfig(cfg: Env): { pushSilentAfterMs: number } {
  return { pushSilentAfterMs: msToNumber(cfg.SYNC_POLL_EVERY as Duration) };
}

/** Where the real Temporal server's binaries come from when they are not built into .cache. */
export function temporalServerOverridesFromConfig(cfg: Env) {
  return {
    server: cfg.TEMPORAL_SERVER_BIN,
    sqlTool: cfg.TEMPORAL_SQL_TOOL_BIN,
    schemaDir: cfg.TEMPORAL_SCHEMA_DIR,
    uiServer: cfg.TEMPORAL_UI_SERVER_BIN,
  };
}

/** The OAuth client Gmail access goes through (Google's, or the emulator's in dev mode and tests). */
export function gmailOAuthSettings(cfg: Env) {
  if (!cfg.GOOGLE_CLIENT_ID || !cfg.GOOGLE_CLIENT_SECRET) {
    throw new Error('GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET are needed for Gmail (npm run dev uses the emulator)');
  }
  return {
    clientId: cfg.GOOGLE_CLIENT_ID,
    clientSecret: cfg.GOOGLE_CLIENT_SECRET,
    tokenUrl: cfg.GOOGLE_OAUTH_TOKEN_URL,
    revokeUrl: cfg.GOOGLE_OAUTH_REVOKE_URL,
    rootUrl: cfg.GMAIL_API_ROOT_URL,
  };
}

/** `accounts doctor`: the OAuth client, the push set-up as this app sees it, the fallback poll's interval. */
export function gmailDoctorSettingsFromConfig(cfg: Env): GmailDoctorSettings {
  return {
    oauth: gmailOAuthSettings(cfg),
    ...(cfg.GMAIL_PUSH_TOPIC
      ? {
          push: {
            topic: cfg.GMAIL_PUSH_TOPIC,
            served: !!cfg.PUSH_AUDIENCE && !!cfg.PUSH_SERVICE_ACCOUNT_EMAIL,
            ...(cfg.PUBLIC_BASE_URL ? { endpoint: cfg.PUBLIC_BASE_URL.replace(/\/+$/, '') + PUSH_PATH } : {}),
          },
        }
      : {}),
    pollEveryMs: msToNumber(cfg.SYNC_POLL_EVERY as Duration),
  };
}

/** A "how long" setting in whole days, for what counts in days (retention, how far back a scan looks). */
export function wholeDays(ms: number): number {
  return Math.max(1, Math.ceil(ms / DAY_MS));
}

/** Days the corrections of triage are kept (LEARNING_CORRECTIONS_DAYS, else LEARNING_LOOKBACK in days). */
export function correctionsDays(cfg: Env): number {
  return cfg.LEARNING_CORRECTIONS_DAYS ?? wholeDays(cfg.LEARNING_LOOKBACK);
}

export function learningSettingsFromConfig(cfg: Env): LearningSettings {
  return { enabled: cfg.LEARNING, triageLessonAfter: cfg.TRIAGE_LESSON_AFTER, lookbackMs: cfg.LEARNING_LOOKBACK, dryRunWindowMs: cfg.DRY_RUN_WINDOW };
}

/** The price table (list prices with LLM_PRICES over them) the benches and budgets price tokens with. */
export function llmPricesFromConfig(cfg: Env): PriceTable {
  return priceTable(cfg.LLM_PRICES);
}
