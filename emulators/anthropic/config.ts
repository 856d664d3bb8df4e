// Server-level switches of the Anthropic emulator: latency and fault injection, settable at start and
// at run time over POST /__emulator/config.
import { z } from 'zod';

const rate = z.number().min(0).max(1);

export const ErrorRatesSchema = z.object({
  /** Share of calls answered 429 rate_limit_error. */
  rateLimit: rate,
  /** Share of calls answered 529 overloaded_error. */
  overloaded: rate,
  /** Share of calls answered 500 api_error. */
  server: rate,
});

export const EmulatorConfigSchema = z.object({
  /** Added to every /v1/messages call that passes validation, like model time. */
  latencyMs: z.number().int().min(0).max(600_000),
  /** Extra latency drawn uniformly from [0, latencyJitterMs), seeded. */
  latencyJitterMs: z.number().int().min(0).max(600_000),
  errorRates: ErrorRatesSchema.refine(
    (r) => r.rateLimit + r.overloaded + r.server <= 1,
    'the error rates must add up to at most 1',
  ),
  /** Sent as Retry-After with 429 and 529 answers; fractions are allowed to keep tests fast. */
  retryAfterSeconds: z.number().min(0).max(3600),
  /** Seeds ids, jitter and random faults: the same seed and request order give the same run. */
  seed: z.number().int(),
  /** When set, only this key is accepted (x-api-key or Authorization: Bearer); otherwise any non-empty key is. */
  apiKey: z.string().min(1).nullable(),
  /** Every authenticated call is answered 402 billing_error, as for an account out of credits. */
  outOfCredits: z.boolean(),
  /**
   * How long a Message Batch stays in_progress before it ends (its requests answered then); capped at
   * the API's 24 h. POST /__emulator/batches/end ends every batch in progress at once.
   */
  batchProcessingMs: z.number().int().min(0).max(86_400_000),
  /**
   * Per-minute limits enforced with 429 (rate-limits.ts); null: none enforced, the anthropic-ratelimit-*
   * headers show nominal limits.
   */
  rateLimits: z
    .object({
      requestsPerMinute: z.number().int().min(1),
      inputTokensPerMinute: z.number().int().min(1),
      outputTokensPerMinute: z.number().int().min(1),
    })
    .nullable(),
});

export type EmulatorConfig = z.infer<typeof EmulatorConfigSchema>;
export type ErrorRates = z.infer<typeof ErrorRatesSchema>;

export const EmulatorConfigPatchSchema = EmulatorConfigSchema.omit({ errorRates: true })
  .partial()
  .extend({ errorRates: ErrorRatesSchema.partial().optional() })
  .strict();

export type EmulatorConfigPatch = z.infer<typeof EmulatorConfigPatchSchema>;

export const DEFAULT_CONFIG: EmulatorConfig = {
  latencyMs: 0,
  latencyJitterMs: 0,
  errorRates: { rateLimit: 0, overloaded: 0, server: 0 },
  retryAfterSeconds: 1,
  seed: 1,
  apiKey: null,
  outOfCredits: false,
  batchProcessingMs: 1000,
  rateLimits: null,
};

/** Applies a patch; throws a one-line Error naming the bad field when the result is invalid. */
export function applyPatch(config: EmulatorConfig, patch: unknown): EmulatorConfig {
  const parsedPatch = EmulatorConfigPatchSchema.safeParse(patch);
  if (!parsedPatch.success) throw new Error(describeIssue(parsedPatch.error));
  const { errorRates, ...rest } = parsedPatch.data;
  const next = EmulatorConfigSchema.safeParse({
    ...config,
    ...definedOnly(rest),
    errorRates: { ...config.errorRates, ...definedOnly(errorRates ?? {}) },
  });
  if (!next.success) throw new Error(describeIssue(next.error));
  return next.data;
}

/** Leaves out keys set to undefined, so `{ latencyMs: undefined }` keeps the current value. */
function definedOnly<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0]!;
  return `${issue.path.join('.') || 'config'}: ${issue.message}`;
}
