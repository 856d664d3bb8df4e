// The operator's view of threads and their timers, shared by the surfaces that act for the user (the
// CLI's `threads` commands, the MCP server's tools): which threads there are, one thread with its
// decision log, and a snooze, reminder, send later or cancel asked of a thread's workflow.
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { threadSettingsFromConfig } from '../config/settings.js';
import type { Env } from '../config/env.js';
import type { PrismaClient } from '../db/client.js';
import { accountTimeSettings } from '../accounts/time-settings.js';
import { WAKE_KINDS, type ThreadState, type TimerRequest, type Wake } from '../thread/contracts.js';
import { requestTimer } from '../thread/ingest.js';
import { parseWhen, resolveWhen, TimeSpecError, type TimeSettings, type WhenSpec } from '../time/index.js';
import { accountIdOf } from './account-ref.js';
import { InvalidRequest } from './errors.js';

export interface ThreadFilter {
  account?: string;
  state?: ThreadState;
  category?: string;
  limit: number;
}

/** Threads, newest first. */
export async function listThreads(prisma: PrismaClient, filter: ThreadFilter) {
  const accountId = await accountIdOf(prisma, filter.account);
  return prisma.thread.findMany({
    where: { ...(accountId ? { accountId } : {}), ...(filter.state ? { state: filter.state } : {}), ...(filter.category ? { category: filter.category } : {}) },
    orderBy: { updatedAt: 'desc' },
    take: filter.limit,
    include: { account: { select: { email: true } } },
  });
}

/** The one thread an id names (its account when the id is in several). */
export async function findThread(prisma: PrismaClient, threadId: string | undefined, account: string | undefined) {
  if (!threadId) throw new InvalidRequest('give a thread id (see npm run cli -- threads list)');
  const accountId = await accountIdOf(prisma, account);
  const found = await prisma.thread.findMany({
    where: { gmailThreadId: threadId, ...(accountId ? { accountId } : {}) },
    include: { account: { select: { email: true } }, decisions: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } },
  });
  if (found.length === 0) throw new InvalidRequest(`no thread ${threadId}${account ? ` in ${account}` : ''}`);
  if (found.length > 1) throw new InvalidRequest(`thread ${threadId} is in ${found.length} accounts: give the account`);
  return found[0]!;
}

/** The thread's pending timers, soonest first. */
export const wakesOf = (t: { wakes: unknown }): Wake[] => (Array.isArray(t.wakes) ? (t.wakes as unknown as Wake[]) : []).sort((a, b) => a.at - b.at);

/** What the user asks of a thread's timers; times are text in the account's zone (docs/time.md). */
export type TimerAsk =
  | { kind: 'snooze'; until: string }
  | { kind: 'unsnooze' }
  | { kind: 'remind'; in?: string; at?: string; note?: string }
  | { kind: 'send_later'; in?: string; at?: string }
  | { kind: 'cancel'; timer?: string };

/** The moment a time names, in the account's zone; one that cannot be read is an invalid request saying why. */
function momentOf(field: string, spec: WhenSpec, settings: TimeSettings): number {
  try {
    return resolveWhen(spec, new Date(), settings).getTime();
  } catch (err) {
    if (err instanceof TimeSpecError) throw new InvalidRequest(`${field}: ${err.message}`);
    throw err;
  }
}

/** `in` ("3d") or `at` ("2026-12-01 09:00"): exactly one. */
function inOrAt(ask: { in?: string; at?: string }, settings: TimeSettings): number {
  if ((ask.in === undefined) === (ask.at === undefined)) throw new InvalidRequest('give one of --in, --at');
  return ask.in !== undefined ? momentOf('--in', { kind: 'in', duration: ask.in }, settings) : momentOf('--at', { kind: 'at', local: ask.at! }, settings);
}

export function timerRequestOf(ask: TimerAsk, settings: TimeSettings): TimerRequest {
  switch (ask.kind) {
    case 'snooze': {
      let spec: WhenSpec;
      try {
        spec = parseWhen(ask.until);
      } catch (err) {
        if (err instanceof TimeSpecError) throw new InvalidRequest(`--until: ${err.message}`);
        throw err;
      }
      return { kind: 'snooze', at: momentOf('--until', spec, settings) };
    }
    case 'remind':
      return { kind: 'remind', at: inOrAt(ask, settings), ...(ask.note ? { note: ask.note } : {}) };
    case 'send_later':
      return { kind: 'send_later', at: inOrAt(ask, settings) };
    case 'unsnooze':
      return { kind: 'unsnooze' };
    case 'cancel':
      if (ask.timer !== undefined && !(WAKE_KINDS as readonly string[]).includes(ask.timer)) throw new InvalidRequest(`--timer: expected one of ${WAKE_KINDS.join(', ')}`);
      return { kind: 'cancel', ...(ask.timer ? { timer: ask.timer as Wake['kind'] } : {}) };
  }
}

/**
 * Signals the thread's workflow (started if need be) with the timer the user asked for, through
 * `decidedBy` (cli, mcp): the journal records it. Returns the thread, the request and the account's zone.
 */
export async function askThreadTimer(
  cfg: Env,
  deps: { prisma: PrismaClient; client: Client },
  target: { threadId: string | undefined; account?: string },
  ask: TimerAsk,
  decidedBy: string,
): Promise<{ threadId: string; request: TimerRequest; zone: string }> {
  const t = await findThread(deps.prisma, target.threadId, target.account);
  const settings = (await accountTimeSettings(deps.prisma, t.accountId, cfg))!;
  const request = timerRequestOf(ask, settings);
  await requestTimer(deps.client, {
    accountId: t.accountId,
    threadId: t.gmailThreadId,
    settings: threadSettingsFromConfig(cfg),
    event: { type: 'timer_request', requestId: randomUUID(), request, by: 'user', decidedBy },
    taskQueue: cfg.TEMPORAL_TASK_QUEUE,
  });
  return { threadId: t.gmailThreadId, request, zone: settings.zone };
}
