// A call that forces one tool (classification, expects-reply, writing lessons): a refusal is an
// LlmRefusedError; an answer cut at max_tokens carries a partial tool input (handling-stop-reasons),
// which is never parsed as a decision: the call is made once more with a larger budget, and if that
// is cut too it is an LlmOutputTruncatedError.
import type Anthropic from '@anthropic-ai/sdk';
import { LlmOutputTruncatedError, refusalOf } from './errors.js';
import { tokensOf } from './usage.js';

/** How much larger the budget of the one retry is. */
export const TRUNCATED_RETRY_FACTOR = 4;

export interface ForcedToolAnswer {
  response: Anthropic.Message;
  /** Tokens of every call made, the cut one included. */
  tokensIn: number;
  tokensOut: number;
}

export async function callForcedTool(
  client: Anthropic,
  params: Anthropic.MessageCreateParamsNonStreaming,
  signal?: AbortSignal,
): Promise<ForcedToolAnswer> {
  let tokensIn = 0;
  let tokensOut = 0;
  let maxTokens = params.max_tokens;
  for (let attempt = 1; ; attempt++) {
    const response = await client.messages.create({ ...params, max_tokens: maxTokens }, { signal });
    const used = tokensOf(response.usage);
    tokensIn += used.tokensIn;
    tokensOut += used.tokensOut;
    const refused = refusalOf(response);
    if (refused) throw refused;
    if (response.stop_reason !== 'max_tokens') return { response, tokensIn, tokensOut };
    if (attempt === 2) throw new LlmOutputTruncatedError(maxTokens);
    maxTokens *= TRUNCATED_RETRY_FACTOR;
  }
}
