// The emulator's HTTP surface: what the real API would answer, and the control endpoints.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startAnthropicEmulator, type AnthropicEmulator } from '../../emulators/anthropic/index.js';
import { MODEL } from '../helpers/llm-fixtures.js';

let emulator: AnthropicEmulator;
let client: Anthropic;

beforeAll(async () => {
  emulator = await startAnthropicEmulator({ seed: 42 });
  client = new Anthropic({ apiKey: 'test-key', baseURL: emulator.url, maxRetries: 0 });
});
beforeEach(() => {
  emulator.reset();
  emulator.configure({ latencyMs: 0 });
});
afterAll(async () => {
  await emulator.close();
});

const headers = { 'content-type': 'application/json', 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01' };

async function post(path: string, body: unknown, extraHeaders: Record<string, string> = headers) {
  const res = await fetch(`${emulator.url}${path}`, {
    method: 'POST',
    headers: extraHeaders,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> };
}

const valid: Anthropic.MessageCreateParamsNonStreaming = {
  model: MODEL,
  max_tokens: 100,
  messages: [{ role: 'user', content: 'Hello there' }],
};

describe('POST /v1/messages', () => {
  it('answers in the API shape, with ids, stop_reason and usage', async () => {
    const message = await client.messages.create(valid);
    expect(message.id).toMatch(/^msg_01[A-Za-z0-9]{22}$/);
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: MODEL,
      stop_reason: 'end_turn',
      stop_sequence: null,
    });
    expect(message.content[0]?.type).toBe('text');
    expect(message.usage.input_tokens).toBe(Math.ceil('Hello there'.length / 4));
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it('is deterministic for the same seed and request order', async () => {
    const a = await client.messages.create(valid);
    emulator.reset();
    const b = await client.messages.create(valid);
    expect(b).toEqual(a);
  });

  it('401 without an API key', async () => {
    const { 'x-api-key': _key, ...noKey } = headers;
    const res = await post('/v1/messages', valid, noKey);
    expect(res.status).toBe(401);
    expect(res.json).toMatchObject({
      type: 'error',
      error: { type: 'authentication_error', message: 'x-api-key header is required' },
    });
    expect(res.headers.get('request-id')).toMatch(/^req_01/);
  });

  it('400 without anthropic-version, and for a body that is not JSON', async () => {
    const { 'anthropic-version': _v, ...noVersion } = headers;
    expect((await post('/v1/messages', valid, noVersion)).json).toMatchObject({
      error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' },
    });
    const notJson = await post('/v1/messages', '{"model":');
    expect(notJson.status).toBe(400);
    expect(notJson.json).toMatchObject({ error: { type: 'invalid_request_error' } });
  });

  it.each([
    [{ ...valid, model: undefined }, 'model: Field required'],
    [{ ...valid, max_tokens: undefined }, 'max_tokens: Field required'],
    [{ ...valid, max_tokens: 0 }, 'max_tokens: Input should be greater than or equal to 1'],
    [{ ...valid, max_tokens: 1.5 }, 'max_tokens: Input should be a valid integer'],
    [{ ...valid, messages: undefined }, 'messages: Field required'],
    [{ ...valid, messages: [] }, 'messages: at least one message is required'],
    [
      { ...valid, messages: [{ role: 'system', content: 'x' }] },
      "messages.0.role: Input should be 'user' or 'assistant'",
    ],
    [{ ...valid, messages: [{ role: 'user' }] }, 'messages.0.content: Field required'],
    [{ ...valid, surprise: true }, 'surprise: Extra inputs are not permitted'],
    [
      { ...valid, tool_choice: { type: 'tool', name: 'x' } },
      'tool_choice: tool_choice may only be specified while providing tools.',
    ],
    [
      { ...valid, tools: [{ name: 'a', input_schema: { type: 'object' } }], tool_choice: { type: 'tool', name: 'b' } },
      "tool_choice: Tool 'b' not found in 'tools'",
    ],
    [
      { ...valid, tools: [{ name: 'bad name', input_schema: { type: 'object' } }] },
      "tools.0.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
    ],
  ])('400 invalid_request_error: %j', async (body, message) => {
    const res = await post('/v1/messages', body);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message } });
  });

  it('404 for an unknown model or path', async () => {
    expect((await post('/v1/messages', { ...valid, model: 'gpt-4' })).json).toMatchObject({
      error: { type: 'not_found_error', message: 'model: gpt-4' },
    });
    expect((await post('/v1/nothing', valid)).status).toBe(404);
  });

  it('answers a forced tool with input that fits any simple schema', async () => {
    const message = await client.messages.create({
      ...valid,
      messages: [{ role: 'user', content: 'Please triage: can you call me back?' }],
      tools: [
        {
          name: 'triage',
          input_schema: {
            type: 'object',
            properties: {
              label: { type: 'string', enum: ['needs_response', 'other'] },
              score: { type: 'integer', minimum: 1, maximum: 5 },
              tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
              urgent: { type: 'boolean' },
            },
            required: ['label', 'score', 'tags', 'urgent'],
          },
        },
      ],
      tool_choice: { type: 'tool', name: 'triage' },
    });
    expect(message.stop_reason).toBe('tool_use');
    const block = message.content[0];
    expect(block?.type).toBe('tool_use');
    if (block?.type !== 'tool_use') return;
    expect(block.id).toMatch(/^toolu_01/);
    expect(block.input).toEqual({ label: 'needs_response', score: 1, tags: ['emulated tags'], urgent: false });
  });

  it('cuts text at max_tokens', async () => {
    const message = await client.messages.create({ ...valid, max_tokens: 3 });
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage.output_tokens).toBe(3);
  });

  it('counts tokens', async () => {
    const { input_tokens } = await client.messages.countTokens({
      model: MODEL,
      messages: valid.messages,
    });
    expect(input_tokens).toBe(Math.ceil('Hello there'.length / 4));
  });

  it('waits the configured latency and serves concurrent calls in parallel', async () => {
    emulator.configure({ latencyMs: 200 });
    const started = performance.now();
    await Promise.all(Array.from({ length: 40 }, () => client.messages.create(valid)));
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(195);
    // In parallel: the calls overlap in the emulator (not a timing bound, which a loaded machine breaks).
    expect(emulator.metrics()).toMatchObject({ requests: 40, inFlight: 0, byStatus: { '200': 40 } });
    expect(emulator.metrics().maxInFlight).toBeGreaterThan(20);
  });
});

describe('control endpoints', () => {
  it('GET /__emulator/metrics reports calls and tokens', async () => {
    const message = await client.messages.create(valid);
    const metrics = (await (await fetch(`${emulator.url}/__emulator/metrics`)).json()) as Record<string, unknown>;
    expect(metrics).toMatchObject({
      requests: 1,
      textResponses: 1,
      inputTokens: message.usage.input_tokens,
      outputTokens: message.usage.output_tokens,
      lastRequest: { body: valid, inputTokens: message.usage.input_tokens },
    });
  });

  it('POST /__emulator/config changes switches and rejects bad values', async () => {
    const ok = await post('/__emulator/config', { latencyMs: 5, errorRates: { rateLimit: 0.25 } }, {});
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({
      latencyMs: 5,
      errorRates: { rateLimit: 0.25, overloaded: 0, server: 0 },
      seed: 42,
    });
    const bad = await post('/__emulator/config', { errorRates: { overloaded: 0.9 } }, {});
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error: { message: 'errorRates: the error rates must add up to at most 1' } });
    expect((await post('/__emulator/config', { latencyMs: -1 }, {})).status).toBe(400);
    expect((await post('/__emulator/config', { unknown: 1 }, {})).status).toBe(400);
    emulator.configure({ errorRates: { rateLimit: 0 } });
  });

  it('POST /__emulator/reset zeroes the metrics', async () => {
    await client.messages.create(valid);
    expect((await post('/__emulator/reset', {}, {})).json).toEqual({ ok: true });
    expect(emulator.metrics()).toMatchObject({ requests: 0, inputTokens: 0, byStatus: {}, lastRequest: null });
  });
});
