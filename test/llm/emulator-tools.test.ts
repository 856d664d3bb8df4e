// Multi-turn tool use against the emulator: the validation of tool_use / tool_result turns, the default
// agent, and scripted conversations, through the real SDK.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startAnthropicEmulator, type AnthropicEmulator } from '../../emulators/anthropic/index.js';
import { MODEL } from '../helpers/llm-fixtures.js';

let emulator: AnthropicEmulator;
let client: Anthropic;

beforeAll(async () => {
  emulator = await startAnthropicEmulator({ seed: 7, retryAfterSeconds: 0.01 });
  client = new Anthropic({ apiKey: 'test-key', baseURL: emulator.url, maxRetries: 0 });
});
beforeEach(() => {
  emulator.reset();
  emulator.clearScripts();
});
afterAll(async () => {
  await emulator.close();
});

const headers = { 'content-type': 'application/json', 'x-api-key': 'test-key', 'anthropic-version': '2023-06-01' };

async function post(path: string, body: unknown, method = 'POST') {
  const res = await fetch(`${emulator.url}${path}`, { method, headers, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> };
}

const TOOLS: Anthropic.Tool[] = [
  {
    name: 'search_mailbox',
    description: 'Search the mailbox',
    input_schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  },
  {
    name: 'read_thread',
    description: 'Read a thread',
    input_schema: { type: 'object', properties: { thread_id: { type: 'string' } }, required: ['thread_id'] },
  },
  {
    name: 'write_draft',
    description: 'Write a draft reply',
    input_schema: {
      type: 'object',
      properties: { thread_id: { type: 'string' }, body: { type: 'string' } },
      required: ['thread_id', 'body'],
    },
  },
];

type Tools = Record<string, (input: Record<string, unknown>) => string>;

/** The agent loop the app will run: call, run the tools asked for, send their results, until end_turn. */
async function runLoop(
  params: Omit<Anthropic.MessageCreateParamsNonStreaming, 'max_tokens' | 'model' | 'tools'> & {
    tools?: Anthropic.Tool[];
  },
  tools: Tools,
  maxTurns = 10,
) {
  const messages = [...params.messages];
  const responses: Anthropic.Message[] = [];
  for (let turn = 0; turn < maxTurns; turn++) {
    const response = await client.messages.create({
      model: MODEL,
      max_tokens: 1000,
      tools: TOOLS,
      ...params,
      messages,
    });
    responses.push(response);
    messages.push({ role: 'assistant', content: response.content });
    if (response.stop_reason !== 'tool_use') return { responses, messages };
    messages.push({
      role: 'user',
      content: response.content
        .filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')
        .map((b) => {
          const run = tools[b.name];
          return run
            ? { type: 'tool_result' as const, tool_use_id: b.id, content: run(b.input as Record<string, unknown>) }
            : { type: 'tool_result' as const, tool_use_id: b.id, content: `unknown tool ${b.name}`, is_error: true };
        }),
    });
  }
  throw new Error('too many turns');
}

const EMAIL = [
  'Draft a reply to thread_id: t-1842.',
  '<email>',
  'From: Ann Lee <ann@example.com>',
  'Subject: Lunch on Friday',
  '',
  'Could you confirm lunch on Friday?',
  '</email>',
].join('\n');

describe('scripted conversations', () => {
  it('plays a script turn by turn: tool calls with the scripted inputs, then the final text', async () => {
    const marker = emulator.script('plan-1', [
      { text: 'Let me search.', toolCalls: [{ name: 'search_mailbox', input: { query: 'from:ann' } }] },
      { toolCalls: [{ name: 'write_draft', input: { thread_id: 't-1', body: 'Yes, Friday works.' } }] },
      { text: 'done' },
    ]);
    expect(marker).toBe('[emulator:script=plan-1]');
    const calls: string[] = [];
    const { responses } = await runLoop(
      { system: `You help with mail. ${marker}`, messages: [{ role: 'user', content: 'Reply to Ann' }] },
      {
        search_mailbox: (input) => (calls.push(`search ${JSON.stringify(input)}`), 'thread t-1 from ann'),
        write_draft: (input) => (calls.push(`draft ${JSON.stringify(input)}`), 'draft saved'),
      },
    );
    expect(calls).toEqual(['search {"query":"from:ann"}', 'draft {"thread_id":"t-1","body":"Yes, Friday works."}']);
    expect(responses.map((r) => r.stop_reason)).toEqual(['tool_use', 'tool_use', 'end_turn']);
    expect(responses[0]!.content).toMatchObject([
      { type: 'text', text: 'Let me search.' },
      { type: 'tool_use', name: 'search_mailbox', input: { query: 'from:ann' } },
    ]);
    expect(responses[2]!.content).toEqual([{ type: 'text', text: 'done' }]);
    const [first, second, third] = responses.map((r) => r.usage.input_tokens);
    expect(second).toBeGreaterThan(first!);
    expect(third).toBeGreaterThan(second!);
    expect(emulator.metrics()).toMatchObject({
      toolUseResponses: 2,
      textResponses: 1,
      toolUseBlocks: 2,
      scriptedResponses: 3,
    });
  });

  it('makes several tool calls in one turn, with unique toolu_ ids', async () => {
    const marker = emulator.script('parallel', [
      {
        toolCalls: [
          { name: 'read_thread', input: { thread_id: 'a' } },
          { name: 'read_thread', input: { thread_id: 'b' } },
        ],
      },
      { text: 'read both' },
    ]);
    const { responses } = await runLoop(
      { messages: [{ role: 'user', content: `${marker} read a and b` }] },
      { read_thread: () => 'ok' },
    );
    const ids = responses[0]!.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect(id).toMatch(/^toolu_01[A-Za-z0-9]{22}$/);
    expect(responses.at(-1)!.stop_reason).toBe('end_turn');
  });

  it('sends scripted invalid input as is, for the caller to reject', async () => {
    const marker = emulator.script('bad-input', [
      { toolCalls: [{ name: 'write_draft', input: { thread_id: 42 } }] },
      { text: 'ok' },
    ]);
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      tools: TOOLS,
      system: marker,
      messages: [{ role: 'user', content: 'go' }],
    });
    expect(message.content).toMatchObject([{ type: 'tool_use', name: 'write_draft', input: { thread_id: 42 } }]);
  });

  it('calls a tool not in tools only when the script allows it, and accepts it back in history', async () => {
    const refused = emulator.script('unknown-refused', [{ toolCalls: [{ name: 'delete_all', input: {} }] }]);
    const res = await post('/v1/messages', {
      model: MODEL,
      max_tokens: 100,
      tools: TOOLS,
      system: refused,
      messages: [{ role: 'user', content: 'go' }],
    });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({
      error: { message: expect.stringContaining("calls 'delete_all', which is not in 'tools'") },
    });

    const marker = emulator.script('unknown', [
      { toolCalls: [{ name: 'delete_all', input: {}, allowUnknownTool: true }] },
      { text: 'sorry' },
    ]);
    const { responses, messages } = await runLoop({ system: marker, messages: [{ role: 'user', content: 'go' }] }, {});
    expect(responses[0]!.content).toMatchObject([{ type: 'tool_use', name: 'delete_all' }]);
    expect(messages[2]).toMatchObject({ role: 'user', content: [{ type: 'tool_result', is_error: true }] });
    expect(responses[1]!.content).toEqual([{ type: 'text', text: 'sorry' }]);
  });

  it('fails a turn with a scripted fault, then answers the retry', async () => {
    const marker = emulator.script('faults', [
      { toolCalls: [{ name: 'search_mailbox', input: { query: 'x' } }] },
      { fault: 'rate-limit', times: 2 },
      { fault: 'overloaded' },
      { text: 'done' },
    ]);
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: `${marker} go` }];
    const first = await client.messages.create({ model: MODEL, max_tokens: 100, tools: TOOLS, messages });
    const toolUse = first.content[0] as Anthropic.ToolUseBlock;
    const next = {
      model: MODEL,
      max_tokens: 100,
      tools: TOOLS,
      messages: [
        ...messages,
        { role: 'assistant' as const, content: first.content },
        {
          role: 'user' as const,
          content: [{ type: 'tool_result' as const, tool_use_id: toolUse.id, content: 'nothing' }],
        },
      ],
    };
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await post('/v1/messages', next);
      statuses.push(res.status);
      expect(res.headers.get('retry-after')).toBe('0.01');
    }
    expect(statuses).toEqual([429, 429, 529]);
    const retried = await client.messages.create(next);
    expect(retried.content).toEqual([{ type: 'text', text: 'done' }]);

    // The SDK's own retries get through a scripted fault as they would a real one.
    emulator.reset();
    const retrying = new Anthropic({ apiKey: 'k', baseURL: emulator.url, maxRetries: 3 });
    expect((await retrying.messages.create(next)).stop_reason).toBe('end_turn');
    expect(emulator.metrics().byStatus).toEqual({ '200': 1, '429': 2, '529': 1 });
  });

  it('ends with stop_sequence or max_tokens when the script says or the text is too long', async () => {
    const marker = emulator.script('stops', [{ text: 'partial answer', stopSequence: '###' }]);
    const stopped = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      stop_sequences: ['###'],
      messages: [{ role: 'user', content: marker }],
    });
    expect(stopped).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: '###' });
    const long = emulator.script('long', [{ text: 'x'.repeat(400) }]);
    const cut = await client.messages.create({
      model: MODEL,
      max_tokens: 5,
      messages: [{ role: 'user', content: long }],
    });
    expect(cut.stop_reason).toBe('max_tokens');
    expect(cut.usage.output_tokens).toBe(5);
  });

  it('reports script mistakes as 400s: unknown script, no step left, tool_choice conflicts', async () => {
    const none = await post('/v1/messages', {
      model: MODEL,
      max_tokens: 10,
      messages: [{ role: 'user', content: '[emulator:script=nope]' }],
    });
    expect(none.json).toMatchObject({
      error: { type: 'invalid_request_error', message: "emulator: no script named 'nope' is registered" },
    });
    const marker = emulator.script('short', [{ toolCalls: [{ name: 'search_mailbox', input: { query: 'q' } }] }]);
    const withChoiceNone = await post('/v1/messages', {
      model: MODEL,
      max_tokens: 10,
      tools: TOOLS,
      tool_choice: { type: 'none' },
      messages: [{ role: 'user', content: marker }],
    });
    expect(withChoiceNone.json).toMatchObject({
      error: { message: "emulator: script 'short' turn 0 calls tools, but tool_choice is none" },
    });
    const noStep = await post('/v1/messages', {
      model: MODEL,
      max_tokens: 10,
      tools: TOOLS,
      messages: [
        { role: 'user', content: marker },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'search_mailbox', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'r' }] },
      ],
    });
    expect(noStep.json).toMatchObject({
      error: { message: "emulator: script 'short' has no step for turn 1 (it answers 1 turns)" },
    });
  });

  it('is reachable over HTTP: POST, GET and DELETE /__emulator/scripts', async () => {
    const created = await post('/__emulator/scripts', { name: 'http-1', steps: [{ text: 'hi' }] });
    expect(created.json).toEqual({ name: 'http-1', marker: '[emulator:script=http-1]' });
    const bad = await post('/__emulator/scripts', { name: 'bad one', steps: [{ text: 'x' }] });
    expect(bad.status).toBe(400);
    expect((await post('/__emulator/scripts', { name: 'x', steps: [] })).status).toBe(400);
    expect(() => emulator.script('trailing', [{ text: 'a' }, { fault: 'overloaded' }])).toThrow(
      'steps: a fault step must be followed by the step that answers its turn',
    );
    expect(() => emulator.script('mixed', [{ text: 'a', fault: 'overloaded' } as never])).toThrow();
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 10,
      messages: [{ role: 'user', content: '[emulator:script=http-1]' }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'hi' }]);
    const listed = (await (await fetch(`${emulator.url}/__emulator/scripts`)).json()) as unknown;
    expect(listed).toEqual({ scripts: [{ name: 'http-1', steps: 1, calls: 1 }] });
    expect((await post('/__emulator/scripts/http-1', undefined, 'DELETE')).json).toEqual({ removed: true });
    expect(emulator.scripts()).toEqual([]);
  });

  it('with forTool, follows the script only in requests offering that tool; others with the marker are answered as without one', async () => {
    const marker = emulator.script('only-search', [{ toolCalls: [{ name: 'search_mailbox', input: { query: 'scripted' } }] }], { forTool: 'search_mailbox' });
    const content = `Mail text that several calls read ${marker}`;
    const plain = await client.messages.create({ model: MODEL, max_tokens: 200, messages: [{ role: 'user', content }] });
    expect(plain.stop_reason).toBe('end_turn'); // no tools offered: the unscripted reply
    const scripted = await client.messages.create({
      model: MODEL,
      max_tokens: 200,
      tools: TOOLS,
      tool_choice: { type: 'tool', name: 'search_mailbox' },
      messages: [{ role: 'user', content }],
    });
    expect(scripted.content).toMatchObject([{ type: 'tool_use', name: 'search_mailbox', input: { query: 'scripted' } }]);
    expect(emulator.scripts()).toEqual([{ name: 'only-search', steps: 1, calls: 1, forTool: 'search_mailbox' }]);
    const overHttp = await post('/__emulator/scripts', { name: 'http-2', steps: [{ text: 'hi' }], forTool: 'write_draft' });
    expect(overHttp.json).toEqual({ name: 'http-2', marker: '[emulator:script=http-2]' });
    expect(emulator.scripts().find((s) => s.name === 'http-2')).toMatchObject({ forTool: 'write_draft' });
  });
});

describe('default agent (no script)', () => {
  it('reads with read_thread first, writes the reply with the draft tool, then answers with it', async () => {
    const calls: unknown[] = [];
    const { responses } = await runLoop(
      { messages: [{ role: 'user', content: EMAIL }] },
      {
        read_thread: (input) => (calls.push(input), 'the thread'),
        write_draft: (input) => (calls.push(input), 'draft saved'),
      },
    );
    expect(calls[0]).toEqual({ thread_id: 't-1842' });
    expect(calls[1]).toMatchObject({ thread_id: 't-1842', body: expect.stringContaining('Hi Ann,') });
    expect(responses.map((r) => r.stop_reason)).toEqual(['tool_use', 'tool_use', 'end_turn']);
    const text = responses[2]!.content[0];
    expect(text?.type === 'text' && text.text).toContain('Hi Ann,');
    expect(text?.type === 'text' && text.text).toContain('"Lunch on Friday"');
  });

  it('answers with text when no read-like tool is offered or tool_choice is none', async () => {
    const writeOnly = await client.messages.create({
      model: MODEL,
      max_tokens: 500,
      tools: [TOOLS[2]!],
      messages: [{ role: 'user', content: EMAIL }],
    });
    expect(writeOnly.stop_reason).toBe('end_turn');
    const none = await client.messages.create({
      model: MODEL,
      max_tokens: 500,
      tools: TOOLS,
      tool_choice: { type: 'none' },
      messages: [{ role: 'user', content: EMAIL }],
    });
    expect(none.stop_reason).toBe('end_turn');
  });

  it('applies email fault markers and configured latency to tool turns too', async () => {
    const { responses, messages } = await runLoop(
      { messages: [{ role: 'user', content: EMAIL }] },
      { read_thread: () => 'ok', write_draft: () => 'ok' },
    );
    expect(responses).toHaveLength(3);
    const marked = messages.map((m, i) =>
      i === 0 ? { ...m, content: EMAIL.replace('Friday?', 'Friday? [emulator:overloaded]') } : m,
    );
    const res = await post('/v1/messages', {
      model: MODEL,
      max_tokens: 500,
      tools: TOOLS,
      messages: marked.slice(0, 3),
    });
    expect(res.status).toBe(529);
    expect(res.headers.get('retry-after')).toBe('0.01');
    emulator.configure({ latencyMs: 150 });
    const started = performance.now();
    await client.messages.create({ model: MODEL, max_tokens: 500, tools: TOOLS, messages: messages.slice(0, 3) });
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
    emulator.configure({ latencyMs: 0 });
  });
});

describe('tool turn validation', () => {
  const user = (content: Anthropic.MessageParam['content']) => ({ role: 'user' as const, content });
  const assistant = (content: Anthropic.MessageParam['content']) => ({ role: 'assistant' as const, content });
  const use = (id: string, name = 'search_mailbox') => ({ type: 'tool_use' as const, id, name, input: {} });
  const result = (id: string) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'r' });
  const body = (messages: Anthropic.MessageParam[], tools: Anthropic.Tool[] | null = TOOLS) => ({
    model: MODEL,
    max_tokens: 100,
    ...(tools ? { tools } : {}),
    messages,
  });

  it.each([
    [
      'a tool_result without a tool_use just before',
      body([user('hi'), assistant('hello'), user([result('toolu_x')])]),
      'messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    ],
    [
      'a tool_result in the first message',
      body([user([result('toolu_x')])]),
      'messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    ],
    [
      'a tool_use left unanswered',
      body([user('hi'), assistant([use('toolu_a'), use('toolu_b')]), user([result('toolu_a')])]),
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    ],
    [
      'a tool_use answered with plain text',
      body([user('hi'), assistant([use('toolu_a')]), user('what now?')]),
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    ],
    [
      'tool results after text',
      body([user('hi'), assistant([use('toolu_a')]), user([{ type: 'text', text: 'here' }, result('toolu_a')])]),
      'messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.',
    ],
    [
      'duplicate tool_use ids',
      body([user('hi'), assistant([use('toolu_a'), use('toolu_a')]), user([result('toolu_a')])]),
      'messages.1.content.1: `tool_use` ids must be unique',
    ],
    [
      'a tool_use id of the wrong shape',
      body([user('hi'), assistant([use('toolu a')]), user([result('toolu_a')])]),
      "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
    ],
    [
      'a tool_use of a tool not in tools',
      body([user('hi'), assistant([use('toolu_a', 'nope')]), user([result('toolu_a')])]),
      "messages.1.content.0.tool_use.name: Tool 'nope' not found in 'tools'",
    ],
    [
      'tool blocks without tools',
      body([user('hi'), assistant([use('toolu_a')]), user([result('toolu_a')])], null),
      'Requests which include `tool_use` or `tool_result` blocks must define tools.',
    ],
    [
      'a non-boolean is_error',
      body([user('hi'), assistant([use('toolu_a')]), user([{ ...result('toolu_a'), is_error: 'yes' } as never])]),
      'messages.2.content.0.tool_result.is_error: Input should be a valid boolean',
    ],
  ])('400 for %s', async (_name, request, message) => {
    const res = await post('/v1/messages', request);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message } });
  });

  it('accepts tool_result content as blocks, with is_error, and counts it as input', async () => {
    const plain = body([user('hi'), assistant([use('toolu_a')]), user([result('toolu_a')])]);
    const rich = body([
      user('hi'),
      assistant([{ type: 'text', text: 'Looking.' }, use('toolu_a')]),
      user([
        {
          type: 'tool_result',
          tool_use_id: 'toolu_a',
          is_error: true,
          content: [{ type: 'text', text: 'x'.repeat(400) }],
        },
        { type: 'text', text: 'go on' },
      ]),
    ]);
    const a = await client.messages.create(plain as Anthropic.MessageCreateParamsNonStreaming);
    const b = await client.messages.create(rich as Anthropic.MessageCreateParamsNonStreaming);
    expect(b.usage.input_tokens - a.usage.input_tokens).toBeGreaterThanOrEqual(100);
    const { input_tokens } = await client.messages.countTokens(rich as Anthropic.MessageCountTokensParams);
    expect(input_tokens).toBe(b.usage.input_tokens);
  });
});
