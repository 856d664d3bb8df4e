// Tier two of classification: ask the model, forcing the classify tool so the answer is structured,
// and accept it only if it passes the zod schema.
import type Anthropic from '@anthropic-ai/sdk';
import type { EmailForPrompt } from '../mail/types.js';
import { refusalOf } from './errors.js';
import { callForcedTool } from './forced-tool.js';
import { buildClassificationPrompt, estimateTokens } from './prompts.js';
import { CLASSIFY_TOOL, CLASSIFY_TOOL_NAME, ClassificationSchema, parseToolCall, type Classification } from './schemas.js';

export interface ClassifyEmailInput {
  model: string;
  /** The newest message of the thread. */
  email: EmailForPrompt;
  /** Natural-language instructions of the applicable rule scopes (applicableInstructions). */
  instructions: string[];
  /** Cap on the prompt, tool definition included; the email body is cut to fit. */
  maxInputTokens: number;
  maxOutputTokens?: number;
  /** E.g. the activity's cancellationSignal(). */
  signal?: AbortSignal;
}

export interface ClassifyEmailResult {
  result: Classification;
  /** The model that answered, as the API reports it. */
  model: string;
  tokensIn: number;
  tokensOut: number;
  /** True when the email or the instructions were cut to fit maxInputTokens. */
  promptTruncated: boolean;
}

const TOOL_TOKENS = estimateTokens(JSON.stringify([CLASSIFY_TOOL]));

/**
 * Classifies one email with a forced tool call. Throws LlmOutputInvalidError when the model's answer does
 * not fit ClassificationSchema (retryable), LlmRefusedError / LlmOutputTruncatedError (callForcedTool),
 * and the SDK's APIError subclasses for HTTP failures (map them with classifyAnthropicError).
 */
export async function classifyEmail(client: Anthropic, input: ClassifyEmailInput): Promise<ClassifyEmailResult> {
  const { params, promptTruncated } = classificationRequest(input);
  const { response, tokensIn, tokensOut } = await callForcedTool(client, params, input.signal);
  const result = parseToolCall(response, CLASSIFY_TOOL_NAME, ClassificationSchema);
  return { result, model: response.model, tokensIn, tokensOut, promptTruncated };
}

/** The Messages request that classifies one email: what classifyEmail sends, and a Message Batch holds. */
export function classificationRequest(input: Omit<ClassifyEmailInput, 'signal'>): { params: Anthropic.MessageCreateParamsNonStreaming; promptTruncated: boolean } {
  const prompt = buildClassificationPrompt({
    email: input.email,
    instructions: input.instructions,
    maxInputTokens: input.maxInputTokens,
    reservedTokens: TOOL_TOKENS,
  });
  return {
    params: {
      model: input.model,
      max_tokens: input.maxOutputTokens ?? 512,
      system: prompt.system,
      messages: [{ role: 'user', content: prompt.user }],
      tools: [CLASSIFY_TOOL],
      tool_choice: { type: 'tool', name: CLASSIFY_TOOL_NAME },
    },
    promptTruncated: prompt.truncated,
  };
}

/**
 * The classification an answer holds (a Message Batch's result), or why it holds none: a refusal, an
 * answer cut at max_tokens, a tool call that fails the schema (each of which classifyEmail throws).
 */
export function classificationOf(response: Anthropic.Message): { classification: Classification } | { notUsable: string } {
  const refused = refusalOf(response);
  if (refused) return { notUsable: refused.message };
  if (response.stop_reason === 'max_tokens') return { notUsable: 'the answer was cut off at max_tokens' };
  try {
    return { classification: parseToolCall(response, CLASSIFY_TOOL_NAME, ClassificationSchema) };
  } catch (err) {
    return { notUsable: err instanceof Error ? err.message : String(err) };
  }
}
