// Shared test fixtures for the LLM tests: an emulator per test file and emails to feed it.
import type Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { EmailForPrompt } from '../../src/mail/types.js';
import { startAnthropicEmulator, type AnthropicEmulator } from '../../emulators/anthropic/index.js';
import { createLlmClient } from '../../src/llm/index.js';

export const MODEL = 'claude-haiku-4-5';

export function email(overrides: Partial<EmailForPrompt> = {}): EmailForPrompt {
  return {
    from: 'Jane Doe <jane@example.com>',
    to: 'me@mydomain.test',
    subject: 'Project update',
    date: 'Mon, 3 Mar 2025 10:00:00 +0000',
    body: 'The project is on track.',
    headers: {},
    ...overrides,
  };
}

/** Starts an emulator for the file and a client (SDK retries off) pointed at it; resets it before each test. */
export function useEmulator(): { emulator: () => AnthropicEmulator; client: () => Anthropic } {
  let emulator: AnthropicEmulator | undefined;
  let client: Anthropic | undefined;
  beforeAll(async () => {
    emulator = await startAnthropicEmulator({ retryAfterSeconds: 2 });
    client = createLlmClient({ apiKey: 'test-key', baseURL: emulator.url, timeoutMs: 10_000 });
  });
  beforeEach(() => emulator?.reset());
  afterAll(async () => {
    await emulator?.close();
  });
  return { emulator: () => emulator!, client: () => client! };
}
