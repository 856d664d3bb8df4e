// The hand-over's Message Batch at the API (LLM queue), through @anthropic-ai/sdk's
// client.messages.batches: submit (idempotent: the batch id is recorded in llm_batches the moment
// it exists; a retry returns it, and one whose predecessor died between creating and recording looks
// for it among the batches created since it began), status, results (read page by page into their
// request rows, each page's tokens and their cost at the batch price counted against the account's
// budgets in the same statement, so once; a retry resumes after the lines stored), cancel.
import type Anthropic from '@anthropic-ai/sdk';
import { heartbeat, log } from '@temporalio/activity';
import type { MessageBatchIndividualResponse } from '@anthropic-ai/sdk/resources/messages/batches';
import type { SqlExecutor } from '../db/sql-executor.js';
import { classificationOf, classificationRequest } from '../llm/classify.js';
import { callCostUsd, isoDay, modelFor, type LlmSettings } from '../llm/guard.js';
import { tokensOf } from '../llm/usage.js';
import { llmCalls, llmTokens } from '../metrics/metrics.js';
import type { PromptMessage } from '../thread/activity-contracts.js';
import type { BackfillBatchLlmActivities, BatchCollectInput, BatchCollectResult, BatchRequestCounts } from './activity-contracts.js';

export interface BatchLlmDeps {
  sql: SqlExecutor;
  anthropic: Anthropic;
  settings: Pick<LlmSettings, 'model' | 'models' | 'maxInputTokens' | 'dailyTokenBudget' | 'dailyBudgetUsd' | 'prices'>;
}

/** How far before its submit began a batch it made may say it was created (the two clocks). */
const CLOCK_SLACK_MS = 60_000;


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

/** One result as stored on its request row. */
interface StoredResult {
  custom_id: string;
  result_type: string;
  classification: unknown;
  error: string | null;
}

/** A page of results: its rows, its tokens and their cost (at the batch price). */
interface ResultPage {
  rows: StoredResult[];
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
}

const emptyPage = (): ResultPage => ({ rows: [], tokensIn: 0, tokensOut: 0, costUsd: 0 });

export function createBatchLlmActivities(deps: BatchLlmDeps): BackfillBatchLlmActivities {
  const { sql, anthropic } = deps;

  /** One result line into its page: what is stored, and its tokens. */
  function addResult(page: ResultPage, line: MessageBatchIndividualResponse): void {
    const { result } = line;
    if (result.type === 'succeeded') {
      const used = tokensOf(result.message.usage);
      page.tokensIn += used.tokensIn;
      page.tokensOut += used.tokensOut;
      page.costUsd += callCostUsd(deps.settings.prices, result.message.model, used.tokensIn, used.tokensOut, true);
      const read = classificationOf(result.message);
      page.rows.push(
        'classification' in read
          ? { custom_id: line.custom_id, result_type: 'succeeded', classification: { ...read.classification, model: result.message.model, ...used }, error: null }
          : { custom_id: line.custom_id, result_type: 'unusable', classification: null, error: read.notUsable },
      );
    } else {
      const error = result.type === 'errored' ? `${result.error.error.type}: ${result.error.error.message}` : null;
      page.rows.push({ custom_id: line.custom_id, result_type: result.type, classification: null, error });
    }
  }

  /**
   * One statement stores a page: its rows, the batch's position moved past it (only from where this
   * read began it: a concurrent attempt that got there first makes this one fail and resume), and its
   * tokens counted against the account's day. So a page is stored and counted once, whatever retries.
   */
  async function storePage(batchKey: string, from: number, page: ResultPage): Promise<void> {
    const [stored] = await sql.query<{ n: number }>(
      `WITH advanced AS (
         UPDATE llm_batches SET collected_lines = collected_lines + $3, collected_pages = collected_pages + 1
         WHERE batch_key = $1 AND collected_lines = $2 AND collected_at IS NULL RETURNING account_id),
       results AS (
         UPDATE llm_batch_requests r SET result_type = x.result_type, classification = x.classification, error = x.error, prompt = NULL
         FROM jsonb_to_recordset($4::jsonb) AS x(custom_id text, result_type text, classification jsonb, error text), advanced
         WHERE r.batch_key = $1 AND r.custom_id = x.custom_id RETURNING 1),
       counted AS (
         INSERT INTO token_usage (account_id, day, tokens_in, tokens_out, cost_usd) SELECT account_id, $5::date, $6, $7, $8 FROM advanced
         ON CONFLICT (account_id, day) DO UPDATE
         SET tokens_in = token_usage.tokens_in + EXCLUDED.tokens_in, tokens_out = token_usage.tokens_out + EXCLUDED.tokens_out,
             cost_usd = token_usage.cost_usd + EXCLUDED.cost_usd
         RETURNING 1)
       SELECT (SELECT count(*) FROM advanced)::int AS n`,
      [batchKey, from, page.rows.length, JSON.stringify(page.rows), isoDay(), page.tokensIn, page.tokensOut, page.costUsd],
    );
    if (!stored?.n) throw new Error(`the results of ${batchKey} from line ${from} were stored by another attempt meanwhile; reading again from where it got`);
    llmTokens.inc({ direction: 'in' }, page.tokensIn);
    llmTokens.inc({ direction: 'out' }, page.tokensOut);
    for (const row of page.rows) llmCalls.inc({ purpose: 'classify_batch', result: row.result_type === 'unusable' ? 'succeeded' : row.result_type });
  }

  /**
   * The results file (a stream: the SDK reads it line by line) in pages of `pageSize`, from the start,
   * passing over the `resumeAt` lines an earlier attempt stored; heartbeats with the position.
   */
  async function readResults(accountId: string, batchKey: string, batchId: string, resumeAt: number, pageSize: number): Promise<void> {
    let line = 0;
    let page = emptyPage();
    if (resumeAt > 0) log.info('Message Batch results: resuming after the lines already stored', { accountId, batchId, resumeAt });
    for await (const result of await anthropic.messages.batches.results(batchId)) {
      line++;
      if (line <= resumeAt) {
        if (line % pageSize === 0) heartbeat(line);
        continue;
      }
      addResult(page, result);
      if (page.rows.length >= pageSize) {
        await storePage(batchKey, line - page.rows.length, page);
        page = emptyPage();
        heartbeat(line);
      }
    }
    if (page.rows.length > 0) await storePage(batchKey, line - page.rows.length, page);
    // A file that ends early (a download cut where the stream did not say so) is read again, not taken as all.
    const [requests] = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM llm_batch_requests WHERE batch_key = $1`, [batchKey]);
    if (line < (requests?.n ?? 0)) throw new Error(`the results of ${batchId} ended after ${line} of ${requests!.n} lines; reading again`);
    await sql.query(`UPDATE llm_batches SET collected_at = now() WHERE batch_key = $1 AND collected_at IS NULL`, [batchKey]);
  }

  /** What the stored results say, by type (an unusable answer counts as succeeded, not decided). */
  async function countsOf(batchKey: string): Promise<BatchCollectResult> {
    const rows = await sql.query<{ result_type: string | null; n: number }>(
      `SELECT result_type, count(*)::int AS n FROM llm_batch_requests WHERE batch_key = $1 GROUP BY result_type`,
      [batchKey],
    );
    const [batch] = await sql.query<{ pages: number }>(`SELECT collected_pages AS pages FROM llm_batches WHERE batch_key = $1`, [batchKey]);
    const counts: BatchCollectResult = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0, decided: 0, pages: batch?.pages ?? 0 };
    for (const { result_type: type, n } of rows) {
      if (type === 'succeeded') counts.decided += n;
      if (type === 'succeeded' || type === 'unusable') counts.succeeded += n;
      else if (type === 'errored' || type === 'canceled' || type === 'expired') counts[type] += n;
      else counts.processing += n;
    }
    return counts;
  }

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

    async batchCollect({ accountId, batchKey, batchId, pageSize }: BatchCollectInput): Promise<BatchCollectResult> {
      const [state] = await sql.query<{ lines: number; collected: boolean }>(
        `SELECT collected_lines AS lines, collected_at IS NOT NULL AS collected FROM llm_batches WHERE batch_key = $1`,
        [batchKey],
      );
      if (!state) throw new Error(`no Message Batch ${batchKey}`);
      if (!state.collected) await readResults(accountId, batchKey, batchId, state.lines, Math.max(1, pageSize));
      return countsOf(batchKey);
    },

    async batchCancel({ batchId }) {
      await anthropic.messages.batches.cancel(batchId);
    },
  };
}
