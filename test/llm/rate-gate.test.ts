// Pacing by the rate-limit headers (src/llm/rate-gate.ts): against the emulator enforcing a limit
// (platform.claude.com/docs/en/api/rate-limits: token buckets, anthropic-ratelimit-* on every answer),
// a burst past what is left is answered 429 without the gate and waits instead with it.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { APIError } from '@anthropic-ai/sdk';
import { startAnthropicEmulator, type AnthropicEmulator } from '../../emulators/anthropic/index.js';
import { createLlmClient } from '../../src/llm/index.js';
import { RateLimitGate } from '../../src/llm/rate-gate.js';

let emulator: AnthropicEmulator;

beforeAll(async () => {
  emulator = await startAnthropicEmulator();
});
beforeEach(() => {
  // 60 requests a minute: a burst of 60, then one a second.
  emulator.configure({ rateLimits: { requestsPerMinute: 60, inputTokensPerMinute: 1_000_000, outputTokensPerMinute: 1_000_000 } });
  emulator.reset();
});
afterAll(async () => {
  await emulator.close();
});

async function burst(rateGate?: RateLimitGate): Promise<{ ok: number; limited: number }> {
  const client = createLlmClient({ apiKey: 'k', baseURL: emulator.url, rateGate });
  const call = () => client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 20, messages: [{ role: 'user', content: 'Hello' }] });
  await call(); // the first answer tells the gate what is left
  // Ten past the burst: without the gate 429s come unless the calls spread over ten seconds (a busy
  // machine spread two past it over three); with it the last waits about ten seconds.
  const results = await Promise.allSettled(Array.from({ length: 70 }, call));
  const limited = results.filter((r) => r.status === 'rejected' && r.reason instanceof APIError && r.reason.status === 429).length;
  return { ok: results.filter((r) => r.status === 'fulfilled').length, limited };
}

describe('rate-limit pacing', () => {
  it('without the gate a burst past the limit meets 429s; with it the calls wait and none is refused', async () => {
    const unpaced = await burst();
    expect(unpaced.limited).toBeGreaterThan(0);

    emulator.reset(); // full buckets again
    const gate = new RateLimitGate();
    const paced = await burst(gate);
    expect(paced).toEqual({ ok: 70, limited: 0 });
    expect(gate.waited).toBeGreaterThan(0);
    expect(emulator.metrics().byStatus['429']).toBeUndefined();
  });
});
