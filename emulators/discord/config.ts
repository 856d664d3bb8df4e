// Server-level switches of the Discord webhook emulator: rate limits, latency and injected faults,
// settable at start and at run time over PUT /__emulator/config and PUT /__emulator/faults.
import { z } from 'zod';

const WindowLimitSchema = z
  .object({
    /** Requests (or messages) allowed per window. */
    limit: z.number().int().min(1).max(1_000_000),
    /** Window length; fractions are allowed to keep tests fast. */
    windowSeconds: z.number().positive().max(86_400),
  })
  .strict();

export const RateLimitConfigSchema = z
  .object({
    /** `false` answers every request without rate limiting (headers are still sent). */
    enabled: z.boolean(),
    /**
     * Per webhook and route (execute, get, edit, delete each have their own bucket). Discord staff gave
     * 5 per 2 s for webhook execution (discord-api-docs#367); the official docs state no number.
     */
    webhook: WindowLimitSchema,
    /** Messages created per channel (or thread), over all its webhooks. Commonly reported: 30 per 60 s. */
    channel: WindowLimitSchema,
  })
  .strict();

export const DiscordConfigSchema = z
  .object({
    rateLimits: RateLimitConfigSchema,
    /** Added to every /api call before it is answered. */
    latencyMs: z.number().int().min(0).max(600_000),
  })
  .strict();

export type WindowLimit = z.infer<typeof WindowLimitSchema>;
export type RateLimitConfig = z.infer<typeof RateLimitConfigSchema>;
export type DiscordConfig = z.infer<typeof DiscordConfigSchema>;

export const DiscordConfigPatchSchema = z
  .object({
    rateLimits: z
      .object({
        enabled: z.boolean().optional(),
        webhook: WindowLimitSchema.partial().optional(),
        channel: WindowLimitSchema.partial().optional(),
      })
      .strict()
      .optional(),
    latencyMs: z.number().int().min(0).max(600_000).optional(),
  })
  .strict();

export type DiscordConfigPatch = z.infer<typeof DiscordConfigPatchSchema>;

export const DEFAULT_CONFIG: DiscordConfig = {
  rateLimits: {
    enabled: true,
    webhook: { limit: 5, windowSeconds: 2 },
    channel: { limit: 30, windowSeconds: 60 },
  },
  latencyMs: 0,
};

/** Applies a patch; throws a one-line Error naming the bad field when the result is invalid. */
export function applyConfigPatch(config: DiscordConfig, patch: unknown): DiscordConfig {
  const parsed = DiscordConfigPatchSchema.safeParse(patch ?? {});
  if (!parsed.success) throw new Error(describeIssue(parsed.error));
  const p = parsed.data;
  const next = DiscordConfigSchema.safeParse({
    latencyMs: p.latencyMs ?? config.latencyMs,
    rateLimits: {
      enabled: p.rateLimits?.enabled ?? config.rateLimits.enabled,
      webhook: { ...config.rateLimits.webhook, ...definedOnly(p.rateLimits?.webhook ?? {}) },
      channel: { ...config.rateLimits.channel, ...definedOnly(p.rateLimits?.channel ?? {}) },
    },
  });
  if (!next.success) throw new Error(describeIssue(next.error));
  return next.data;
}

export const FaultConfigSchema = z
  .object({
    /** The next N webhook API requests are answered 429 (before any other check). */
    rateLimited: z.number().int().min(0),
    /** Then the next N are answered with `serverErrorStatus`. */
    serverErrors: z.number().int().min(0),
    serverErrorStatus: z.union([z.literal(500), z.literal(502), z.literal(503), z.literal(504)]),
    /** retry_after / Retry-After of injected 429s. */
    retryAfterSeconds: z.number().min(0).max(3600),
    /** Injected 429s claim to be the global rate limit (X-RateLimit-Global: true, "global": true). */
    global: z.boolean(),
  })
  .strict();

export type FaultConfig = z.infer<typeof FaultConfigSchema>;

export const DEFAULT_FAULTS: FaultConfig = {
  rateLimited: 0,
  serverErrors: 0,
  serverErrorStatus: 500,
  retryAfterSeconds: 1,
  global: false,
};

export function applyFaultPatch(faults: FaultConfig, patch: unknown): FaultConfig {
  const parsed = FaultConfigSchema.partial()
    .strict()
    .safeParse(patch ?? {});
  if (!parsed.success) throw new Error(describeIssue(parsed.error));
  return { ...faults, ...definedOnly(parsed.data) };
}

/** Leaves out keys set to undefined, so `{ latencyMs: undefined }` keeps the current value. */
function definedOnly<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0]!;
  return `${issue.path.join('.') || 'config'}: ${issue.message}`;
}
