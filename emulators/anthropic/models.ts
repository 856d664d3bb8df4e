// The models the emulator knows, as GET /v1/models/{id} describes them, with what the Messages API
// checks per model: the max_tokens limit, whether an assistant prefill is accepted, the smallest
// cacheable prompt prefix. Ids are the SDK's `Model` union (@anthropic-ai/sdk 1.12) plus retired ones.
// Sources: platform.claude.com/docs/en/about-claude/models/overview and the per-model pages (max
// output), .../whats-new-claude-4-6#prefill-removal (prefill), .../build-with-claude/prompt-caching
// (minimum cacheable length). Values marked "unconfirmed" in docs/anthropic-emulator.md are guesses.

export interface ModelEntry {
  id: string;
  display_name: string;
  created_at: string;
  lifecycle: 'active' | 'deprecated' | 'retired';
  /** The largest max_tokens a request may ask for. */
  max_tokens: number;
  max_input_tokens: number;
  /** Claude 4.6 and later answer a request ending with an assistant message with 400. */
  prefill: boolean;
  /** Below this many prompt tokens a cache breakpoint caches nothing (and no error is raised). */
  minCacheableTokens: number;
}

const M = 1_000_000;

function entry(
  id: string,
  display_name: string,
  created_at: string,
  max_tokens: number,
  minCacheableTokens: number,
  opts: { prefill?: boolean; lifecycle?: ModelEntry['lifecycle']; max_input_tokens?: number } = {},
): ModelEntry {
  return {
    id,
    display_name,
    created_at,
    lifecycle: opts.lifecycle ?? 'active',
    max_tokens,
    max_input_tokens: opts.max_input_tokens ?? M,
    prefill: opts.prefill ?? false,
    minCacheableTokens,
  };
}

const CATALOGUE: ModelEntry[] = [
  entry('claude-opus-5-5', 'Claude Opus 5.5', '2026-10-07T00:00:00Z', 128_000, 512),
  entry('claude-sonnet-5-5', 'Claude Sonnet 5.5', '2026-10-07T00:00:00Z', 128_000, 1024),
  entry('claude-haiku-5-5', 'Claude Haiku 5.5', '2026-10-07T00:00:00Z', 64_000, 2048),
  entry('claude-fable-5-2', 'Claude Fable 5.2', '2026-10-21T00:00:00Z', 128_000, 512),
  entry('claude-mythos-5-2', 'Claude Mythos 5.2', '2026-10-21T00:00:00Z', 128_000, 512),
  entry('claude-fable-5-1', 'Claude Fable 5.1', '2026-08-01T00:00:00Z', 128_000, 512),
  entry('claude-mythos-5-1', 'Claude Mythos 5.1', '2026-08-01T00:00:00Z', 128_000, 512),
  entry('claude-fable-5', 'Claude Fable 5', '2026-06-01T00:00:00Z', 128_000, 512),
  entry('claude-mythos-5', 'Claude Mythos 5', '2026-06-01T00:00:00Z', 128_000, 512),
  entry('claude-mythos-preview', 'Claude Mythos Preview', '2026-04-01T00:00:00Z', 128_000, 512),
  entry('claude-opus-5', 'Claude Opus 5', '2026-06-01T00:00:00Z', 128_000, 512),
  entry('claude-sonnet-5', 'Claude Sonnet 5', '2026-06-01T00:00:00Z', 128_000, 1024),
  entry('claude-opus-4-8', 'Claude Opus 4.8', '2026-05-01T00:00:00Z', 128_000, 1024),
  entry('claude-opus-4-7', 'Claude Opus 4.7', '2026-04-01T00:00:00Z', 128_000, 2048),
  entry('claude-opus-4-6', 'Claude Opus 4.6', '2026-02-05T00:00:00Z', 128_000, 4096),
  entry('claude-sonnet-4-6', 'Claude Sonnet 4.6', '2026-02-17T00:00:00Z', 128_000, 1024),
  entry('claude-opus-4-5', 'Claude Opus 4.5', '2025-11-24T00:00:00Z', 64_000, 4096, { prefill: true, max_input_tokens: 200_000 }),
  entry('claude-opus-4-5-20251101', 'Claude Opus 4.5', '2025-11-24T00:00:00Z', 64_000, 4096, { prefill: true, max_input_tokens: 200_000 }),
  entry('claude-sonnet-4-5', 'Claude Sonnet 4.5', '2025-09-29T00:00:00Z', 64_000, 1024, { prefill: true }),
  entry('claude-sonnet-4-5-20250929', 'Claude Sonnet 4.5', '2025-09-29T00:00:00Z', 64_000, 1024, { prefill: true }),
  entry('claude-haiku-4-5', 'Claude Haiku 4.5', '2025-10-15T00:00:00Z', 64_000, 4096, { prefill: true, max_input_tokens: 200_000 }),
  entry('claude-haiku-4-5-20251001', 'Claude Haiku 4.5', '2025-10-15T00:00:00Z', 64_000, 4096, { prefill: true, max_input_tokens: 200_000 }),
  // Retired: listed by GET /v1/models/{id}, refused by POST /v1/messages (404).
  entry('claude-opus-4-1-20250805', 'Claude Opus 4.1', '2025-08-05T00:00:00Z', 32_000, 1024, { prefill: true, lifecycle: 'retired', max_input_tokens: 200_000 }),
  entry('claude-opus-4-20250514', 'Claude Opus 4', '2025-05-22T00:00:00Z', 32_000, 1024, { prefill: true, lifecycle: 'retired', max_input_tokens: 200_000 }),
  entry('claude-sonnet-4-20250514', 'Claude Sonnet 4', '2025-05-22T00:00:00Z', 64_000, 1024, { prefill: true, lifecycle: 'retired', max_input_tokens: 200_000 }),
  entry('claude-3-7-sonnet-20250219', 'Claude Sonnet 3.7', '2025-02-24T00:00:00Z', 64_000, 1024, { prefill: true, lifecycle: 'retired', max_input_tokens: 200_000 }),
  entry('claude-3-5-sonnet-20241022', 'Claude Sonnet 3.5', '2024-10-22T00:00:00Z', 8192, 1024, { prefill: true, lifecycle: 'retired', max_input_tokens: 200_000 }),
  entry('claude-3-5-haiku-20241022', 'Claude Haiku 3.5', '2024-10-22T00:00:00Z', 8192, 2048, { prefill: true, lifecycle: 'retired', max_input_tokens: 200_000 }),
];

const BY_ID = new Map(CATALOGUE.map((m) => [m.id, m]));

/** The model, whatever its lifecycle; undefined when the API does not know the id. */
export function modelEntry(id: string): ModelEntry | undefined {
  return BY_ID.get(id);
}

/** A model a Messages request may name: known and not retired. */
export function usableModel(id: string): ModelEntry | undefined {
  const model = BY_ID.get(id);
  return model && model.lifecycle !== 'retired' ? model : undefined;
}

export function listModels(): ModelEntry[] {
  return [...CATALOGUE];
}

/** The ModelInfo object of GET /v1/models/{id} (the fields the SDK types; capabilities left out). */
export function modelInfo(model: ModelEntry): Record<string, unknown> {
  return {
    type: 'model',
    id: model.id,
    display_name: model.display_name,
    created_at: model.created_at,
    lifecycle: model.lifecycle,
    deprecated_at: model.lifecycle === 'active' ? null : model.created_at,
    retires_at: null,
    max_tokens: model.max_tokens,
    max_input_tokens: model.max_input_tokens,
    capabilities: null,
    line: null,
  };
}
