// triageWithLlm classifies and writes the reply in one activity. When the reply fails after the
// classification, the activity hands back the classification alone (the workflow then calls
// writeDraft) rather than failing and paying for the classification again on its retry. Real
// Anthropic emulator over HTTP (its seeded random faults pick which request fails), real PostgreSQL.
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDatabasePool, type PrismaClient } from '../../src/db/client.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { startAnthropicEmulator, type AnthropicEmulator } from '../../emulators/anthropic/index.js';
import { draw } from '../../emulators/anthropic/random.js';
import { createLlmClient } from '../../src/llm/index.js';
import { pgExecutor } from '../../src/db/sql-executor.js';
import { createLlmActivities } from '../../src/thread/llm-activities.js';
import type { LlmActivities, LlmDraft, PromptMessage } from '../../src/thread/activity-contracts.js';
import { seedAccount } from '../helpers/approvals.js';
import { createScratchDatabase } from '../helpers/scratch-database.js';
import type pg from 'pg';

let database: { url: string; drop(): Promise<void> };
let db: { pool: pg.Pool; prisma: PrismaClient };
let emulator: AnthropicEmulator;

const FAULT_RATE = 0.5;

/** A seed whose random faults let the emulator's request 1 through, fail request 2 (500) and let request 3 through. */
function seedFailingTheSecondRequest(): number {
  for (let seed = 1; ; seed++) {
    if (draw(seed, 'fault', 1) >= FAULT_RATE && draw(seed, 'fault', 2) < FAULT_RATE && draw(seed, 'fault', 3) >= FAULT_RATE) return seed;
  }
}

beforeAll(async () => {
  database = await createScratchDatabase();
  await applyMigrations(database.url);
  db = createDatabasePool(database.url, { poolSize: 2 });
  emulator = await startAnthropicEmulator({ seed: seedFailingTheSecondRequest(), errorRates: { server: FAULT_RATE } });
});

afterAll(async () => {
  await emulator?.close();
  await db?.prisma.$disconnect();
  await db?.pool.end();
  await database?.drop();
});

const email: PromptMessage = {
  messageId: 'm-1',
  sender: 'dana@client.example',
  fromUser: false,
  from: 'Dana <dana@client.example>',
  to: 'me@example.com',
  subject: 'Contract',
  date: 'Mon, 3 Mar 2025 10:00:00 +0000',
  body: 'Hi,\n\nCould you send me the signed contract by Monday?\n\nThanks, Dana',
  headers: {},
};

it('hands back the classification when the reply fails, and the reply is written by writeDraft after it', async () => {
  const accountId = await seedAccount(pgExecutor(db.pool), 'triage@example.com');
  const activities = createLlmActivities({
    prisma: db.prisma,
    sql: pgExecutor(db.pool),
    anthropic: createLlmClient({ apiKey: 'test-key', baseURL: emulator.url, timeoutMs: 10_000 }),
    settings: {
      model: 'claude-haiku-4-5',
      dailyTokenBudget: 1_000_000,
      breaker: { failuresToOpen: 5, probeMinMs: 30_000, probeMaxMs: 600_000 },
      maxInputTokens: 20_000,
    },
  });
  const env = new MockActivityEnvironment();

  const triage = (await env.run(activities.triageWithLlm, {
    accountId,
    email,
    thread: [email],
    instructions: [],
    replyContext: { toneExamples: [] },
    outputAttempts: 3,
  })) as Awaited<ReturnType<LlmActivities['triageWithLlm']>>;
  expect(triage.classification.category).toBe('needs_response');
  expect(triage.draft).toBeUndefined();
  expect(emulator.metrics().requests).toBe(2); // the classification, then the reply that failed

  const draft = (await env.run(activities.writeDraft, { accountId, thread: [email], toneExamples: [], instructions: [], outputAttempts: 3 })) as LlmDraft;
  expect(draft.body.length).toBeGreaterThan(0);
  expect(emulator.metrics().requests).toBe(3); // not classified again

  // The failed call counted toward the breaker; the answer after it reset the count.
  const breaker = await db.pool.query<{ failures: number; state: string }>('SELECT failures, state FROM llm_breakers WHERE account_id = $1', [accountId]);
  expect(breaker.rows[0]).toEqual({ failures: 0, state: 'closed' });
});
