import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { approvalsSettingsFromConfig, archiverScheduleSettingsFromConfig, backfillAlertSettingsFromConfig, codecServerSettingsFromConfig, correctionsDays, healthSettingsFromConfig, quotaOptionsFromConfig, threadSettingsFromConfig } from '../src/config/settings.js';
import { ConfigError } from '../src/shared/config-error.js';
import { loadConfig } from '../src/config/env.js';
import { timeSettingsOf } from '../src/time/index.js';
import { nodeEntryArgs } from '../src/shared/node-entry.js';

const key = () => randomBytes(32).toString('base64');

describe('loadConfig', () => {
  it('applies defaults for an empty environment', () => {
    const cfg = loadConfig({});
    expect(cfg.TEMPORAL_ADDRESS).toBe('127.0.0.1:7233');
    expect(cfg.DURABLE_INBOX_MODE).toBe('dev');
    expect(cfg.LABEL_OUTBOX).toBe('Outbox');
    expect(cfg.MAX_REWORKS).toBe(3);
    expect(cfg.DATABASE_URL).toBeUndefined();
  });

  it('keeps corrections of triage LEARNING_CORRECTIONS_DAYS, by default as long as they teach (LEARNING_LOOKBACK)', () => {
    expect(correctionsDays(loadConfig({}))).toBe(60);
    expect(correctionsDays(loadConfig({ LEARNING_LOOKBACK: '30 days' }))).toBe(30);
    expect(correctionsDays(loadConfig({ LEARNING_CORRECTIONS_DAYS: '14' }))).toBe(14);
    expect(() => loadConfig({ LEARNING_CORRECTIONS_DAYS: '0' })).toThrow(/^LEARNING_CORRECTIONS_DAYS: /);
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ CODEC_SERVER_TOKEN: '', HTTP_PORT: '' }).HTTP_PORT).toBe(3000);
  });

  it.each([
    ['HTTP_PORT', 'eighty', /^HTTP_PORT: .*"eighty"/],
    ['TEMPORAL_ADDRESS', 'localhost', /^TEMPORAL_ADDRESS: expected host:port/],
    ['DATABASE_URL', 'mysql://x', /^DATABASE_URL: expected a postgresql:\/\/ URL/],
    ['PAYLOAD_ENCRYPTION_KEYS', 'k1:short', /^PAYLOAD_ENCRYPTION_KEYS: expected comma-separated/],
    ['GMAIL_QUOTA_PROFILE', '2025', /^GMAIL_QUOTA_PROFILE: /],
    ['GMAIL_QUOTA_MAX_RATE', '-3', /^GMAIL_QUOTA_MAX_RATE: /],
    ['ARCHIVER_TRASH', 'sometimes', /^ARCHIVER_TRASH: /],
    ['DEFAULT_TIME_ZONE', 'Mars/Olympus', /^DEFAULT_TIME_ZONE: expected an IANA time zone/],
    ['MORNING_HOUR', '24', /^MORNING_HOUR: /],
    ['WEEKEND_DAYS', 'sat,sun', /^WEEKEND_DAYS: expected ISO weekday numbers/],
    ['WEEKEND_DAYS', '1,2,3,4,5,6,7', /^WEEKEND_DAYS: .*not all seven/],
    ['LEARNING_WEEKLY_EMAIL', 'monday', /^LEARNING_WEEKLY_EMAIL: expected a weekday and a time such as "mon 08:00", or "off"/],
    ['LEARNING_WEEKLY_EMAIL', 'fri 25:00', /^LEARNING_WEEKLY_EMAIL: expected a weekday and a time/],
  ])('names %s and what it expects when its value is wrong', (name, value, pattern) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(pattern);
    expect((error as Error).message).not.toContain('\n');
  });

  it('gives every account’s time settings their defaults: UTC, 08:00, 18:00, Saturday and Sunday', () => {
    const cfg = loadConfig({});
    expect(timeSettingsOf({ timeZone: null }, cfg)).toEqual({ zone: 'UTC', morningHour: 8, eveningHour: 18, weekend: [6, 7] });
    expect(timeSettingsOf({ timeZone: 'Europe/Berlin' }, cfg).zone).toBe('Europe/Berlin');
    const set = loadConfig({ DEFAULT_TIME_ZONE: 'america/new_york', MORNING_HOUR: '9', EVENING_HOUR: '19', WEEKEND_DAYS: '5,6' });
    expect(timeSettingsOf({ timeZone: null }, set)).toEqual({ zone: 'America/New_York', morningHour: 9, eveningHour: 19, weekend: [5, 6] });
    expect(loadConfig({ WEEKEND_DAYS: 'none' }).WEEKEND_DAYS).toEqual([]);
  });

  it('sends the weekly lessons e-mail from Monday 08:00 by default; a weekday and time, or off', () => {
    expect(loadConfig({}).LEARNING_WEEKLY_EMAIL).toEqual({ weekday: 1, hour: 8, minute: 0 });
    expect(loadConfig({ LEARNING_WEEKLY_EMAIL: 'Friday 17:30' }).LEARNING_WEEKLY_EMAIL).toEqual({ weekday: 5, hour: 17, minute: 30 });
    expect(loadConfig({ LEARNING_WEEKLY_EMAIL: 'OFF' }).LEARNING_WEEKLY_EMAIL).toBeNull();
  });

  it('gives the quota limiter and the archiver their settings from the same parse', () => {
    const cfg = loadConfig({ GMAIL_QUOTA_PROFILE: '2026', GMAIL_QUOTA_START_RATE: '40', GMAIL_QUOTA_MAX_CONCURRENCY: '3', ARCHIVER_TRASH: 'yes' });
    expect(quotaOptionsFromConfig(cfg)).toEqual({ profile: '2026', startRate: 40, maxConcurrency: 3 });
    expect(archiverScheduleSettingsFromConfig(cfg)).toEqual({ every: '1 hour', trash: true, enabled: false });
  });

  it('gives the metrics ports, the backfill alerts and the health endpoint their settings', () => {
    const defaults = loadConfig({});
    expect([defaults.METRICS_PORT, defaults.TEMPORAL_METRICS_PORT]).toEqual([9465, 9464]);
    expect(backfillAlertSettingsFromConfig(defaults)).toEqual({ metadataBudgetBytes: 16 * 1024 * 1024, emailEveryMs: 6 * 3600_000 });
    expect(healthSettingsFromConfig(defaults)).toEqual({ pushSilentAfterMs: 15 * 60_000 });
    const cfg = loadConfig({ METRICS_PORT: '0', BACKFILL_METADATA_BUDGET_BYTES: '1000', BACKFILL_ALERT_EMAIL_EVERY: '30 minutes', SYNC_POLL_EVERY: '5 minutes', DISCORD_WEBHOOK_URL: 'https://discord.example/api/webhooks/1/t' });
    expect(cfg.METRICS_PORT).toBe(0);
    expect(backfillAlertSettingsFromConfig(cfg)).toEqual({ metadataBudgetBytes: 1000, emailEveryMs: 1800_000, discordWebhookUrl: 'https://discord.example/api/webhooks/1/t' });
    expect(healthSettingsFromConfig(cfg)).toEqual({ pushSilentAfterMs: 5 * 60_000 });
    expect(() => loadConfig({ TEMPORAL_METRICS_PORT: '70000' })).toThrow(/^TEMPORAL_METRICS_PORT: /);
    expect(() => loadConfig({ SYNC_POLL_EVERY: 'often' })).toThrow(/^SYNC_POLL_EVERY: expected a duration/);
  });

  it('gives the threads their activity timeouts only when set, each on its own', () => {
    expect(threadSettingsFromConfig(loadConfig({})).activityTimeouts).toBeUndefined();
    expect(threadSettingsFromConfig(loadConfig({ GMAIL_ACTIVITY_TIMEOUT: '20s' })).activityTimeouts).toEqual({ gmailMs: 20_000 });
    expect(threadSettingsFromConfig(loadConfig({ GMAIL_ACTIVITY_TIMEOUT: '20 seconds', LLM_ACTIVITY_TIMEOUT: '30s' })).activityTimeouts).toEqual({ gmailMs: 20_000, llmMs: 30_000 });
    expect(() => loadConfig({ LLM_ACTIVITY_TIMEOUT: '0s' })).toThrow(/LLM_ACTIVITY_TIMEOUT/);
    // A bare number is refused: its unit would be a guess.
    expect(() => loadConfig({ LLM_ACTIVITY_TIMEOUT: '30' })).toThrow(/LLM_ACTIVITY_TIMEOUT: expected a duration with its unit/);
  });

  it('parses several payload keys, first one encrypting', () => {
    const cfg = loadConfig({ PAYLOAD_ENCRYPTION_KEYS: `new:${key()}, old:${key()}` });
    expect(cfg.PAYLOAD_ENCRYPTION_KEYS?.map((k) => k.id)).toEqual(['new', 'old']);
    expect(cfg.PAYLOAD_ENCRYPTION_KEYS?.[0]?.key.length).toBe(32);
  });

  it('requires real keys, a database and the approvals secret in production mode', () => {
    expect(() => loadConfig({ DURABLE_INBOX_MODE: 'production' })).toThrow(/required when DURABLE_INBOX_MODE=production/);
    const production = {
      DURABLE_INBOX_MODE: 'production',
      PAYLOAD_ENCRYPTION_KEYS: `k1:${key()}`,
      TOKEN_ENCRYPTION_KEY: key(),
      DATABASE_URL: 'postgresql://u@h/db',
    };
    expect(() => loadConfig(production)).toThrow(/^APPROVALS_SECRET: required when DURABLE_INBOX_MODE=production/);
    const cfg = loadConfig({ ...production, APPROVALS_SECRET: key() });
    expect(cfg.DURABLE_INBOX_MODE).toBe('production');
  });

  it('points approval links at the HTTP server unless PUBLIC_BASE_URL says otherwise', () => {
    expect(approvalsSettingsFromConfig(loadConfig({ HTTP_PORT: '3100' }))).toEqual({ linkTtlMs: 96 * 3600_000, publicBaseUrl: 'http://127.0.0.1:3100' });
    const cfg = loadConfig({
      PUBLIC_BASE_URL: 'https://inbox.example.com/app/',
      APPROVALS_OPERATOR_TOKEN: 'operator-token-0123456789',
      APPROVALS_LINK_TTL: '2 hours',
      DISCORD_WEBHOOK_URL: 'https://discord.com/api/webhooks/1/abc',
    });
    expect(approvalsSettingsFromConfig(cfg)).toEqual({
      publicBaseUrl: 'https://inbox.example.com/app',
      operatorToken: 'operator-token-0123456789',
      linkTtlMs: 2 * 3600_000,
      discordWebhookUrl: 'https://discord.com/api/webhooks/1/abc',
    });
    expect(() => loadConfig({ APPROVALS_SECRET: 'short' })).toThrow(/^APPROVALS_SECRET: expected at least 32 characters/);
  });

  it('stops `npm run dev` with one line, not a stack trace', () => {
    const result = spawnSync(process.execPath, nodeEntryArgs('src/dev/main.ts'), {
      env: { ...process.env, HTTP_PORT: 'not-a-port' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^durable-inbox: invalid configuration: HTTP_PORT: /);
  });
});

describe('the mode is chosen, not defaulted into', () => {
  const production = {
    DURABLE_INBOX_MODE: 'production',
    PAYLOAD_ENCRYPTION_KEYS: `k1:${key()}`,
    TOKEN_ENCRYPTION_KEY: key(),
    DATABASE_URL: 'postgresql://u@db.internal:5432/durable_inbox',
    APPROVALS_SECRET: key(),
  };

  it.each([
    ['HTTP_HOST', '0.0.0.0'],
    ['CODEC_SERVER_HOST', '::'],
    ['METRICS_HOST', '10.0.0.5'],
    ['TEMPORAL_ADDRESS', 'temporal.internal:7233'],
    ['DATABASE_URL', 'postgresql://u@db.internal:5432/durable_inbox'],
    ['TEMPORAL_DATABASE_URL', 'postgresql://u@192.168.1.20/temporal'],
  ])('refuses dev mode, unset or set, with %s=%s off this machine; production takes it', (name, value) => {
    for (const mode of [{}, { DURABLE_INBOX_MODE: 'dev' }]) {
      let error: unknown;
      try {
        loadConfig({ ...mode, [name]: value });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(new RegExp(`^${name}: .* is not a loopback address, and dev mode .* DURABLE_INBOX_MODE=production`));
      expect((error as Error).message).not.toContain('\n');
    }
    expect(loadConfig({ ...production, [name]: value })[name as 'HTTP_HOST']).toBeDefined();
  });

  it('lets dev mode listen and connect on this machine', () => {
    const local = {
      HTTP_HOST: 'localhost',
      CODEC_SERVER_HOST: '::1',
      METRICS_HOST: '127.0.0.2',
      TEMPORAL_ADDRESS: 'localhost:7233',
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/durable_inbox',
      TEMPORAL_DATABASE_URL: 'postgresql:///temporal?host=/var/run/postgresql',
    };
    expect(loadConfig(local).DURABLE_INBOX_MODE).toBe('dev');
  });

  it('requires the mode set for the processes a deployment runs alone', () => {
    expect(() => loadConfig({}, { modeRequired: true })).toThrow(/^DURABLE_INBOX_MODE: not set; a deployment sets production/);
    expect(loadConfig({ DURABLE_INBOX_MODE: 'dev' }, { modeRequired: true }).DURABLE_INBOX_MODE).toBe('dev');
    expect(loadConfig(production, { modeRequired: true }).DURABLE_INBOX_MODE).toBe('production');
  });

  it('requires the codec server token in production, not in dev', () => {
    expect(() => codecServerSettingsFromConfig(loadConfig(production))).toThrow(/^CODEC_SERVER_TOKEN: required when DURABLE_INBOX_MODE=production/);
    const withToken = { ...production, CODEC_SERVER_TOKEN: 'codec-token-0123456789' };
    expect(codecServerSettingsFromConfig(loadConfig(withToken))).toMatchObject({ token: 'codec-token-0123456789' });
    expect(codecServerSettingsFromConfig(loadConfig({}))).toEqual({ host: '127.0.0.1', port: 8234, corsOrigin: 'http://localhost:8233' });
  });

  it.each([
    ['the HTTP server', 'src/http/main.ts', {}, /^DURABLE_INBOX_MODE: not set/],
    ['a worker', 'src/workers/gmail-worker.ts', { DURABLE_INBOX_MODE: 'dev', DATABASE_URL: 'postgresql://u@db.internal/x' }, /^DATABASE_URL: db.internal is not a loopback address/],
    ['the codec server', 'src/codec-server/main.ts', { DURABLE_INBOX_MODE: 'production' }, /^PAYLOAD_ENCRYPTION_KEYS: required/],
  ])('stops %s before it starts anything, with one line', (_what, entry, env, pattern) => {
    const result = spawnSync(process.execPath, nodeEntryArgs(entry), {
      env: { PATH: process.env['PATH'], HOME: process.env['HOME'], ...env },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.replace(/^durable-inbox: invalid configuration: /, '')).toMatch(pattern);
  });

  it('stops the codec server without its token in production', () => {
    const result = spawnSync(process.execPath, nodeEntryArgs('src/codec-server/main.ts'), {
      env: { PATH: process.env['PATH'], HOME: process.env['HOME'], ...production },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toMatch(/^durable-inbox: invalid configuration: CODEC_SERVER_TOKEN: required when DURABLE_INBOX_MODE=production/);
  });
});
