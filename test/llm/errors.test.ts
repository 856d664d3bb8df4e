import Anthropic, { APIError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import {
  classifyAnthropicError,
  classifyEmail,
  createLlmClient,
  draftReply,
  LlmOutputInvalidError,
  retryAfterMs,
} from '../../src/llm/index.js';
import { MODEL, email, useEmulator } from '../helpers/llm-fixtures.js';

const { emulator, client } = useEmulator();

async function failureOf(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (err: unknown) => err,
  );
}

const classify = (body: string, c: Anthropic = client()) =>
  classifyEmail(c, { model: MODEL, email: email({ body }), instructions: [], maxInputTokens: 4000 });

describe('classifyAnthropicError with real SDK errors from the emulator', () => {
  it('429 → rate_limited with Retry-After in ms', async () => {
    const err = await failureOf(classify('[emulator:rate-limit] hello'));
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect(classifyAnthropicError(err)).toMatchObject({ kind: 'rate_limited', retryAfterMs: 2000, status: 429 });
    expect(emulator().metrics().byStatus).toEqual({ '429': 1 });
  });

  it('529 → overloaded with Retry-After in ms', async () => {
    emulator().configure({ retryAfterSeconds: 0.5 });
    try {
      const err = await failureOf(classify('[emulator:overloaded] hello'));
      expect(err).toBeInstanceOf(Anthropic.OverloadedError);
      expect((err as APIError).type).toBe('overloaded_error');
      expect(classifyAnthropicError(err)).toMatchObject({ kind: 'overloaded', retryAfterMs: 500, status: 529 });
    } finally {
      emulator().configure({ retryAfterSeconds: 2 });
    }
  });

  it('500 → server, and drafts fail the same way', async () => {
    const err = await failureOf(
      draftReply(client(), {
        model: MODEL,
        thread: [email({ body: '[emulator:server-error]' })],
        toneExamples: [],
        maxInputTokens: 4000,
      }),
    );
    expect(classifyAnthropicError(err)).toMatchObject({ kind: 'server', status: 500 });
  });

  it('the SDK does not retry on its own (maxRetries 0): one failed call is one request', async () => {
    await failureOf(classify('[emulator:overloaded] again'));
    expect(emulator().metrics().requests).toBe(1);
  });

  it('401 → auth', async () => {
    emulator().configure({ apiKey: 'the-right-key' });
    try {
      const err = await failureOf(classify('hi'));
      expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
      expect(classifyAnthropicError(err)).toMatchObject({ kind: 'auth', status: 401 });
    } finally {
      emulator().configure({ apiKey: null });
    }
  });

  it('400 → bad_request; 404 for the model → model_not_found (the account pauses, breaker.ts)', async () => {
    const badRequest = await failureOf(
      client().messages.create({ model: MODEL, max_tokens: 0, messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(badRequest).toBeInstanceOf(Anthropic.BadRequestError);
    expect((badRequest as APIError).type).toBe('invalid_request_error');
    expect(classifyAnthropicError(badRequest)).toMatchObject({ kind: 'bad_request', status: 400 });
    const unknownModel = await failureOf(
      classifyEmail(client(), { model: 'gpt-nope', email: email(), instructions: [], maxInputTokens: 4000 }),
    );
    expect(unknownModel).toBeInstanceOf(Anthropic.NotFoundError);
    expect(classifyAnthropicError(unknownModel)).toMatchObject({ kind: 'model_not_found', status: 404 });
  });

  it('a connection failure → server, with no status', async () => {
    const closed = createLlmClient({ apiKey: 'k', baseURL: 'http://127.0.0.1:9', timeoutMs: 2000 });
    const err = await failureOf(classify('hi', closed));
    expect(err).toBeInstanceOf(Anthropic.APIConnectionError);
    expect(classifyAnthropicError(err)).toMatchObject({ kind: 'server', status: undefined });
  });

  it('errors that are not from the SDK are left to the caller', () => {
    expect(classifyAnthropicError(new LlmOutputInvalidError([{ path: 'body', message: 'empty' }]))).toBeUndefined();
    expect(classifyAnthropicError(new TypeError('bug'))).toBeUndefined();
  });

  it('random faults follow the configured rates and seed', async () => {
    emulator().configure({ errorRates: { overloaded: 0.5 }, seed: 7 });
    try {
      const run = async () => {
        emulator().reset();
        const outcomes: string[] = [];
        for (let i = 0; i < 20; i++) {
          const err = await classify(`message ${i}`).then(
            () => undefined,
            (e: unknown) => e,
          );
          outcomes.push(err === undefined ? 'ok' : classifyAnthropicError(err)!.kind);
        }
        return outcomes;
      };
      const first = await run();
      expect(new Set(first)).toEqual(new Set(['ok', 'overloaded']));
      expect(await run()).toEqual(first);
      expect(emulator().metrics().byStatus['529']).toBe(first.filter((o) => o === 'overloaded').length);
    } finally {
      emulator().configure({ errorRates: { overloaded: 0 }, seed: 1 });
    }
  });
});

describe('retryAfterMs', () => {
  it('reads retry-after-ms, seconds and HTTP dates', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250' }))).toBe(250);
    expect(retryAfterMs(new Headers({ 'retry-after': '3' }))).toBe(3000);
    const now = Date.parse('2025-03-03T10:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': 'Mon, 03 Mar 2025 10:00:30 GMT' }), now)).toBe(30_000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });
});
