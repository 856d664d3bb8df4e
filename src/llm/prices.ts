// List prices per model, USD per million tokens (platform.claude.com/docs/en/about-claude/pricing, as
// of 27 Nov 2026): base input, output, cache writes (5-minute 1.25x, 1-hour 2x input) and cache reads,
// and the Message Batches discount. The operator changes them with LLM_PRICES (docs/llm-cost.md).
import { z } from 'zod';

export const ModelPriceSchema = z.object({
  input: z.number().min(0),
  output: z.number().min(0),
  cacheWrite5m: z.number().min(0),
  cacheWrite1h: z.number().min(0),
  cacheRead: z.number().min(0),
  /** The share of the price a Message Batches request pays (0.5: half). */
  batchFactor: z.number().min(0).max(1),
});
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

/** LLM_PRICES: `{"<model>": {"input": 3, ...}}`; a model's fields left out keep the list price (a new model needs them all). */
export const PriceOverridesSchema = z.record(z.string().min(1), ModelPriceSchema.partial());
export type PriceOverrides = z.infer<typeof PriceOverridesSchema>;
export type PriceTable = Record<string, ModelPrice>;

const price = (input: number, output: number, cacheRead = input / 10): ModelPrice => ({
  input,
  output,
  cacheWrite5m: input * 1.25,
  cacheWrite1h: input * 2,
  cacheRead,
  batchFactor: 0.5,
});

export const LIST_PRICES: PriceTable = {
  'claude-opus-5-5': price(4, 20, 0.2),
  'claude-sonnet-5-5': price(2, 10, 0.1),
  'claude-haiku-5-5': price(0.1, 0.5),
  'claude-opus-5': price(5, 25),
  'claude-opus-4-8': price(5, 25),
  'claude-opus-4-7': price(5, 25),
  'claude-opus-4-6': price(5, 25),
  'claude-opus-4-5': price(5, 25),
  'claude-opus-4-5-20251101': price(5, 25),
  'claude-sonnet-4-6': price(3, 15),
  'claude-sonnet-4-5': price(3, 15),
  'claude-sonnet-4-5-20250929': price(3, 15),
  'claude-haiku-4-5': price(1, 5),
  'claude-haiku-4-5-20251001': price(1, 5),
};

/** The list prices with the operator's overrides; throws when a model new to the table lacks a field. */
export function priceTable(overrides: PriceOverrides = {}): PriceTable {
  const table: PriceTable = { ...LIST_PRICES };
  for (const [model, fields] of Object.entries(overrides)) {
    const merged = ModelPriceSchema.safeParse({ ...table[model], ...fields });
    if (!merged.success) throw new Error(`LLM_PRICES: ${model} is not in the list prices, so it needs input, output, cacheWrite5m, cacheWrite1h, cacheRead and batchFactor`);
    table[model] = merged.data;
  }
  return table;
}

export interface TokenCounts {
  /** Input tokens neither read from nor written to the cache. */
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
}

/** What the tokens cost in USD at the model's prices (batch: the Message Batches price); undefined for a model not in the table. */
export function costOf(table: PriceTable, model: string, tokens: TokenCounts, batch = false): number | undefined {
  const p = table[model];
  if (!p) return undefined;
  const usd =
    (tokens.input * p.input + tokens.output * p.output + tokens.cacheRead * p.cacheRead + tokens.cacheWrite5m * p.cacheWrite5m + tokens.cacheWrite1h * p.cacheWrite1h) /
    1_000_000;
  return batch ? usd * p.batchFactor : usd;
}
