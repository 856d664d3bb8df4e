// The price table (src/llm/prices.ts) and the model per role, as the operator configures them.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { llmPricesFromConfig, llmSettingsFromConfig } from '../../src/config/settings.js';
import { modelFor } from '../../src/llm/guard.js';
import { costOf, LIST_PRICES } from '../../src/llm/prices.js';

const tokens = { input: 1_000_000, output: 100_000, cacheRead: 2_000_000, cacheWrite5m: 400_000, cacheWrite1h: 0 };

describe('LLM prices', () => {
  it('prices tokens at the list prices (platform.claude.com/docs/en/about-claude/pricing), batch at half', () => {
    const table = llmPricesFromConfig(loadConfig({}));
    // Sonnet 4.6: $3 in, $15 out, $0.30 cache read, $3.75 5-minute write per MTok.
    expect(costOf(table, 'claude-sonnet-4-6', tokens)).toBeCloseTo(3 + 1.5 + 0.6 + 1.5, 6);
    expect(costOf(table, 'claude-sonnet-4-6', tokens, true)).toBeCloseTo((3 + 1.5 + 0.6 + 1.5) / 2, 6);
    expect(costOf(table, 'claude-haiku-4-5', tokens)).toBeCloseTo(1 + 0.5 + 0.2 + 0.5, 6);
    expect(costOf(table, 'claude-unknown', tokens)).toBeUndefined();
  });

  it('takes the operator’s LLM_PRICES over the list: a field of a listed model, or a whole new model', () => {
    const table = llmPricesFromConfig(
      loadConfig({ LLM_PRICES: JSON.stringify({ 'claude-haiku-4-5': { input: 0.8 }, 'claude-local': { input: 1, output: 2, cacheWrite5m: 1, cacheWrite1h: 1, cacheRead: 0, batchFactor: 1 } }) }),
    );
    expect(table['claude-haiku-4-5']).toEqual({ ...LIST_PRICES['claude-haiku-4-5'], input: 0.8 });
    expect(costOf(table, 'claude-local', { input: 1_000_000, output: 1_000_000, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0 })).toBe(3);
    expect(() => loadConfig({ LLM_PRICES: 'cheap' })).toThrow(/^LLM_PRICES: not JSON/);
    expect(() => loadConfig({ LLM_PRICES: '{"claude-haiku-4-5":{"input":-1}}' })).toThrow(/^LLM_PRICES: not a price table/);
    expect(() => llmPricesFromConfig(loadConfig({ LLM_PRICES: '{"claude-new":{"input":1}}' }))).toThrow(/claude-new is not in the list prices/);
  });

  it('chooses a model per role: classification and expects-reply on the small one, the rest on ANTHROPIC_MODEL', () => {
    const defaults = llmSettingsFromConfig(loadConfig({}));
    expect(['classify', 'expects_reply', 'draft', 'agent_turn', 'learn'].map((r) => modelFor(defaults, r as never))).toEqual([
      'claude-haiku-5-5',
      'claude-haiku-5-5',
      'claude-sonnet-4-6',
      'claude-sonnet-4-6',
      'claude-sonnet-4-6',
    ]);
    const chosen = llmSettingsFromConfig(loadConfig({ ANTHROPIC_MODEL: 'claude-opus-4-6', ANTHROPIC_MODEL_CLASSIFY: 'claude-haiku-4-5', ANTHROPIC_MODEL_DRAFT: 'claude-sonnet-4-6' }));
    expect([modelFor(chosen, 'classify'), modelFor(chosen, 'expects_reply'), modelFor(chosen, 'draft'), modelFor(chosen, 'agent_turn')]).toEqual([
      'claude-haiku-4-5',
      'claude-haiku-4-5',
      'claude-sonnet-4-6',
      'claude-opus-4-6',
    ]);
  });
});
