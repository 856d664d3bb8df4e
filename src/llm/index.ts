// The LLM service: thin, typed calls over @anthropic-ai/sdk for the LLM activities.
export { createLlmClient, type LlmClientOptions } from './client.js';
export { classificationOf, classificationRequest, classifyEmail, type ClassifyEmailInput, type ClassifyEmailResult } from './classify.js';
export { draftReply, type DraftReplyInput, type DraftReplyResult } from './draft.js';
export {
  LlmOutputInvalidError,
  LlmOutputTruncatedError,
  LlmRefusedError,
  refusalOf,
  classifyAnthropicError,
  retryAfterMs,
  type AnthropicErrorKind,
  type OutputIssue,
} from './errors.js';
export { buildClassificationPrompt, buildDraftPrompt, estimateTokens, type Prompt } from './prompts.js';
export { CLASSIFY_TOOL, CLASSIFY_TOOL_NAME, ClassificationSchema, type Classification } from './schemas.js';
export { judgeExpectsReply, EXPECTS_REPLY_TOOL_NAME, ExpectsReplySchema, type ExpectsReply } from './expects-reply.js';
