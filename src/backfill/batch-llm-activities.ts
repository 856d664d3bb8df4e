// The hand-over's Message Batch at the API (LLM queue), through @anthropic-ai/sdk's
// client.messages.batches: submit (idempotent: the batch id is recorded in llm_batches the moment
// it exists; a retry returns it, and one whose predecessor died between creating and recording looks
// for it among the batches created since it began), status, results (each read into its request
// row, the tokens and their cost at the batch price counted against the account's budgets once), cancel.
import type Anthropic from '@anthropic-ai/sdk';
import { log } from '@temporalio/activity';
import type { SqlExecutor } from '../db/sql-executor.js';
import { classificationOf, classificationRequest } from '../llm/classify.js';
import { callCostUsd, modelFor, type LlmSettings } from '../llm/guard.js';
import { tokensOf } from '../llm/usage.js';
import { llmCalls, llmTokens } from '../metrics/metrics.js';
import type { PromptMessage } from '../thread/activity-contracts.js';
import type { BackfillBatchLlmActivities, BatchCollectResult, BatchRequestCounts } from './activity-contracts.js';

export interface BatchLlmDeps {
  sql: SqlExecutor;
  anthropic: Anthropic;
  settings: Pick<LlmSettings, 'model' | 'models' | 'maxInputTokens' | 'dailyTokenBudget' | 'dailyBudgetUsd' | 'prices'>;
}

/** How far before its submit began a batch it made may say it was created (the two clocks). */
const CLOCK_SLACK_MS = 60_000;

const isoDay = (now = new Date()) => now.toISOString().slice(0, 10);

/** Why the account's LLM may not be used now (its breaker open, its day's budget spent), if so. */
async function blockedFor(deps: BatchLlmDeps, accountId: string): Promise<string | undefined> {
  const [row] = await deps.sql.query<{ state: string | null; reason: string | null; spent: number | null; spent_usd: number | null }>(
    `SELECT b.state, b.reason, u.tokens_in + u.tokens_out AS spent, u.cost_usd AS spent_usd
     FROM (SELECT 1) AS one LEFT JOIN llm_breakers b ON b.account_id = $1 LEFT JOIN token_usage u ON u.account_id = $1 AND u.day = $2::date`,
    [accountId, isoDay()],
  );
  if (row?.state === 'open') return `the account's LLM is paused (${row.reason ?? 'outage'})`;
  const spent = Number(row?.spent ?? 0);
  if (spent >= deps.settings.dailyTokenBudget) return `the account spent ${spent} of its ${deps.settings.dailyTokenBudget} LLM tokens today`;
  const spentUsd = Number(row?.spent_usd ?? 0);
  const budgetUsd = deps.settings.dailyBudgetUsd;
  if (budgetUsd !== undefined && spentUsd >= budgetUsd) return `the account spent $${spentUsd.toFixed(4)} of its $${budgetUsd} LLM budget today`;
  return undefined;
}

const total = (c: BatchRequestCounts) => c.processing + c.succeeded + c.errored + c.canceled + c.expired;

/** The batch an earlier attempt created and did not live to record: the only one created since it began with as many requests. */
async function findBatch(client: Anthropic, since: Date, requests: number): Promise<string | undefined> {
  const candidates: string[] = [];
  for await (const batch of client.messages.batches.list({ limit: 100 })) {
    if (Date.parse(batch.created_at) < since.getTime() - CLOCK_SLACK_MS) break; // newest first
    if (total(batch.request_counts) === requests) candidates.push(batch.id);
  }
  return candidates.length === 1 ? candidates[0] : undefined;
}

export function createBatchLlmActivities(deps: BatchLlmDeps): BackfillBatchLlmActivities {
  const { sql, anthropic } = deps;
  return {
    async batchSubmit({ accountId, batchKey }) {
      const [batch] = await sql.query<{ batch_id: string | null; submitting_since: Date | null }>(
        `SELECT batch_id, submitting_since FROM llm_batches WHERE batch_key = $1`,
        [batchKey],
      );
      const rows = await sql.query<{ custom_id: string; prompt: { email: PromptMessage; instructions: string[] } }>(
        `SELECT custom_id, prompt FROM llm_batch_requests WHERE batch_key = $1 ORDER BY custom_id`,
        [batchKey],
      );
      if (batch?.batch_id) return { batchId: batch.batch_id, requests: rows.length };
      if (!batch || rows.length === 0) return { batchId: null, requests: 0 };
      if (batch.submitting_since) {
        const found = await findBatch(anthropic, batch.submitting_since, rows.length);
        if (found) {
          log.warn('found the Message Batch an earlier attempt created', { batchKey, batchId: found });
          await sql.query(`UPDATE llm_batches SET batch_id = $2 WHERE batch_key = $1`, [batchKey, found]);
          return { batchId: found, requests: rows.length };
        }
      }
      const blocked = await blockedFor(deps, accountId);
      if (blocked) return { batchId: null, requests: rows.length, skipped: blocked };
      const model = modelFor(deps.settings, 'classify');
      const requests = rows.map((r) => ({
        custom_id: r.custom_id,
        params: classificationRequest({ model, email: r.prompt.email, instructions: r.prompt.instructions, maxInputTokens: deps.settings.maxInputTokens }).params,
      }));
      await sql.query(`UPDATE llm_batches SET submitting_since = now() WHERE batch_key = $1`, [batchKey]);
      const created = await anthropic.messages.batches.create({ requests });
      await sql.query(`UPDATE llm_batches SET batch_id = $2 WHERE batch_key = $1`, [batchKey, created.id]);
      return { batchId: created.id, requests: rows.length };
    },

    async batchStatus({ batchId }) {
      const batch = await anthropic.messages.batches.retrieve(batchId);
      return { ended: batch.processing_status === 'ended', counts: { ...batch.request_counts } };
    },

    async batchCollect({ accountId, batchKey, batchId }): Promise<BatchCollectResult> {
      const results: { custom_id: string; result_type: string; classification: unknown; error: string | null }[] = [];
      const counts: BatchCollectResult = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0, decided: 0 };
      let tokensIn = 0;
      let tokensOut = 0;
      let costUsd = 0;
      for await (const line of await anthropic.messages.batches.results(batchId)) {
        const { result } = line;
        counts[result.type]++;
        if (result.type === 'succeeded') {
          const used = tokensOf(result.message.usage);
          tokensIn += used.tokensIn;
          tokensOut += used.tokensOut;
          costUsd += callCostUsd(deps.settings.prices, result.message.model, used.tokensIn, used.tokensOut, true);
          const read = classificationOf(result.message);
          if ('classification' in read) {
            counts.decided++;
            results.push({ custom_id: line.custom_id, result_type: 'succeeded', classification: { ...read.classification, model: result.message.model, ...used }, error: null });
          } else {
            results.push({ custom_id: line.custom_id, result_type: 'unusable', classification: null, error: read.notUsable });
          }
        } else {
          const error = result.type === 'errored' ? `${result.error.error.type}: ${result.error.error.message}` : null;
          results.push({ custom_id: line.custom_id, result_type: result.type, classification: null, error });
        }
        llmCalls.inc({ purpose: 'classify_batch', result: result.type });
      }
      await sql.query(
        `UPDATE llm_batch_requests r SET result_type = x.result_type, classification = x.classification, error = x.error, prompt = NULL
         FROM jsonb_to_recordset($2::jsonb) AS x(custom_id text, result_type text, classification jsonb, error text)
         WHERE r.batch_key = $1 AND r.custom_id = x.custom_id`,
        [batchKey, JSON.stringify(results)],
      );
      // One statement: the batch is marked collected and its tokens counted in the same step, once.
      const [counted] = await sql.query<{ n: number }>(
        `WITH claimed AS (UPDATE llm_batches SET collected_at = now() WHERE batch_key = $1 AND collected_at IS NULL RETURNING account_id),
         counted AS (
           INSERT INTO token_usage (account_id, day, tokens_in, tokens_out, cost_usd) SELECT account_id, $2::date, $3, $4, $5 FROM claimed
           ON CONFLICT (account_id, day) DO UPDATE
           SET tokens_in = token_usage.tokens_in + EXCLUDED.tokens_in, tokens_out = token_usage.tokens_out + EXCLUDED.tokens_out,
               cost_usd = token_usage.cost_usd + EXCLUDED.cost_usd
           RETURNING 1)
         SELECT count(*)::int AS n FROM counted`,
        [batchKey, isoDay(), tokensIn, tokensOut, costUsd],
      );
      if (counted?.n) {
        llmTokens.inc({ direction: 'in' }, tokensIn);
        llmTokens.inc({ direction: 'out' }, tokensOut);
      }
      log.info('Message Batch results read', { accountId, batchId, ...counts });
      return counts;
    },

    async batchCancel({ batchId }) {
      await anthropic.messages.batches.cancel(batchId);
    },
  };
}
