// GET /healthz: 503 with status "down" when Temporal or PostgreSQL does not answer (which one, and
// why); otherwise 200, with status "ok", or "degraded" and the reasons (src/http/health-reasons.ts):
// the service runs, but something needs a person.
import type { Client } from '@temporalio/client';
import type { PrismaClient } from '../db/client.js';
import { prismaExecutor } from '../quota/sql.js';
import { sendJson } from '../shared/json-response.js';
import type { DegradedReason, ReasonSource } from './health-reasons.js';
import type { RouteHandler } from './server.js';

export interface HealthDeps {
  temporal: Client;
  prisma: PrismaClient;
  reasons?: ReasonSource[];
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

/** Every source's reasons; a source that fails says so as a reason of its own. */
async function collectReasons(sources: ReasonSource[], prisma: PrismaClient): Promise<DegradedReason[]> {
  const db = prismaExecutor(prisma);
  const now = new Date();
  const results = await Promise.all(
    sources.map((source) =>
      source(db, now).catch((err: unknown): DegradedReason[] => [
        { kind: 'health_check_failed', message: `a health check failed: ${err instanceof Error ? err.message : String(err)}` },
      ]),
    ),
  );
  return results.flat();
}

export function healthRoute({ temporal, prisma, reasons: sources = [], timeoutMs = 2000 }: HealthDeps): RouteHandler {
  return async (_req, res) => {
    const [temporalCheck, postgresCheck] = await Promise.all([
      timed(() => temporal.workflowService.getSystemInfo({}), timeoutMs),
      timed(() => prisma.$queryRaw`SELECT 1`, timeoutMs),
    ]);
    if (!temporalCheck.ok || !postgresCheck.ok) {
      sendJson(res, 503, { status: 'down', temporal: temporalCheck, postgres: postgresCheck, reasons: [] });
      return;
    }
    const reasons = await collectReasons(sources, prisma);
    sendJson(res, 200, { status: reasons.length > 0 ? 'degraded' : 'ok', temporal: temporalCheck, postgres: postgresCheck, reasons });
  };
}
