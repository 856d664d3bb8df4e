// Whether a message the user sent expects an answer (the follow-up's question when the rules do not
// decide it): a forced tool call whose input must pass the zod schema, as for classification.
import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import type { EmailForPrompt } from '../mail/types.js';
import { estimateTokens, formatEmail, truncateToTokens } from './prompts.js';
import { parseToolCall, toInputSchema } from './schemas.js';
import { callForcedTool } from './forced-tool.js';

export const ExpectsReplySchema = z.object({
  expectsReply: z.boolean(),
  reason: z.string().min(1).max(500),
});

export type ExpectsReply = z.infer<typeof ExpectsReplySchema>;

export const EXPECTS_REPLY_TOOL_NAME = 'record_expects_reply';

export const EXPECTS_REPLY_TOOL: Anthropic.Tool = {
  name: EXPECTS_REPLY_TOOL_NAME,
  description: 'Record whether the message the user sent expects an answer from its recipients, and a one-sentence reason.',
  input_schema: toInputSchema(ExpectsReplySchema),
};

const SYSTEM =
  "You help the user's inbox assistant keep track of conversations. The user sent the email below. Decide whether " +
  'it expects an answer from its recipients: a question, a request, a proposal waiting for a yes or no. A thank-you, ' +
  `an acknowledgement or an FYI expects none. Call the ${EXPECTS_REPLY_TOOL_NAME} tool once; reason is one short sentence.`;

export interface ExpectsReplyInput {
  model: string;
  /** The message the user sent (mail text: redacted by formatEmail). */
  sent: EmailForPrompt;
  maxInputTokens: number;
  signal?: AbortSignal;
}

export async function judgeExpectsReply(
  client: Anthropic,
  input: ExpectsReplyInput,
): Promise<{ result: ExpectsReply; model: string; tokensIn: number; tokensOut: number }> {
  const room = Math.max(64, input.maxInputTokens - estimateTokens(SYSTEM) - estimateTokens(JSON.stringify(EXPECTS_REPLY_TOOL)) - 64);
  const email = formatEmail({ ...input.sent, body: truncateToTokens(input.sent.body.trim(), room) }, 'email');
  const { response, tokensIn, tokensOut } = await callForcedTool(
    client,
    {
      model: input.model,
      max_tokens: 256,
      system: SYSTEM,
      messages: [{ role: 'user', content: `Does this email expect an answer?\n\n${email}` }],
      tools: [EXPECTS_REPLY_TOOL],
      tool_choice: { type: 'tool', name: EXPECTS_REPLY_TOOL_NAME },
    },
    input.signal,
  );
  const result = parseToolCall(response, EXPECTS_REPLY_TOOL_NAME, ExpectsReplySchema);
  return { result, model: response.model, tokensIn, tokensOut };
}
