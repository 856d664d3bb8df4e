// durable-inbox's own metrics, one registry per process: the activities count into it where the
// work happens, and GET /metrics renders it (src/http/metrics-route.ts, which also adds the gauges
// read from PostgreSQL at scrape time).
import type { SqlExecutor } from '../db/sql-executor.js';
import { MetricsRegistry } from './registry.js';

export const registry = new MetricsRegistry<SqlExecutor>();

/** Threads saved after handling mail, by the state the mail left the thread in. */
export const emailsHandled = registry.counter('durable_inbox_emails_total', 'Emails handled, by the thread state they led to.', ['outcome']);
export const draftsWritten = registry.counter('durable_inbox_drafts_total', 'Drafts written into Gmail threads.');
export const actionTransitions = registry.counter('durable_inbox_actions_total', 'Journaled actions entering a state, by kind and state.', ['kind', 'state']);
export const llmCalls = registry.counter('durable_inbox_llm_calls_total', 'LLM calls, by purpose and result (ok or the error kind).', ['purpose', 'result']);
export const llmTokens = registry.counter('durable_inbox_llm_tokens_total', 'LLM tokens billed, by direction (in, out).', ['direction']);
export const llmErrors = registry.counter('durable_inbox_llm_errors_total', 'Failed LLM calls, by kind.', ['kind']);
export const gmailCalls = registry.counter('durable_inbox_gmail_calls_total', 'Gmail API calls made under the quota limiter, by method.', ['method']);
export const gmailUnits = registry.counter('durable_inbox_gmail_units_total', 'Gmail quota units spent, by method.', ['method']);
export const quotaWaitSeconds = registry.counter('durable_inbox_quota_wait_seconds_total', 'Seconds Gmail calls waited for quota units.');
export const backfillMessages = registry.counter(
  'durable_inbox_backfill_messages_total',
  'Backfill messages by result: inserted (new rows), stored (upserts), gone (deleted before fetched), bad.',
  ['result'],
);
export const badMessages = registry.counter('durable_inbox_bad_messages_total', 'Messages the backfill recorded in bad_messages.');
export const backfillAlertsRaised = registry.counter('durable_inbox_backfill_alerts_total', 'Backfill alert level changes raised, by kind and level.', ['kind', 'level']);
