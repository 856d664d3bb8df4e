// GET /healthz: 503 with status "down" when Temporal or PostgreSQL does not answer; otherwise 200,
// with status "ok", or "degraded" and the reasons (src/http/health-reasons.ts): the service runs, but
// something needs a person. Anyone may ask, so the answer is an up/down signal with reason codes
// (kind, level, how many) only; the operator token (APPROVALS_OPERATOR_TOKEN, as
// `Authorization: Bearer <token>` or `?token=`, like the approvals page) adds the details: which
// account, each reason's message, which check failed and why. The details are logged either way.
import type { IncomingMessage } from 'node:http';
import type { Client } from '@temporalio/client';
import { operatorTokenMatches } from '../actions/approval-links.js';
import type { PrismaClient } from '../db/client.js';
import { prismaExecutor } from '../db/sql-executor.js';
import { sendJson } from '../shared/json-response.js';
import { createLogger } from '../shared/log.js';
import type { DegradedReason, ReasonSource } from './health-reasons.js';
import type { RouteHandler } from '../shared/http-server.js';

const log = createLogger('health');

export interface HealthDeps {
  temporal: Client;
  prisma: PrismaClient;
  reasons?: ReasonSource[];
  timeoutMs?: number;
  /** Opens the details; without it, nobody sees them over HTTP. */
  operatorToken?: string;
}

type Check = { ok: true; latencyMs: number } | { ok: false; error: string };

/** A reason as anyone sees it: its code, its level and how many of it (e.g. accounts) there are. */
export interface ReasonCode {
  kind: string;
  level?: 'warn' | 'critical';
  count: number;
}

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

/** One code per kind, at the highest level among its reasons, in the order the kinds first appear. */
export function reasonCodes(reasons: DegradedReason[]): ReasonCode[] {
  const byKind = new Map<string, ReasonCode>();
  for (const r of reasons) {
    const code = byKind.get(r.kind) ?? { kind: r.kind, count: 0 };
    code.count += 1;
    if (r.level === 'critical' || (r.level === 'warn' && code.level !== 'critical')) code.level = r.level;
    byKind.set(r.kind, code);
  }
  return [...byKind.values()];
}

/** Without the details: whether each check answered, and how fast. */
const publicCheck = (check: Check) => (check.ok ? check : { ok: false });

function isOperator(req: IncomingMessage, operatorToken: string | undefined): boolean {
  const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
  const query = new URL(req.url ?? '/', 'http://x').searchParams.get('token');
  return operatorTokenMatches(operatorToken, bearer ?? query);
}

export function healthRoute({ temporal, prisma, reasons: sources = [], timeoutMs = 2000, operatorToken }: HealthDeps): RouteHandler {
  return async (req, res) => {
    const details = isOperator(req, operatorToken);
    const headers = { 'cache-control': 'no-store' };
    const [temporalCheck, postgresCheck] = await Promise.all([
      timed(() => temporal.workflowService.getSystemInfo({}), timeoutMs),
      timed(() => prisma.$queryRaw`SELECT 1`, timeoutMs),
    ]);
    if (!temporalCheck.ok || !postgresCheck.ok) {
      for (const [name, check] of [['Temporal', temporalCheck], ['PostgreSQL', postgresCheck]] as const) {
        if (!check.ok) log.warn(`down: ${name} does not answer: ${check.error}`);
      }
      const checks = details
        ? { temporal: temporalCheck, postgres: postgresCheck }
        : { temporal: publicCheck(temporalCheck), postgres: publicCheck(postgresCheck) };
      sendJson(res, 503, { status: 'down', ...checks, reasons: [] }, headers);
      return;
    }
    const reasons = await collectReasons(sources, prisma);
    for (const r of reasons.filter((r) => r.kind === 'health_check_failed')) log.warn(r.message);
    const status = reasons.length > 0 ? 'degraded' : 'ok';
    const body = { status, temporal: temporalCheck, postgres: postgresCheck, reasons: details ? reasons : reasonCodes(reasons) };
    sendJson(res, 200, body, headers);
  };
}
