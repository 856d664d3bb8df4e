// The learning's LLM activity (task queue durable-inbox-llm): writing lessons proposed from the
// account's new writing evidence, through the LLM guard (breaker, daily token budget) like every
// model call. A typed lesson (sign-off, greeting, language, tone) the account lets take hold alone is accepted here
// (settleWritingProposals); the others wait for the user, and the workflow announces them.
// Idempotent: a retry finds its lessons by key, and the evidence it read is marked.
import type Anthropic from '@anthropic-ai/sdk';
import { cancellationSignal } from '@temporalio/activity';
import type { LearningSettings } from './contracts.js';
import type { PrismaClient } from '../db/client.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { createLlmGuard, modelFor, type LlmSettings } from '../llm/guard.js';
import { loadEvidence, markLearned } from './writing-evidence.js';
import { accountLessons, askForWritingLessons, proposalsOf, recordWritingProposals, settleWritingProposals, unannouncedWritingLessons } from './writing-lessons.js';
import type { LearningLlmActivities } from './activity-contracts.js';

/** Attempts at output that fails the tool's schema before the tick gives up (the next tick asks again). */
const OUTPUT_ATTEMPTS = 3;

export function createLearningLlmActivities(deps: {
  prisma: PrismaClient;
  sql: SqlExecutor;
  anthropic: Anthropic;
  settings: LlmSettings;
  learning: LearningSettings;
}): LearningLlmActivities {
  const guarded = createLlmGuard(deps, deps.settings);
  return {
    async proposeWritingLessons({ accountId }) {
      const { sql } = deps;
      if (!deps.learning.enabled) return { changed: [], read: 0, accepted: [], waiting: [] };
      const evidence = await loadEvidence(sql, accountId);
      if (!evidence.some((e) => e.edited && !e.learned)) return { changed: [], read: 0, accepted: [], waiting: await unannouncedWritingLessons(sql, accountId) };
      const [existing, [account]] = await Promise.all([
        accountLessons(sql, accountId),
        sql.query<{ email: string }>(`SELECT email FROM accounts WHERE id = $1`, [accountId]),
      ]);
      const out = await guarded(
        accountId,
        OUTPUT_ATTEMPTS,
        () => askForWritingLessons(deps.anthropic, { model: modelFor(deps.settings, 'learn'), accountId, evidence, existing, maxInputTokens: deps.settings.maxInputTokens, signal: cancellationSignal() }),
        'learn',
      );
      const changed = await recordWritingProposals(sql, proposalsOf({ accountId, accountEmail: account?.email ?? '', lessons: out.lessons, items: out.items, existing }));
      const unread = evidence.filter((e) => !e.learned).map((e) => e.id);
      const { accepted } = await settleWritingProposals(sql, accountId, unread);
      await markLearned(sql, unread);
      return { changed, read: out.items.size, accepted, waiting: await unannouncedWritingLessons(sql, accountId) };
    },
  };
}
