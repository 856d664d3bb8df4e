// The LLM guard counts every model call in the metrics: by purpose and result, the tokens billed,
// and each failure by kind (here: over the daily budget, and an error that is not the SDK's).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { createLlmGuard } from '../../src/llm/guard.js';
import { LIST_PRICES } from '../../src/llm/prices.js';
import { llmCalls, llmErrors, llmTokens } from '../../src/metrics/metrics.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { seedAccount } from '../helpers/approvals.js';
import { createScratchDatabase } from '../helpers/scratch-database.js';

let database: { url: string; drop(): Promise<void> };
let prisma: PrismaClient;

beforeAll(async () => {
  database = await createScratchDatabase();
  await applyMigrations(database.url);
  prisma = createPrismaClient(database.url);
});

afterAll(async () => {
  await prisma?.$disconnect();
  await database?.drop();
});

it('counts calls, tokens and errors by kind', async () => {
  const accountId = await seedAccount(prismaExecutor(prisma), 'guarded@example.com');
  const guarded = createLlmGuard({ prisma, sql: prismaExecutor(prisma) }, { dailyTokenBudget: 100, breaker: { failuresToOpen: 5, probeMinMs: 30_000, probeMaxMs: 600_000 } });
  const before = {
    ok: llmCalls.get({ purpose: 'classify', result: 'ok' }),
    in: llmTokens.get({ direction: 'in' }),
    out: llmTokens.get({ direction: 'out' }),
    budget: llmErrors.get({ kind: 'budget_exceeded' }),
    other: llmErrors.get({ kind: 'other' }),
  };

  await guarded(accountId, 1, () => Promise.resolve({ tokensIn: 90, tokensOut: 12 }), 'classify');
  expect(llmCalls.get({ purpose: 'classify', result: 'ok' })).toBe(before.ok + 1);
  expect(llmTokens.get({ direction: 'in' })).toBe(before.in + 90);
  expect(llmTokens.get({ direction: 'out' })).toBe(before.out + 12);

  // 102 of 100 tokens spent today: the next call is refused before it reaches the model.
  await expect(guarded(accountId, 1, () => Promise.resolve({ tokensIn: 1, tokensOut: 1 }), 'draft')).rejects.toThrow(/spent 102 of its 100/);
  expect(llmErrors.get({ kind: 'budget_exceeded' })).toBe(before.budget + 1);
  expect(llmCalls.get({ purpose: 'draft', result: 'budget_exceeded' })).toBeGreaterThanOrEqual(1);

  const fresh = await seedAccount(prismaExecutor(prisma), 'fresh@example.com');
  await expect(guarded(fresh, 1, () => Promise.reject(new Error('bug')), 'agent_turn')).rejects.toThrow('bug');
  expect(llmErrors.get({ kind: 'other' })).toBe(before.other + 1);
  expect(llmCalls.get({ purpose: 'agent_turn', result: 'other' })).toBeGreaterThanOrEqual(1);
});

it('pauses on a money budget as on the token budget, priced with the price table, the reason in money', async () => {
  const accountId = await seedAccount(prismaExecutor(prisma), 'money@example.com');
  const breaker = { failuresToOpen: 5, probeMinMs: 30_000, probeMaxMs: 600_000 };
  const guarded = createLlmGuard({ prisma, sql: prismaExecutor(prisma) }, { dailyTokenBudget: 1_000_000, dailyBudgetUsd: 0.001, prices: LIST_PRICES, breaker });
  // 200 tokens in at $3/M and 20 out at $15/M on Sonnet 4.6: $0.0009 a call.
  const call = () => Promise.resolve({ tokensIn: 200, tokensOut: 20, model: 'claude-sonnet-4-6' });
  await guarded(accountId, 1, call, 'draft');
  const [row] = await prisma.$queryRawUnsafe<{ cost_usd: number }[]>(`SELECT cost_usd FROM token_usage WHERE account_id = $1`, accountId);
  expect(row!.cost_usd).toBeCloseTo(0.0009, 10);
  await guarded(accountId, 1, call, 'draft'); // $0.0009 spent: under the budget, the call goes
  // $0.0018 of $0.001: refused before the model, and the account's LLM paused for the budget.
  await expect(guarded(accountId, 1, call, 'draft')).rejects.toThrow(/spent \$0\.0018 of its \$0\.001 LLM budget today/);
  const [paused] = await prisma.$queryRawUnsafe<{ state: string; reason: string }[]>(`SELECT state, reason FROM llm_breakers WHERE account_id = $1`, accountId);
  expect(paused).toMatchObject({ state: 'open', reason: 'budget' });
});

it("prices a call whose answer names no model at its role's model (modelFor), else the default model", async () => {
  const accountId = await seedAccount(prismaExecutor(prisma), 'role-model@example.com');
  const breaker = { failuresToOpen: 5, probeMinMs: 30_000, probeMaxMs: 600_000 };
  const settings = { dailyTokenBudget: 10_000_000, prices: LIST_PRICES, breaker, model: 'claude-sonnet-4-6', models: { classify: 'claude-haiku-5-5' } };
  const guarded = createLlmGuard({ prisma, sql: prismaExecutor(prisma) }, settings);
  const spent = async () => (await prisma.$queryRawUnsafe<{ cost_usd: number }[]>(`SELECT cost_usd FROM token_usage WHERE account_id = $1`, accountId))[0]!.cost_usd;
  // 1M tokens in on the classify role's Haiku 5.5 ($0.1/M): $0.1, not Sonnet's $3.
  await guarded(accountId, 1, () => Promise.resolve({ tokensIn: 1_000_000, tokensOut: 0 }), 'classify');
  expect(await spent()).toBeCloseTo(0.1, 10);
  // A draft has no role model: the default Sonnet 4.6 ($3/M in).
  await guarded(accountId, 1, () => Promise.resolve({ tokensIn: 1_000_000, tokensOut: 0 }), 'draft');
  expect(await spent()).toBeCloseTo(3.1, 10);
});
