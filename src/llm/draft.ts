// Drafting a reply (and re-drafting it with the user's rework instructions).
import type Anthropic from '@anthropic-ai/sdk';
import type { EmailForPrompt } from '../mail/types.js';
import { LlmOutputInvalidError, refusalOf } from './errors.js';
import { buildDraftPrompt } from './prompts.js';
import { tokensOf } from './usage.js';

export interface DraftReplyInput {
  model: string;
  /** The thread, oldest message first; the reply answers the last one. Old messages go first when over the cap. */
  thread: EmailForPrompt[];
  /** The user's recent replies (to this sender, preferably), for tone. */
  toneExamples: string[];
  signature?: string;
  /** Natural-language instructions of the applicable rule scopes. */
  instructions?: string[];
  /** What the user typed into the draft (extractReworkInstructions); with previousDraft, a rework. */
  reworkInstructions?: string;
  previousDraft?: string;
  /** Accepted writing lessons, already bounded in tokens. */
  lessons?: string[];
  maxInputTokens: number;
  maxOutputTokens?: number;
  signal?: AbortSignal;
}

export interface DraftReplyResult {
  /** Plain-text body of the reply. */
  body: string;
  model: string;
  tokensIn: number;
  tokensOut: number;
  /** Older messages of the thread left out to fit maxInputTokens. */
  omittedMessages: number;
  promptTruncated: boolean;
}

/**
 * Writes the body of a reply to the newest message. Throws LlmOutputInvalidError for an empty reply or one
 * cut off by max_tokens (a half sentence must never land in the user's drafts), LlmRefusedError when the
 * model declines.
 */
export async function draftReply(client: Anthropic, input: DraftReplyInput): Promise<DraftReplyResult> {
  const prompt = buildDraftPrompt(input);
  const response = await client.messages.create(
    {
      model: input.model,
      max_tokens: input.maxOutputTokens ?? 1024,
      system: prompt.system,
      messages: [{ role: 'user', content: prompt.user }],
    },
    { signal: input.signal },
  );
  // A refusal's text (if any) is never a draft.
  const refused = refusalOf(response);
  if (refused) throw refused;
  if (response.stop_reason === 'max_tokens') {
    throw new LlmOutputInvalidError([{ path: 'body', message: 'the reply was cut off at max_tokens' }]);
  }
  const body = response.content
    .filter((block): block is Anthropic.TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('')
    .trim();
  if (body === '') {
    throw new LlmOutputInvalidError([{ path: 'body', message: `empty reply (stop_reason ${response.stop_reason})` }]);
  }
  return {
    body,
    model: response.model,
    ...tokensOf(response.usage),
    omittedMessages: prompt.omittedMessages,
    promptTruncated: prompt.truncated,
  };
}
