// The structured output of classification: a zod schema is the single source of truth, and the JSON
// Schema of the tool the model must call is derived from it, so the two cannot drift apart.
import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { CATEGORIES } from '../mail/types.js';
import { LlmOutputInvalidError, type OutputIssue } from './errors.js';

export const ClassificationSchema = z.object({
  category: z.enum(CATEGORIES),
  confidence: z.number().min(0).max(1),
  reason: z.string().min(1).max(500),
});

export type Classification = z.infer<typeof ClassificationSchema>;

export const CLASSIFY_TOOL_NAME = 'classify_email';

export function toInputSchema(schema: z.ZodType): Anthropic.Tool.InputSchema {
  // The $schema dialect line is noise to the model; the API wants just the object schema.
  const { $schema: _dialect, ...jsonSchema } = z.toJSONSchema(schema) as Record<string, unknown>;
  return { ...jsonSchema, type: 'object' };
}

export const CLASSIFY_TOOL: Anthropic.Tool = {
  name: CLASSIFY_TOOL_NAME,
  description:
    'Record the category of the newest message in the thread, how confident you are (0 to 1) and a one-sentence reason.',
  input_schema: toInputSchema(ClassificationSchema),
};

/**
 * The input of the forced tool's call in a response, checked against its zod schema: a missing call
 * or input that fails the schema is an LlmOutputInvalidError (retried up to the output attempts).
 */
export function parseToolCall<S extends z.ZodType>(response: Anthropic.Message, toolName: string, schema: S): z.infer<S> {
  const call = response.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use' && b.name === toolName);
  if (!call) throw new LlmOutputInvalidError([{ path: 'tool_use', message: `no ${toolName} call in the response (stop_reason ${response.stop_reason})` }]);
  const parsed = schema.safeParse(call.input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i): OutputIssue => ({ path: i.path.join('.') || '(input)', message: i.message }));
    throw new LlmOutputInvalidError(issues as [OutputIssue, ...OutputIssue[]]);
  }
  return parsed.data;
}
