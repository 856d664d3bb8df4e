import type Anthropic from '@anthropic-ai/sdk';

/** Billed input and output tokens of one response; cached prompt tokens count as input. */
export function tokensOf(usage: Anthropic.Usage): { tokensIn: number; tokensOut: number } {
  return {
    tokensIn: usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0),
    tokensOut: usage.output_tokens,
  };
}
