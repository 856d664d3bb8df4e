// What every LLM activity wraps its model call in: the per-account daily token budget checked
// before and the tokens recorded after, and SDK and schema errors turned into Temporal failures that
// say whether a retry can help. Shared by the thread's LLM activities and the agent's turns.
import { activityInfo, ApplicationFailure } from '@temporalio/activity';
import type { PrismaClient } from '../db/client.js';
import { llmCalls, llmErrors, llmTokens } from '../metrics/metrics.js';
import { classifyAnthropicError, LlmOutputInvalidError } from './index.js';

export interface LlmSettings {
  model: string;
  /** Tokens (in + out) one account may spend per UTC day; over it, threads go to Action Required. */
  dailyTokenBudget: number;
  /** Long threads are cut to this many prompt tokens. */
  maxInputTokens: number;
}

export class TokenBudgetExceededError extends Error {
  constructor(accountId: string, spent: number, budget: number) {
    super(`account ${accountId} spent ${spent} of its ${budget} LLM tokens today`);
    this.name = 'TokenBudgetExceededError';
  }
}

/** Today in UTC as YYYY-MM-DD (a date literal, whatever the session's time zone). */
function isoDay(now = new Date()): string {
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
  if (err instanceof TokenBudgetExceededError) {
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
    case 'server':
      return ApplicationFailure.create({ type: 'LlmServerError', message: kind.message });
  }
}

/** What a model call is for (a label of the LLM metrics). */
export type LlmPurpose = 'classify' | 'draft' | 'agent_turn';

/** The metrics' name for what went wrong in a model call. */
export function llmErrorKind(err: unknown): string {
  if (err instanceof LlmOutputInvalidError) return 'output_invalid';
  if (err instanceof TokenBudgetExceededError) return 'budget_exceeded';
  return classifyAnthropicError(err)?.kind ?? 'other';
}

export type LlmGuard = <T extends { tokensIn: number; tokensOut: number }>(
  accountId: string,
  outputAttempts: number,
  call: () => Promise<T>,
  purpose: LlmPurpose,
) => Promise<T>;

export function createLlmGuard(prisma: PrismaClient, settings: Pick<LlmSettings, 'dailyTokenBudget'>): LlmGuard {
  // Raw statements: these run around every model call, and Prisma's query building costs more CPU
  // than the round trip.
  async function ensureBudget(accountId: string): Promise<void> {
    const rows = await prisma.$queryRawUnsafe<{ spent: number }[]>(
      'SELECT tokens_in + tokens_out AS spent FROM token_usage WHERE account_id = $1 AND day = $2::date',
      accountId,
      isoDay(),
    );
    const spent = Number(rows[0]?.spent ?? 0);
    if (spent >= settings.dailyTokenBudget) throw new TokenBudgetExceededError(accountId, spent, settings.dailyTokenBudget);
  }

  async function record(accountId: string, tokensIn: number, tokensOut: number): Promise<void> {
    await prisma.$executeRawUnsafe(
      `INSERT INTO token_usage (account_id, day, tokens_in, tokens_out) VALUES ($1, $2::date, $3, $4)
       ON CONFLICT (account_id, day) DO UPDATE
       SET tokens_in = token_usage.tokens_in + EXCLUDED.tokens_in, tokens_out = token_usage.tokens_out + EXCLUDED.tokens_out`,
      accountId,
      isoDay(),
      tokensIn,
      tokensOut,
    );
  }

  return async function guarded<T extends { tokensIn: number; tokensOut: number }>(
    accountId: string,
    outputAttempts: number,
    call: () => Promise<T>,
    purpose: LlmPurpose,
  ): Promise<T> {
    try {
      await ensureBudget(accountId);
      const result = await call();
      llmCalls.inc({ purpose, result: 'ok' });
      llmTokens.inc({ direction: 'in' }, result.tokensIn);
      llmTokens.inc({ direction: 'out' }, result.tokensOut);
      await record(accountId, result.tokensIn, result.tokensOut);
      return result;
    } catch (err) {
      const kind = llmErrorKind(err);
      llmCalls.inc({ purpose, result: kind });
      llmErrors.inc({ kind });
      throw llmActivityFailure(err, outputAttempts);
    }
  };
}
