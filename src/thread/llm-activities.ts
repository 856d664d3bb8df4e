// LLM activities (task queue durable-inbox-llm): classification and drafting through
// @anthropic-ai/sdk, within the per-account daily token budget (src/llm/guard.ts).
import type Anthropic from '@anthropic-ai/sdk';
import { activityInfo, cancellationSignal, heartbeat } from '@temporalio/activity';
import type { PrismaClient } from '../db/client.js';
import { classifyEmail, draftReply } from '../llm/index.js';
import { createLlmGuard, type LlmSettings } from '../llm/guard.js';
import type { LlmActivities, LlmClassification, LlmDraft, PromptMessage, ReplyContext } from './activity-contracts.js';

/** What triageWithLlm heartbeats once the email is classified: a retry starts from here. */
interface TriageCheckpoint {
  classification: LlmClassification;
}

function isTriageCheckpoint(value: unknown): value is TriageCheckpoint {
  return typeof value === 'object' && value !== null && 'classification' in value;
}

export function createLlmActivities(deps: {
  prisma: PrismaClient;
  anthropic: Anthropic;
  settings: LlmSettings;
}): LlmActivities {
  const { prisma, anthropic, settings } = deps;

  const guarded = createLlmGuard(prisma, settings);

  async function classify(accountId: string, email: PromptMessage, instructions: string[], outputAttempts: number): Promise<LlmClassification> {
    const out = await guarded(accountId, outputAttempts, () =>
      classifyEmail(anthropic, {
        model: settings.model,
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
    checkpoint?: TriageCheckpoint,
  ): Promise<LlmDraft> {
    const out = await guarded(accountId, outputAttempts, () =>
      draftReply(anthropic, {
        model: settings.model,
        thread: input.thread,
        toneExamples: input.context.toneExamples,
        signature: input.context.signature,
        instructions: input.instructions,
        reworkInstructions: input.reworkInstructions,
        previousDraft: input.previousDraft,
        maxInputTokens: settings.maxInputTokens,
        signal: cancellationSignal(),
      }),
      'draft',
      checkpoint,
    );
    return { body: out.body, model: out.model, tokensIn: out.tokensIn, tokensOut: out.tokensOut };
  }

  return {
    async triageWithLlm({ accountId, email, thread, instructions, replyContext, outputAttempts }) {
      const checkpoint = activityInfo().heartbeatDetails;
      const classification = isTriageCheckpoint(checkpoint)
        ? checkpoint.classification
        : await classify(accountId, email, instructions, outputAttempts);
      heartbeat({ classification } satisfies TriageCheckpoint);
      if (classification.category !== 'needs_response' || !replyContext) return { classification };
      const draft = await write(accountId, outputAttempts, { thread, context: replyContext, instructions }, { classification });
      return { classification, draft };
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
