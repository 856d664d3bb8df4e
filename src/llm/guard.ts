// What every LLM activity wraps its model call in: the account's circuit breaker (breaker.ts) asked
// first and told the outcome, the per-account daily token budget checked before and the tokens
// recorded after, heartbeats while the call runs, and SDK and schema errors turned into Temporal
// failures that say whether a retry can help (LlmPaused: the workflow waits). Shared by the thread's
// LLM activities and the agent's turns.
import { activityInfo, ApplicationFailure } from '@temporalio/activity';
import type { PrismaClient } from '../db/client.js';
import {
  admit,
  afterFailure,
  afterSuccess,
  claimProbe,
  LLM_PAUSED_TYPE,
  needsReset,
  type BreakerSettings,
  type BreakerState,
  type LlmFailureKind,
  type LlmPausedDetails,
} from './breaker.js';
import { BREAKER_COLUMNS, breakerStateOf, createBreakerStore, type BreakerRow } from './breaker-store.js';
import { heartbeatWhile } from '../shared/activity-heartbeat.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { llmCalls, llmErrors, llmTokens } from '../metrics/metrics.js';
import { classifyAnthropicError, LlmOutputInvalidError, LlmOutputTruncatedError, LlmRefusedError } from './index.js';
import { costOf, type PriceTable } from './prices.js';

export interface LlmSettings {
  /** The model of every role `models` does not name. */
  model: string;
  /** A model per role (classification and expects-reply on a small one, say). */
  models?: Partial<Record<LlmPurpose, string>>;
  /** Tokens (in + out) one account may spend per UTC day; over it, LLM work waits for the next UTC day. */
  dailyTokenBudget: number;
  /** USD one account may spend per UTC day at `prices`; over it, as over the token budget. Absent: none. */
  dailyBudgetUsd?: number;
  /** What the calls cost (src/llm/prices.ts): the money budget's measure. */
  prices?: PriceTable;
  /** When the account's LLM circuit breaker opens and how often it probes (breaker.ts). */
  breaker: BreakerSettings;
  /** Long threads are cut to this many prompt tokens. */
  maxInputTokens: number;
  /** Accepted writing lessons in a drafting prompt are cut to this many tokens (0 or absent: none). */
  lessonPromptTokens?: number;
}

/** The account's day's LLM budget is spent: in tokens (DAILY_TOKEN_BUDGET) or in money (LLM_DAILY_BUDGET_USD). */
export class TokenBudgetExceededError extends Error {
  constructor(accountId: string, spent: number, budget: number, unit: 'tokens' | 'usd' = 'tokens') {
    super(
      unit === 'usd'
        ? `account ${accountId} spent $${spent.toFixed(4)} of its $${budget} LLM budget today`
        : `account ${accountId} spent ${spent} of its ${budget} LLM tokens today`,
    );
    this.name = 'TokenBudgetExceededError';
  }
}

/**
 * What a call cost at the price table: its input tokens (cache reads and writes among them) at the
 * model's base input price, its output at the output price, times the batch factor for a Message
 * Batch. 0 for a model the table does not know (LLM_PRICES can add it).
 */
export function callCostUsd(prices: PriceTable | undefined, model: string, tokensIn: number, tokensOut: number, batch = false): number {
  if (!prices) return 0;
  return costOf(prices, model, { input: tokensIn, output: tokensOut, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0 }, batch) ?? 0;
}

/** Today in UTC as YYYY-MM-DD (a date literal, whatever the session's time zone): the day of token_usage. */
export function isoDay(now = new Date()): string {
  return now.toISOString().slice(0, 10);
}

/**
 * SDK and schema errors → Temporal failures: retry (honouring Retry-After) or give up. Output that
 * fails its schema is retried until `outputAttempts`; throttling and outages are retried without limit.
 */
export function llmActivityFailure(err: unknown, outputAttempts: number): unknown {
  if (err instanceof LlmOutputInvalidError) {
    return ApplicationFailure.create({
      type: err.name,
      message: err.message,
      details: [{ field: err.field }],
      nonRetryable: activityInfo().attempt >= outputAttempts,
    });
  }
  // A budget spent, a refusal (not retried with the same prompt), a partial answer after the larger budget.
  if (err instanceof TokenBudgetExceededError || err instanceof LlmRefusedError || err instanceof LlmOutputTruncatedError) {
    return ApplicationFailure.create({ type: err.name, message: err.message, nonRetryable: true });
  }
  const kind = classifyAnthropicError(err);
  if (!kind) return err;
  switch (kind.kind) {
    case 'rate_limited':
    case 'overloaded':
      return ApplicationFailure.create({
        type: kind.kind === 'rate_limited' ? 'LlmRateLimitedError' : 'LlmOverloadedError',
        message: kind.message,
        nextRetryDelay: kind.retryAfterMs,
      });
    case 'auth':
      return ApplicationFailure.create({ type: 'LlmAuthError', message: kind.message, nonRetryable: true });
    case 'bad_request':
      return ApplicationFailure.create({ type: 'LlmRequestRejectedError', message: kind.message, nonRetryable: true });
    case 'model_not_found':
      return ApplicationFailure.create({ type: 'LlmModelNotFoundError', message: kind.message, nonRetryable: true });
    case 'server':
      return ApplicationFailure.create({ type: 'LlmServerError', message: kind.message });
  }
}

export type LlmGuard = <T extends { tokensIn: number; tokensOut: number; model?: string }>(
  accountId: string,
  outputAttempts: number,
  call: () => Promise<T>,
  purpose: LlmPurpose,
  /** Sent with every heartbeat while the call runs (an activity's checkpoint). */
  heartbeatDetails?: unknown,
) => Promise<T>;

/** What a model call is for (a label of the LLM metrics, and the role a model is chosen for). */
export type LlmPurpose = 'classify' | 'draft' | 'agent_turn' | 'expects_reply' | 'learn';

/**
 * The model configured for a role: the role's own (`models`), else the default `model`. The one home
 * of that rule: the calls pick their model with it, and the guard prices a call whose answer did not
 * name its model with it (the guard's settings may lack a default model: then undefined).
 */
export function modelFor(settings: Pick<LlmSettings, 'model' | 'models'>, role: LlmPurpose): string;
export function modelFor(settings: Partial<Pick<LlmSettings, 'model' | 'models'>>, role: LlmPurpose): string | undefined;
export function modelFor(settings: Partial<Pick<LlmSettings, 'model' | 'models'>>, role: LlmPurpose): string | undefined {
  return settings.models?.[role] ?? settings.model;
}

/** The metrics' name for what went wrong in a model call. */
export function llmErrorKind(err: unknown): string {
  if (err instanceof LlmOutputInvalidError) return 'output_invalid';
  if (err instanceof LlmRefusedError) return 'refused';
  if (err instanceof LlmOutputTruncatedError) return 'output_truncated';
  if (err instanceof TokenBudgetExceededError) return 'budget_exceeded';
  return classifyAnthropicError(err)?.kind ?? 'other';
}

/** What an error means for the account's breaker: an outage, a refused key, no credits, a spent budget; or nothing. */
export function breakerFailureOf(err: unknown): LlmFailureKind | undefined {
  if (err instanceof TokenBudgetExceededError) return 'budget';
  const kind = classifyAnthropicError(err);
  switch (kind?.kind) {
    case 'rate_limited':
    case 'overloaded':
    case 'server':
      return 'outage';
    case 'auth':
      return kind.status === 402 ? 'credits' : 'auth';
    case 'model_not_found':
      return 'model';
    default:
      return undefined;
  }
}

/** The fail-fast answer of an open breaker: the workflow waits until `resumeAt` (or a resume signal) and calls again. */
export function llmPausedFailure(accountId: string, b: BreakerState, resumeAt: Date): ApplicationFailure {
  const details: LlmPausedDetails = { reason: b.reason ?? 'outage', resumeAt: resumeAt.toISOString(), lastError: b.lastError };
  return ApplicationFailure.create({
    type: LLM_PAUSED_TYPE,
    message: `LLM paused for account ${accountId} (${details.reason}): ${b.lastError ?? ''}`,
    details: [details],
    nonRetryable: true,
  });
}

export function createLlmGuard(
  { prisma, sql }: { prisma: PrismaClient; sql: SqlExecutor },
  settings: Pick<LlmSettings, 'dailyTokenBudget' | 'breaker' | 'dailyBudgetUsd' | 'prices' | 'models'> & Partial<Pick<LlmSettings, 'model'>>,
  now: () => Date = () => new Date(),
): LlmGuard {
  const breakers = createBreakerStore(prisma);

  // Raw statements on the pool: these run around every model call. One read gives the breaker and
  // the tokens and money spent today.
  async function readGate(accountId: string): Promise<{ breaker: BreakerState; spent: number; spentUsd: number }> {
    const rows = await sql.query<BreakerRow & { spent: number | null; spent_usd: number | null }>(
      `SELECT ${BREAKER_COLUMNS.split(', ').map((c) => `b.${c}`).join(', ')}, u.tokens_in + u.tokens_out AS spent, u.cost_usd AS spent_usd
       FROM (SELECT 1) AS one LEFT JOIN llm_breakers b ON b.account_id = $1
       LEFT JOIN token_usage u ON u.account_id = $1 AND u.day = $2::date`,
      [accountId, isoDay(now())],
    );
    const row = rows[0];
    return { breaker: row?.state ? breakerStateOf(row) : breakerStateOf(undefined), spent: Number(row?.spent ?? 0), spentUsd: Number(row?.spent_usd ?? 0) };
  }

  function ensureBudget(accountId: string, spent: number, spentUsd: number): void {
    if (spent >= settings.dailyTokenBudget) throw new TokenBudgetExceededError(accountId, spent, settings.dailyTokenBudget);
    if (settings.dailyBudgetUsd !== undefined && spentUsd >= settings.dailyBudgetUsd) throw new TokenBudgetExceededError(accountId, spentUsd, settings.dailyBudgetUsd, 'usd');
  }

  async function record(accountId: string, tokensIn: number, tokensOut: number, costUsd: number): Promise<void> {
    await sql.query(
      `INSERT INTO token_usage (account_id, day, tokens_in, tokens_out, cost_usd) VALUES ($1, $2::date, $3, $4, $5)
       ON CONFLICT (account_id, day) DO UPDATE
       SET tokens_in = token_usage.tokens_in + EXCLUDED.tokens_in, tokens_out = token_usage.tokens_out + EXCLUDED.tokens_out,
           cost_usd = token_usage.cost_usd + EXCLUDED.cost_usd`,
      [accountId, isoDay(now()), tokensIn, tokensOut, costUsd],
    );
  }

  /** Throws LlmPaused unless this call may go to the model; an open breaker's due probe is taken by one call only. */
  async function admitCall(accountId: string, breaker: BreakerState): Promise<BreakerState> {
    const gate = admit(breaker, now(), settings.breaker);
    if (!gate.call) throw llmPausedFailure(accountId, breaker, gate.resumeAt);
    if (!gate.probe) return breaker;
    let refused: Date | undefined;
    const { after } = await breakers.update(accountId, (b) => {
      const again = admit(b, now(), settings.breaker);
      if (again.call && again.probe) return claimProbe(b, now(), settings.breaker);
      refused = again.call ? undefined : again.resumeAt;
      return b;
    });
    if (refused) throw llmPausedFailure(accountId, after, refused);
    return after;
  }

  return async function guarded<T extends { tokensIn: number; tokensOut: number; model?: string }>(
    accountId: string,
    outputAttempts: number,
    call: () => Promise<T>,
    purpose: LlmPurpose,
    heartbeatDetails?: unknown,
  ): Promise<T> {
    const gate = await readGate(accountId);
    const breaker = await admitCall(accountId, gate.breaker);
    try {
      ensureBudget(accountId, gate.spent, gate.spentUsd);
      const result = await heartbeatWhile(call, heartbeatDetails);
      const model = result.model ?? modelFor(settings, purpose) ?? '';
      await record(accountId, result.tokensIn, result.tokensOut, callCostUsd(settings.prices, model, result.tokensIn, result.tokensOut));
      llmCalls.inc({ purpose, result: 'ok' });
      llmTokens.inc({ direction: 'in' }, result.tokensIn);
      llmTokens.inc({ direction: 'out' }, result.tokensOut);
      if (needsReset(breaker)) await breakers.update(accountId, afterSuccess);
      return result;
    } catch (err) {
      const kind = llmErrorKind(err);
      llmCalls.inc({ purpose, result: kind });
      llmErrors.inc({ kind });
      const failure = breakerFailureOf(err);
      if (failure) {
        const message = err instanceof Error ? err.message : String(err);
        const { after } = await breakers.update(accountId, (b) => afterFailure(b, failure, message, now(), settings.breaker));
        if (after.state === 'open') throw llmPausedFailure(accountId, after, admitAfter(after));
      } else if ((err instanceof LlmOutputInvalidError || err instanceof LlmRefusedError || err instanceof LlmOutputTruncatedError) && needsReset(breaker)) {
        await breakers.update(accountId, afterSuccess); // the model answered, if not in shape
      }
      throw llmActivityFailure(err, outputAttempts);
    }
  };

  function admitAfter(b: BreakerState): Date {
    const gate = admit(b, now(), settings.breaker);
    return gate.call ? now() : gate.resumeAt;
  }
}
