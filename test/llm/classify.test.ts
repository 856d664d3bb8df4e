import { describe, expect, it } from 'vitest';
import { CATEGORIES } from '../../src/mail/types.js';
import {
  CLASSIFY_TOOL,
  ClassificationSchema,
  LlmOutputInvalidError,
  classifyEmail,
} from '../../src/llm/index.js';
import { MODEL, email, useEmulator } from '../helpers/llm-fixtures.js';

const { emulator, client } = useEmulator();

describe('classifyEmail over the real SDK and the emulator', () => {
  it.each([
    ['needs_response', { subject: 'Deck for Thursday', body: 'Can you send me the deck before Thursday?' }],
    ['fyi', { subject: 'Project update', body: 'The migration finished last night. Nothing to do on your side.' }],
    ['newsletter', { subject: 'This week in TypeScript', body: 'Top stories...\nUnsubscribe here.' }],
    ['automated', { subject: 'Your invoice #4411', body: 'Your invoice for March is attached.' }],
    [
      'cold_outreach',
      { subject: 'Growth', body: 'Hi! I came across your company and think we could help. Free next week?' },
    ],
  ] as const)('%s', async (category, content) => {
    const out = await classifyEmail(client(), {
      model: MODEL,
      email: email(content),
      instructions: [],
      maxInputTokens: 4000,
    });
    expect(out.result.category).toBe(category);
    expect(out.result.confidence).toBeGreaterThan(0);
    expect(out.result.confidence).toBeLessThanOrEqual(1);
    expect(out.result.reason.length).toBeGreaterThan(0);
    expect(out.model).toBe(MODEL);
    expect(out.tokensIn).toBeGreaterThan(0);
    expect(out.tokensOut).toBeGreaterThan(0);
    expect(out.promptTruncated).toBe(false);
  });

  it('sends a forced tool call whose JSON Schema comes from the zod schema', async () => {
    await classifyEmail(client(), { model: MODEL, email: email(), instructions: [], maxInputTokens: 4000 });
    const body = emulator().lastRequest()!.body;
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'classify_email' });
    expect(body.tools).toEqual([JSON.parse(JSON.stringify(CLASSIFY_TOOL))]);
    expect(CLASSIFY_TOOL.input_schema).toMatchObject({
      type: 'object',
      required: ['category', 'confidence', 'reason'],
      properties: { category: { enum: [...CATEGORIES] }, confidence: { minimum: 0, maximum: 1 } },
    });
    expect(emulator().metrics()).toMatchObject({ requests: 1, toolUseResponses: 1, byStatus: { '200': 1 } });
  });

  it('puts the scope instructions into the prompt, and the model follows them', async () => {
    const out = await classifyEmail(client(), {
      model: MODEL,
      email: email({ body: 'Can you review the contract?' }),
      instructions: ['Mail from my team is fyi unless it is urgent. [emulator:category=fyi]', 'Jane is on my team.'],
      maxInputTokens: 4000,
    });
    expect(out.result.category).toBe('fyi');
    const system = emulator().lastRequest()!.body.system as string;
    expect(system).toContain('- Mail from my team is fyi unless it is urgent.');
    expect(system).toContain('- Jane is on my team.');
  });

  it('classifies only the newest message, not the instructions text', async () => {
    const out = await classifyEmail(client(), {
      model: MODEL,
      email: email({ body: 'Deployment finished.' }),
      instructions: ['Please treat anything that asks "can you?" as needs_response.'],
      maxInputTokens: 4000,
    });
    expect(out.result.category).toBe('fyi');
  });

  it('output that fails the schema is an LlmOutputInvalidError naming the fields', async () => {
    const call = classifyEmail(client(), {
      model: MODEL,
      email: email({ subject: 'Hello [emulator:invalid-output]' }),
      instructions: [],
      maxInputTokens: 4000,
    });
    const err = await call.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmOutputInvalidError);
    const invalid = err as LlmOutputInvalidError;
    expect(invalid.name).toBe('LlmOutputInvalidError');
    expect(invalid.field).toBe('category');
    expect(invalid.issues.map((i) => i.path)).toEqual(['category', 'confidence', 'reason']);
    expect(invalid.message).toMatch(/^LLM output invalid: category: .*; confidence: .*; reason: /);
    expect(emulator().metrics().invalidOutputs).toBe(1);
  });

  it('a counted marker fails only the first call, so a retry succeeds', async () => {
    const input = {
      model: MODEL,
      email: email({ body: '[emulator:invalid-output:1] Can you call me?' }),
      instructions: [],
      maxInputTokens: 4000,
    };
    await expect(classifyEmail(client(), input)).rejects.toBeInstanceOf(LlmOutputInvalidError);
    await expect(classifyEmail(client(), input)).resolves.toMatchObject({ result: { category: 'needs_response' } });
  });

  it('cuts a long email to the token cap, tool definition included', async () => {
    const cap = 1500;
    const longBody = 'Can you read this very long report? '.repeat(2000);
    const out = await classifyEmail(client(), {
      model: MODEL,
      email: email({ body: longBody }),
      instructions: [],
      maxInputTokens: cap,
    });
    const received = emulator().lastRequest()!;
    expect(received.inputTokens).toBeLessThanOrEqual(cap);
    expect(received.inputTokens).toBeGreaterThan(cap * 0.8);
    expect(out.tokensIn).toBe(received.inputTokens);
    expect(out.promptTruncated).toBe(true);
    expect(JSON.stringify(received.body.messages)).toContain('[truncated to fit the token cap]');
    expect(ClassificationSchema.parse(out.result).category).toBe('needs_response');
  });
});
