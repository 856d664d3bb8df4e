// Backfill, quota and archiver settings from the environment (validated like src/config.ts).
//   GMAIL_QUOTA_PROFILE        legacy | 2026 (shared with the emulator's setting)
//   GMAIL_QUOTA_START_RATE     units/s a new bucket starts at (default: half the profile's budget)
//   GMAIL_QUOTA_MAX_RATE       units/s AIMD never exceeds (default: 96 % of the budget)
//   GMAIL_QUOTA_BURST_SECONDS  bucket capacity in seconds of the current rate (default 1)
//   GMAIL_QUOTA_MAX_CONCURRENCY Gmail calls in flight per account per process (default 8)
//   ARCHIVER_EVERY             archiver schedule interval (default 1 hour)
//   ARCHIVER_TRASH             true: move archived mail to Trash instead of only removing INBOX
//   ARCHIVER_ENABLED           true: the archiver schedule starts unpaused (default: paused)
import { z } from 'zod';
import type { QuotaLimiterOptions } from '../quota/limiter.js';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const schema = z.object({
  GMAIL_QUOTA_PROFILE: z.enum(['legacy', '2026']).default('legacy'),
  GMAIL_QUOTA_START_RATE: z.coerce.number().positive().optional(),
  GMAIL_QUOTA_MAX_RATE: z.coerce.number().positive().optional(),
  GMAIL_QUOTA_BURST_SECONDS: z.coerce.number().positive().optional(),
  GMAIL_QUOTA_MAX_CONCURRENCY: z.coerce.number().int().positive().optional(),
  ARCHIVER_EVERY: z.string().min(1).default('1 hour'),
  ARCHIVER_TRASH: bool.default(false),
  ARCHIVER_ENABLED: bool.default(false),
});

export type BackfillEnv = z.infer<typeof schema>;

export function loadBackfillConfig(env: NodeJS.ProcessEnv = process.env): BackfillEnv {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(present);
  if (!result.success) {
    const first = result.error.issues[0]!;
    throw new Error(`${String(first.path[0])}: ${first.message}`);
  }
  return result.data;
}

export function quotaOptionsFromConfig(cfg: BackfillEnv): QuotaLimiterOptions {
  return {
    profile: cfg.GMAIL_QUOTA_PROFILE,
    ...(cfg.GMAIL_QUOTA_START_RATE !== undefined ? { startRate: cfg.GMAIL_QUOTA_START_RATE } : {}),
    ...(cfg.GMAIL_QUOTA_MAX_RATE !== undefined ? { maxRate: cfg.GMAIL_QUOTA_MAX_RATE } : {}),
    ...(cfg.GMAIL_QUOTA_BURST_SECONDS !== undefined ? { burstSeconds: cfg.GMAIL_QUOTA_BURST_SECONDS } : {}),
    ...(cfg.GMAIL_QUOTA_MAX_CONCURRENCY !== undefined ? { maxConcurrency: cfg.GMAIL_QUOTA_MAX_CONCURRENCY } : {}),
  };
}
