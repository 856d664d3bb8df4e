// The emulator against Anthropic's documented Messages API, one point of issue 35 per test, each
// through the official SDK (or raw HTTP where the SDK would hide what is checked) and citing the page.
import Anthropic, { APIError, NotFoundError } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startAnthropicEmulator, type AnthropicEmulator } from '../../emulators/anthropic/index.js';

let emulator: AnthropicEmulator;
let client: Anthropic;

beforeAll(async () => {
  emulator = await startAnthropicEmulator({ seed: 7 });
  client = new Anthropic({ apiKey: 'test-key', baseURL: emulator.url, maxRetries: 0 });
});
beforeEach(() => {
  emulator.reset();
  emulator.configure({ apiKey: null, rateLimits: null });
});
afterAll(async () => {
  await emulator.close();
});

const SONNET_46 = 'claude-sonnet-4-6';
const SONNET_45 = 'claude-sonnet-4-5';
const HAIKU_45 = 'claude-haiku-4-5';
const hello: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hello there' }];

/** The API error a call fails with (status, error type, message). */
async function failure(call: Promise<unknown>): Promise<{ status: number | undefined; type: string | undefined; message: string | undefined }> {
  try {
    await call;
  } catch (err) {
    if (!(err instanceof APIError)) throw err;
    const body = err.error as { error?: { type?: string; message?: string } } | undefined;
    return { status: err.status, type: body?.error?.type, message: body?.error?.message };
  }
  throw new Error('the call succeeded');
}

const badRequest = (message: string) => ({ status: 400, type: 'invalid_request_error', message });

describe('validation', () => {
  // platform.claude.com/docs/en/api/errors: 404 not_found_error "The requested resource was not found";
  // models overview: a retired model's inference requests fail.
  it('answers an unknown or a retired claude-* model with 404 not_found_error', async () => {
    expect(await failure(client.messages.create({ model: 'claude-sonnet-9-9', max_tokens: 10, messages: hello }))).toEqual({
      status: 404,
      type: 'not_found_error',
      message: 'model: claude-sonnet-9-9',
    });
    expect(await failure(client.messages.create({ model: 'claude-3-5-sonnet-20241022', max_tokens: 10, messages: hello }))).toMatchObject({
      status: 404,
      type: 'not_found_error',
    });
    expect((await client.messages.create({ model: SONNET_46, max_tokens: 10, messages: hello })).model).toBe(SONNET_46);
  });

  // platform.claude.com/docs/en/about-claude/models/whats-new-claude-4-6#prefill-removal: "Prefilling
  // assistant messages returns a 400 error on Claude 4.6 models".
  it('refuses an assistant prefill on the 4.6 models, accepts it on 4.5', async () => {
    const prefilled: Anthropic.MessageParam[] = [...hello, { role: 'assistant', content: '{' }];
    expect(await failure(client.messages.create({ model: SONNET_46, max_tokens: 50, messages: prefilled }))).toEqual(
      badRequest('This model does not support assistant message prefill. The conversation must end with a user message.'),
    );
    expect((await client.messages.create({ model: SONNET_45, max_tokens: 50, messages: prefilled })).type).toBe('message');
  });

  // platform.claude.com/docs/en/api/messages (messages: "all messages must have non-empty content except
  // for the optional final assistant message"; text blocks must be non-empty).
  it('refuses empty text content', async () => {
    expect(await failure(client.messages.create({ model: SONNET_46, max_tokens: 10, messages: [{ role: 'user', content: '' }] }))).toEqual(
      badRequest('messages.0: all messages must have non-empty content except for the optional final assistant message'),
    );
    expect(
      await failure(client.messages.create({ model: SONNET_46, max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] })),
    ).toEqual(badRequest('messages.0.content.0: text content blocks must be non-empty'));
  });

  // platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use: input_schema is "a JSON Schema
  // object defining the expected parameters"; the API checks it against draft 2020-12.
  it('refuses a tool whose input_schema is not a valid JSON Schema', async () => {
    const tools = [{ name: 'lookup', input_schema: { type: 'object' as const, properties: { q: { type: 'strnig' } } } }];
    const refused = await failure(client.messages.create({ model: SONNET_46, max_tokens: 10, messages: hello, tools }));
    expect(refused).toMatchObject({ status: 400, type: 'invalid_request_error' });
    expect(refused.message).toMatch(/^tools\.0\.custom\.input_schema: JSON schema is invalid\. It must match JSON Schema draft 2020-12/);
    const fine = [{ name: 'lookup', input_schema: { type: 'object' as const, properties: { q: { type: 'string' } } } }];
    expect((await client.messages.create({ model: SONNET_46, max_tokens: 10, messages: hello, tools: fine })).type).toBe('message');
  });

  // platform.claude.com/docs/en/build-with-claude/prompt-caching: "You can define up to 4 cache
  // breakpoints"; cache_control is {type: "ephemeral", ttl?: "5m" | "1h"}.
  it('refuses a fifth cache_control breakpoint and an unknown cache_control type', async () => {
    const block = (text: string): Anthropic.TextBlockParam => ({ type: 'text', text, cache_control: { type: 'ephemeral' } });
    const five: Anthropic.MessageParam[] = [{ role: 'user', content: ['a', 'b', 'c', 'd', 'e'].map(block) }];
    expect(await failure(client.messages.create({ model: SONNET_46, max_tokens: 10, messages: five }))).toEqual(
      badRequest('A maximum of 4 blocks with cache_control may be provided. Found 5.'),
    );
    const four: Anthropic.MessageParam[] = [{ role: 'user', content: ['a', 'b', 'c', 'd'].map(block) }];
    expect((await client.messages.create({ model: SONNET_46, max_tokens: 10, messages: four })).type).toBe('message');
    const persistent = { type: 'text', text: 'x', cache_control: { type: 'persistent' } } as unknown as Anthropic.TextBlockParam;
    expect(await failure(client.messages.create({ model: SONNET_46, max_tokens: 10, messages: [{ role: 'user', content: [persistent] }] }))).toEqual(
      badRequest("messages.0.content.0.text.cache_control.ephemeral.type: Input should be 'ephemeral'"),
    );
  });

  // platform.claude.com/docs/en/build-with-claude/vision: supported formats JPEG, PNG, GIF, WebP.
  it('refuses images of an unsupported media type', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    const image = (media_type: string) =>
      [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type, data: png } }, { type: 'text', text: 'What is it?' }] }] as Anthropic.MessageParam[];
    expect(await failure(client.messages.create({ model: SONNET_46, max_tokens: 10, messages: image('image/bmp') }))).toEqual(
      badRequest("messages.0.content.0.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"),
    );
    expect((await client.messages.create({ model: SONNET_46, max_tokens: 10, messages: image('image/png') })).type).toBe('message');
  });

  // platform.claude.com/docs/en/about-claude/models/overview: max output 128K tokens for Opus/Sonnet 4.6,
  // 64K for Sonnet 4.5 and Haiku 4.5.
  it('limits max_tokens per model', async () => {
    // An explicit timeout: without one the SDK asks for streaming when max_tokens is this large.
    const long = { timeout: 30_000 };
    expect((await client.messages.create({ model: SONNET_46, max_tokens: 100_000, messages: hello }, long)).type).toBe('message');
    expect(await failure(client.messages.create({ model: SONNET_45, max_tokens: 100_000, messages: hello }, long))).toEqual(
      badRequest(`max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for ${SONNET_45}`),
    );
    expect(await failure(client.messages.create({ model: 'claude-opus-4-6', max_tokens: 128_001, messages: hello }, long))).toMatchObject(
      badRequest('max_tokens: 128001 > 128000, which is the maximum allowed number of output tokens for claude-opus-4-6'),
    );
  });
});

describe('responses', () => {
  // platform.claude.com/docs/en/build-with-claude/handling-stop-reasons: refusal "Claude declined to
  // respond. Read stop_details"; RefusalStopDetails in the SDK's messages.d.ts.
  it('answers stop_reason refusal with stop_details, by script and by the [emulator:refusal] marker', async () => {
    const marker = emulator.script('declines', [{ refusal: true, category: 'cyber' }]);
    const scripted = await client.messages.create({ model: SONNET_46, max_tokens: 100, messages: [{ role: 'user', content: `Write malware ${marker}` }] });
    expect(scripted).toMatchObject({ stop_reason: 'refusal', content: [], stop_details: { type: 'refusal', category: 'cyber' } });

    const email = '<email>\nFrom: a@b.test\nSubject: hi\n\nPlease reply [emulator:refusal]\n</email>';
    const marked = await client.messages.create({ model: SONNET_46, max_tokens: 100, messages: [{ role: 'user', content: email }] });
    expect(marked).toMatchObject({ stop_reason: 'refusal', stop_details: { type: 'refusal' } });
  });

  // handling-stop-reasons: pause_turn "Send the assistant content back to continue" (no prefill error).
  it('answers stop_reason pause_turn, and continues the turn when its content is sent back', async () => {
    const marker = emulator.script('long-turn', [{ pause: true }, { text: 'All done.' }]);
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: `Research this ${marker}` }];
    const paused = await client.messages.create({ model: SONNET_46, max_tokens: 100, messages });
    expect(paused.stop_reason).toBe('pause_turn');
    const resumed = await client.messages.create({
      model: SONNET_46,
      max_tokens: 100,
      messages: [...messages, { role: 'assistant', content: paused.content as Anthropic.TextBlockParam[] }],
    });
    expect(resumed).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'All done.' }] });
  });

  // handling-stop-reasons, max_tokens: "If Claude's response is cut off due to hitting the max_tokens limit,
  // and the truncated response contains an incomplete tool use block, you'll need to retry the request
  // with a higher max_tokens value".
  it('cuts a forced tool call at max_tokens: stop_reason max_tokens with a partial input', async () => {
    const tool: Anthropic.Tool = {
      name: 'record',
      input_schema: { type: 'object', properties: { label: { type: 'string' }, reason: { type: 'string' } }, required: ['label', 'reason'] },
    };
    const ask = (max_tokens: number) =>
      client.messages.create({ model: SONNET_46, max_tokens, messages: [{ role: 'user', content: 'Label this email please.' }], tools: [tool], tool_choice: { type: 'tool', name: 'record' } });
    const whole = await ask(500);
    expect(whole.stop_reason).toBe('tool_use');
    const cut = await ask(5);
    expect(cut.stop_reason).toBe('max_tokens');
    expect(cut.usage.output_tokens).toBe(5);
    const block = cut.content[0];
    expect(block?.type).toBe('tool_use');
    const full = (whole.content[0] as Anthropic.ToolUseBlock).input as Record<string, unknown>;
    const partial = (block as Anthropic.ToolUseBlock).input as Record<string, unknown>;
    expect(JSON.stringify(partial).length).toBeLessThan(JSON.stringify(full).length);
    expect(Object.keys(partial).every((k) => k in full)).toBe(true);
  });

  // handling-stop-reasons: stop_sequence "Claude emitted one of your stop_sequences. Read stop_sequence".
  it('honours stop_sequences: the text ends before the first one it contains', async () => {
    const marker = emulator.script('stops-at-end', [{ text: 'First part. END Second part.' }]);
    const message = await client.messages.create({
      model: SONNET_46,
      max_tokens: 100,
      stop_sequences: ['Second', 'END'],
      messages: [{ role: 'user', content: marker }],
    });
    expect(message).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'END', content: [{ type: 'text', text: 'First part. ' }] });
  });

  // platform.claude.com/docs/en/api/rate-limits: anthropic-ratelimit-requests-{limit,remaining,reset} and the
  // tokens/input-tokens/output-tokens variants on every response; 429 with retry-after when a limit is hit.
  it('sends anthropic-ratelimit-* headers and answers 429 with retry-after over a configured limit', async () => {
    emulator.configure({ rateLimits: { requestsPerMinute: 2, inputTokensPerMinute: 100_000, outputTokensPerMinute: 100_000 } });
    const { response } = await client.messages.create({ model: SONNET_46, max_tokens: 10, messages: hello }).withResponse();
    expect(response.headers.get('anthropic-ratelimit-requests-limit')).toBe('2');
    expect(response.headers.get('anthropic-ratelimit-requests-remaining')).toBe('1');
    expect(Date.parse(response.headers.get('anthropic-ratelimit-requests-reset')!)).toBeGreaterThan(Date.now() - 1000);
    for (const name of ['tokens', 'input-tokens', 'output-tokens']) {
      expect(response.headers.get(`anthropic-ratelimit-${name}-remaining`)).toMatch(/^\d+$/);
    }
    await client.messages.create({ model: SONNET_46, max_tokens: 10, messages: hello });
    const limited = await failure(client.messages.create({ model: SONNET_46, max_tokens: 10, messages: hello }));
    expect(limited).toMatchObject({ status: 429, type: 'rate_limit_error' });
  });

  // platform.claude.com/docs/en/build-with-claude/prompt-caching: usage cache_creation_input_tokens,
  // cache_read_input_tokens and cache_creation {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens};
  // below the model's minimum cacheable length nothing is cached.
  it('counts cache writes and reads, with the TTL breakdown, above the minimum cacheable length', async () => {
    const rules = 'Rule: answer politely and briefly. '.repeat(200); // ≈ 1,750 tokens: cacheable on Sonnet 4.6 (1,024)
    const system: Anthropic.TextBlockParam[] = [{ type: 'text', text: rules, cache_control: { type: 'ephemeral', ttl: '1h' } }];
    const first = await client.messages.create({ model: SONNET_46, max_tokens: 50, system, messages: hello });
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(1024);
    expect(first.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: first.usage.cache_creation_input_tokens });
    const second = await client.messages.create({ model: SONNET_46, max_tokens: 50, system, messages: [{ role: 'user', content: 'Another question' }] });
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBe(0);
    expect(second.usage.input_tokens).toBeLessThan(50);
    // Haiku 4.5 caches from 4,096 tokens: the same prefix caches nothing there.
    const haiku = await client.messages.create({ model: HAIKU_45, max_tokens: 50, system, messages: hello });
    expect(haiku.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  });
});

describe('auth and endpoints', () => {
  // platform.claude.com/docs/en/api/overview (x-api-key) and @anthropic-ai/sdk 1.x, which sends the key
  // as Authorization: Bearer (client.js): both carry the key.
  it('accepts the key in x-api-key or Authorization: Bearer and refuses a wrong one in either', async () => {
    emulator.configure({ apiKey: 'right-key' });
    const body = JSON.stringify({ model: SONNET_46, max_tokens: 10, messages: hello });
    const post = (headers: Record<string, string>) =>
      fetch(`${emulator.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers }, body });
    expect((await post({ 'x-api-key': 'right-key' })).status).toBe(200);
    expect((await post({ authorization: 'Bearer right-key' })).status).toBe(200);
    expect((await post({ authorization: 'Bearer wrong-key' })).status).toBe(401);
    expect((await post({ 'x-api-key': 'wrong-key' })).status).toBe(401);
    const sdk = new Anthropic({ apiKey: 'right-key', baseURL: emulator.url, maxRetries: 0 });
    expect((await sdk.messages.create({ model: SONNET_46, max_tokens: 10, messages: hello })).type).toBe('message');
  });

  // platform.claude.com/docs/en/api/models/retrieve: GET /v1/models/{model_id} returns the ModelInfo.
  it('GET /v1/models/{id}: a known model with its limits, 404 for an unknown one', async () => {
    const info = await client.models.retrieve(SONNET_46);
    expect(info).toMatchObject({ type: 'model', id: SONNET_46, max_tokens: 128_000, lifecycle: 'active' });
    expect((await client.models.retrieve('claude-3-5-sonnet-20241022')).lifecycle).toBe('retired');
    await expect(client.models.retrieve('claude-nope-1')).rejects.toBeInstanceOf(NotFoundError);
  });

  // platform.claude.com/docs/en/build-with-claude/token-counting: POST /v1/messages/count_tokens takes the
  // create body (without max_tokens) and returns input_tokens.
  it('counts tokens as a message create would bill them, and 404s an unknown model', async () => {
    const params = { model: SONNET_46, system: 'Be brief.', messages: [{ role: 'user' as const, content: 'How many tokens is this?' }] };
    const { input_tokens } = await client.messages.countTokens(params);
    const created = await client.messages.create({ ...params, max_tokens: 20 });
    expect(input_tokens).toBe(created.usage.input_tokens);
    expect(await failure(client.messages.countTokens({ ...params, model: 'claude-unknown-1' }))).toMatchObject({ status: 404, type: 'not_found_error' });
  });
});

// platform.claude.com/docs/en/build-with-claude/batch-processing and the API reference of Message
// Batches (the SDK's batches.d.ts): a batch is in_progress, then ended; request_counts are zero but
// `processing` until it ends; results are JSONL, one line per custom_id, succeeded / errored /
// canceled / expired; results_url only once ended; cancel ends what was not processed.
describe('Message Batches', () => {
  const classify = (text: string): Anthropic.MessageCreateParamsNonStreaming => ({ model: HAIKU_45, max_tokens: 100, messages: [{ role: 'user', content: text }] });

  it('creates a batch in progress, ends it, and gives one result per custom_id: succeeded or errored', async () => {
    emulator.configure({ batchProcessingMs: 3_600_000 });
    const batch = await client.messages.batches.create({
      requests: [
        { custom_id: 'ok-1', params: classify('Hello, can we meet?') },
        { custom_id: 'bad-model', params: { ...classify('Hi'), model: 'claude-sonnet-9-9' } },
        { custom_id: 'server-error', params: classify('Hi [emulator:server-error]') },
      ],
    });
    expect(batch).toMatchObject({ type: 'message_batch', processing_status: 'in_progress', results_url: null, ended_at: null });
    expect(batch.request_counts).toEqual({ processing: 3, succeeded: 0, errored: 0, canceled: 0, expired: 0 });
    expect(Date.parse(batch.expires_at) - Date.parse(batch.created_at)).toBe(24 * 3600_000);
    // Nothing is answered while the batch is in progress, and no /v1/messages call is made for it.
    expect((await client.messages.batches.retrieve(batch.id)).processing_status).toBe('in_progress');
    await expect(client.messages.batches.results(batch.id)).rejects.toThrow(/results_url/);
    expect(emulator.metrics()).toMatchObject({ requests: 0, batchesCreated: 1, batchRequests: 3 });

    expect(await emulator.endBatches()).toBe(1);
    const ended = await client.messages.batches.retrieve(batch.id);
    expect(ended.processing_status).toBe('ended');
    expect(ended.request_counts).toEqual({ processing: 0, succeeded: 1, errored: 2, canceled: 0, expired: 0 });
    expect(ended.results_url).toBe(`${emulator.url}/v1/messages/batches/${batch.id}/results`);
    const results = new Map<string, Anthropic.Messages.MessageBatchResult>();
    for await (const line of await client.messages.batches.results(batch.id)) results.set(line.custom_id, line.result);
    expect(results.get('ok-1')).toMatchObject({ type: 'succeeded', message: { type: 'message', model: HAIKU_45, usage: { service_tier: 'batch' } } });
    expect(results.get('bad-model')).toMatchObject({ type: 'errored', error: { type: 'error', error: { type: 'not_found_error' } } });
    expect(results.get('server-error')).toMatchObject({ type: 'errored', error: { error: { type: 'api_error' } } });
    // Billed as batch usage, apart from the Messages calls.
    expect(emulator.metrics().batchUsage[HAIKU_45]?.text?.calls).toBe(1);
    expect(emulator.metrics().usage).toEqual({});
  });

  it('cancels a batch in progress (every request canceled), refuses repeated custom_ids, 404s an unknown batch', async () => {
    emulator.configure({ batchProcessingMs: 3_600_000 });
    const batch = await client.messages.batches.create({ requests: [{ custom_id: 'a', params: classify('Hi') }] });
    const canceled = await client.messages.batches.cancel(batch.id);
    expect(canceled.processing_status).toBe('ended');
    expect(canceled.cancel_initiated_at).not.toBeNull();
    expect(canceled.request_counts).toMatchObject({ canceled: 1, processing: 0 });
    const lines = [];
    for await (const line of await client.messages.batches.results(batch.id)) lines.push(line);
    expect(lines).toEqual([{ custom_id: 'a', result: { type: 'canceled' } }]);
    // A download cut on purpose (over the control API): the SDK's stream ends in an error, the next download is whole.
    const cut = await fetch(`${emulator.url}/__emulator/batches/cut-results`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ afterLines: 0 }) });
    expect(cut.status).toBe(200);
    const read = async () => {
      const got = [];
      for await (const line of await client.messages.batches.results(batch.id)) got.push(line.custom_id);
      return got;
    };
    await expect(read()).rejects.toThrow(/terminated/);
    expect(await read()).toEqual(['a']);
    expect(emulator.metrics()).toMatchObject({ batchResultReadsCut: 1 });
    expect(await failure(client.messages.batches.create({ requests: [{ custom_id: 'x', params: classify('a') }, { custom_id: 'x', params: classify('b') }] }))).toMatchObject({ status: 400, type: 'invalid_request_error' });
    expect(await failure(client.messages.batches.create({ requests: [{ custom_id: 'has space', params: classify('a') }] }))).toMatchObject({ status: 400 });
    expect(await failure(client.messages.batches.retrieve('msgbatch_unknown'))).toMatchObject({ status: 404, type: 'not_found_error' });
    // Listed newest first.
    const listed = [];
    for await (const b of client.messages.batches.list({ limit: 10 })) listed.push(b.id);
    expect(listed[0]).toBe(batch.id);
  });

  it('ends a batch by itself after its processing time', async () => {
    emulator.configure({ batchProcessingMs: 0 });
    const batch = await client.messages.batches.create({ requests: [{ custom_id: 'quick', params: classify('Hi') }] });
    expect((await client.messages.batches.retrieve(batch.id)).request_counts.succeeded).toBe(1);
    emulator.configure({ batchProcessingMs: 1000 });
  });
});
