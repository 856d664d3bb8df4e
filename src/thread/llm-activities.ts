// LLM activities (task queue durable-inbox-llm): classification and drafting through
// @anthropic-ai/sdk, within the per-account daily token budget (src/llm/guard.ts).
import type Anthropic from '@anthropic-ai/sdk';
import { cancellationSignal, log } from '@temporalio/activity';
import type { PrismaClient } from '../db/client.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { classifyEmail, draftReply, judgeExpectsReply } from '../llm/index.js';
import { createLlmGuard, modelFor, type LlmSettings } from '../llm/guard.js';
import { lessonRef, lessonsForDraft } from '../learning/lessons-for-draft.js';
import type { LlmActivities, LlmClassification, LlmDraft, PromptMessage, ReplyContext } from './activity-contracts.js';

export function createLlmActivities(deps: {
  prisma: PrismaClient;
  sql: SqlExecutor;
  anthropic: Anthropic;
  settings: LlmSettings;
}): LlmActivities {
  const { anthropic, settings } = deps;

  const guarded = createLlmGuard(deps, settings);

  async function classify(accountId: string, email: PromptMessage, instructions: string[], outputAttempts: number): Promise<LlmClassification> {
    const out = await guarded(accountId, outputAttempts, () =>
      classifyEmail(anthropic, {
        model: modelFor(settings, 'classify'),
        email,
        instructions,
        maxInputTokens: settings.maxInputTokens,
        signal: cancellationSignal(),
      }),
      'classify',
    );
    return { ...out.result, model: out.model, tokensIn: out.tokensIn, tokensOut: out.tokensOut };
  }

  async function write(
    accountId: string,
    outputAttempts: number,
    input: {
      thread: PromptMessage[];
      context: ReplyContext;
      instructions: string[];
      reworkInstructions?: string;
      previousDraft?: string;
    },
  ): Promise<LlmDraft> {
    // The reply answers the newest message not from the user: its sender's lessons apply.
    const sender = [...input.thread].reverse().find((m) => !m.fromUser)?.sender ?? '';
    const lessons = await lessonsForDraft(deps.sql, { accountId, sender, maxTokens: settings.lessonPromptTokens ?? 0 });
    const out = await guarded(accountId, outputAttempts, () =>
      draftReply(anthropic, {
        model: modelFor(settings, 'draft'),
        thread: input.thread,
        toneExamples: input.context.toneExamples,
        signature: input.context.signature,
        instructions: input.instructions,
        reworkInstructions: input.reworkInstructions,
        previousDraft: input.previousDraft,
        lessons: lessons.map((l) => l.text),
        maxInputTokens: settings.maxInputTokens,
        signal: cancellationSignal(),
      }),
      'draft',
    );
    return { body: out.body, model: out.model, tokensIn: out.tokensIn, tokensOut: out.tokensOut, ...(lessons.length > 0 ? { lessons: lessons.map(lessonRef) } : {}) };
  }

  return {
    async expectsReply({ accountId, sent, outputAttempts }) {
      const out = await guarded(accountId, outputAttempts, () =>
        judgeExpectsReply(anthropic, { model: modelFor(settings, 'expects_reply'), sent, maxInputTokens: settings.maxInputTokens, signal: cancellationSignal() }),
        'expects_reply',
      );
      return { ...out.result, model: out.model, tokensIn: out.tokensIn, tokensOut: out.tokensOut };
    },

    async triageWithLlm({ accountId, email, thread, instructions, replyContext, outputAttempts }) {
      const classification = await classify(accountId, email, instructions, outputAttempts);
      if (classification.category !== 'needs_response' || !replyContext) return { classification };
      try {
        const draft = await write(accountId, outputAttempts, { thread, context: replyContext, instructions });
        return { classification, draft };
      } catch (err) {
        // The classification stands: the workflow writes the reply with writeDraft, under its own
        // retries (or waits while the LLM is paused), instead of this activity classifying again.
        if (cancellationSignal().aborted) throw err;
        log.warn('the reply could not be written with the classification; the workflow writes it next', {
          accountId,
          error: err instanceof Error ? err.message : String(err),
        });
        return { classification };
      }
    },

    async writeDraft({ accountId, thread, toneExamples, signature, instructions, reworkInstructions, previousDraft, outputAttempts }) {
      return write(accountId, outputAttempts, {
        thread,
        context: { toneExamples, signature },
        instructions,
        reworkInstructions,
        previousDraft,
      });
    },
  };
}
