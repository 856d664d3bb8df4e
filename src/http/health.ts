// GET /healthz: 200 when Temporal and PostgreSQL both answer, 503 (with which one failed) otherwise.
// An account whose LLM is paused makes it "degraded" with the reason, still 200: mail keeps flowing.
import type { Client } from '@temporalio/client';
import type { PrismaClient } from '../db/client.js';
import { createBreakerStore } from '../llm/breaker-store.js';
import { describePause } from '../llm/breaker.js';
import { sendJson } from '../shared/json-response.js';
import type { RouteHandler } from './server.js';

export interface HealthDeps {
  temporal: Client;
  prisma: PrismaClient;
  timeoutMs?: number;
}

type Check = { ok: true; latencyMs: number } | { ok: false; error: string };

async function timed(fn: () => Promise<unknown>, timeoutMs: number): Promise<Check> {
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, latencyMs: Math.round(performance.now() - start) };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}

/** One degraded reason per account whose LLM is paused (its breaker is open). */
export async function llmDegradedReasons(prisma: PrismaClient): Promise<string[]> {
  const open = await createBreakerStore(prisma).listOpen();
  return open.map((b) => `LLM paused for ${b.email} (${b.reason}): ${describePause(b, b.email)}`);
}

export function healthRoute({ temporal, prisma, timeoutMs = 2000 }: HealthDeps): RouteHandler {
  return async (_req, res) => {
    const [temporalCheck, postgresCheck] = await Promise.all([
      timed(() => temporal.workflowService.getSystemInfo({}), timeoutMs),
      timed(() => prisma.$queryRaw`SELECT 1`, timeoutMs),
    ]);
    const ok = temporalCheck.ok && postgresCheck.ok;
    const degraded = postgresCheck.ok ? await llmDegradedReasons(prisma).catch(() => []) : [];
    sendJson(res, ok ? 200 : 503, {
      status: ok && degraded.length === 0 ? 'ok' : 'degraded',
      temporal: temporalCheck,
      postgres: postgresCheck,
      ...(degraded.length > 0 ? { degraded } : {}),
    });
  };
}
