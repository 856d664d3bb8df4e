// `npm run cli -- threads <list|show|reclassify> ...`: what the assistant did, from Postgres (closed
// threads included; the Web UI and `temporal workflow` show the running ones).
//   list [--account A] [--state S] [--limit N]   newest first
//   show <thread id> [--account A]               the thread's row and its decision log
//   reclassify <thread id> [--account A]         classify again (after a rule changed)
//   reclassify --account A --since 2d            every open thread of the account touched since
//   snooze <thread id> --until WHEN               archive now, back in the inbox (unread, labelled) at WHEN
//   unsnooze <thread id>                          back now
//   remind <thread id> --in 3d | --at WHEN [--note TEXT]   tell me then; the thread stays where it is
//   send-later <thread id> --at WHEN              send the thread's draft then, as it is then (undo cancels)
//   cancel <thread id> [--timer snooze|remind|send_later|follow_up]   cancel its timers
// <A> is an account id or its email address; WHEN in the account's time zone (docs/time.md).
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { threadSettingsFromConfig } from '../config/settings.js';
import type { Env } from '../config/env.js';
import type { PrismaClient } from '../db/client.js';
import { connectClient } from '../temporal/client.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';
import { CLOSED_STATES, THREAD_STATES, WAKE_KINDS, type Wake } from '../thread/contracts.js';
import { requestReclassify } from '../thread/ingest.js';
import { accountTimeSettings } from '../accounts/time-settings.js';
import { describeLocal } from '../time/index.js';
import { accountIdOf } from '../operations/account-ref.js';
import { askThreadTimer, findThread, listThreads, wakesOf, type TimerAsk } from '../operations/threads.js';
import { parseSubcommand, sinceDate, UsageError, withDatabase, type CliIo } from './command.js';
import { printTable } from './table.js';

export type ThreadsCliIo = CliIo;

export const USAGE = `usage: npm run cli -- threads list [--account A] [--state ${THREAD_STATES.join('|')}] [--limit N]
       npm run cli -- threads show <thread id> [--account A]
       npm run cli -- threads reclassify <thread id> [--account A]
       npm run cli -- threads reclassify --account A --since <N>m|h|d
       npm run cli -- threads snooze <thread id> --until WHEN [--account A]
       npm run cli -- threads unsnooze <thread id> [--account A]
       npm run cli -- threads remind <thread id> --in 3d | --at WHEN [--note TEXT] [--account A]
       npm run cli -- threads send-later <thread id> --at WHEN [--account A]
       npm run cli -- threads cancel <thread id> [--timer ${WAKE_KINDS.join('|')}] [--account A]
WHEN: "2026-12-01 09:00", "tomorrow 9:00", "monday 8:00", "tomorrow", "next week", in the account's time zone`;

const OPTIONS = {
  account: { type: 'string' },
  state: { type: 'string' },
  limit: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  in: { type: 'string' },
  at: { type: 'string' },
  note: { type: 'string' },
  timer: { type: 'string' },
} as const;

const TIMER_SUBCOMMANDS = ['snooze', 'unsnooze', 'remind', 'send-later', 'cancel'] as const;

/** The flags of `values` that are set. */
function pick<K extends string>(values: Partial<Record<K, string>>, ...keys: K[]): Partial<Record<K, string>> {
  return Object.fromEntries(keys.flatMap((k) => (values[k] === undefined ? [] : [[k, values[k]]]))) as Partial<Record<K, string>>;
}

const listArgs = z.object({
  account: z.string().optional(),
  state: z.enum(THREAD_STATES, { error: `expected one of ${THREAD_STATES.join(', ')}` }).optional(),
  limit: z
    .string()
    .regex(/^\d+$/, 'expected a whole number')
    .transform(Number)
    .refine((n) => n >= 1 && n <= 1000, 'expected 1 to 1000')
    .default(50),
});


/** The thread in Gmail's web client (the API's thread id is the one its URLs use). */
const gmailLink = (email: string, threadId: string) => `https://mail.google.com/mail/u/${encodeURIComponent(email)}/#all/${threadId}`;

async function list(prisma: PrismaClient, io: ThreadsCliIo, values: Record<string, unknown>): Promise<void> {
  const parsed = listArgs.safeParse(values);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UsageError(`--${issue.path.join('.')}: ${issue.message}`);
  }
  const { account, state, limit } = parsed.data;
  const rows = await listThreads(prisma, { ...(account ? { account } : {}), ...(state ? { state } : {}), limit });
  if (rows.length === 0) {
    io.out('No threads.');
    return;
  }
  printTable(
    io.out,
    ['UPDATED', 'ACCOUNT', 'THREAD', 'STATE', 'CATEGORY', 'CONFIDENCE', 'DRAFT', 'REWORKS'],
    rows.map((t) => [
      t.updatedAt.toISOString().slice(0, 19).replace('T', ' '),
      t.account.email,
      t.gmailThreadId,
      t.state,
      t.category ?? '-',
      t.confidence === null ? '-' : t.confidence.toFixed(2),
      t.draftId ?? '-',
      String(t.reworkCount),
    ]),
  );
}

function detailText(detail: unknown): string {
  if (detail && typeof detail === 'object' && 'text' in detail) return String((detail as { text: unknown }).text);
  return JSON.stringify(detail);
}

const wakeText = (w: Wake) =>
  ({ follow_up: `an answer to ${w.note ?? 'your message'} (follow-up)`, snooze: 'the snooze to end', remind: `a reminder${w.note ? ` (${w.note})` : ''}`, send_later: 'the scheduled send' })[w.kind];

async function show(cfg: Env, prisma: PrismaClient, io: ThreadsCliIo, threadId: string | undefined, account: string | undefined): Promise<void> {
  if (!threadId) throw new UsageError('show needs a thread id (see npm run cli -- threads list)');
  const t = await findThread(prisma, threadId, account);
  io.out(`thread ${t.gmailThreadId} of ${t.account.email}  (${gmailLink(t.account.email, t.gmailThreadId)})`);
  io.out(`state ${t.state}${t.category ? `, ${t.category}` : ''}${t.confidence !== null ? ` (${t.confidence.toFixed(2)})` : ''}` +
    `${t.draftId ? `, draft ${t.draftId}` : ''}, ${t.reworkCount} rework(s), updated ${t.updatedAt.toISOString()}` +
    `${t.closedAt ? `, closed ${t.closedAt.toISOString()}` : ''}`);
  io.out(`workflow thread/${t.accountId}/${t.gmailThreadId} (last run ${t.lastRunId ?? '-'})`);
  const wakes = wakesOf(t);
  if (wakes.length > 0) {
    const zone = (await accountTimeSettings(prisma, t.accountId, cfg))?.zone ?? 'UTC';
    for (const w of wakes) io.out(`waits for   ${wakeText(w)}: wakes ${describeLocal(new Date(w.at), zone)}  (journal ${w.actionId})`);
  }
  io.out('');
  printTable(
    io.out,
    ['AT', 'KIND', 'SOURCE', 'DETAIL', 'MODEL', 'TOKENS'],
    t.decisions.map((d) => [
      d.createdAt.toISOString().slice(0, 19).replace('T', ' '),
      d.kind,
      d.source,
      detailText(d.detail),
      d.model ?? '-',
      d.tokensIn === null ? '-' : `${d.tokensIn}/${d.tokensOut ?? 0}`,
    ]),
  );
  await printLessonsUsed(prisma, io, t.decisions);
  await printAgentSteps(prisma, io, t.accountId, t.gmailThreadId);
}

/** Which accepted lessons each draft was written with (id@version), and what that version said: why it wrote this. */
async function printLessonsUsed(prisma: PrismaClient, io: ThreadsCliIo, decisions: { kind: string; createdAt: Date; detail: unknown }[]): Promise<void> {
  const drafts = decisions.flatMap((d) => {
    const lessons = z.object({ lessons: z.array(z.string()) }).safeParse(d.detail);
    return lessons.success ? [{ d, refs: lessons.data.lessons }] : [];
  });
  if (drafts.length === 0) return;
  const refs = [...new Set(drafts.flatMap((x) => x.refs))].map((ref) => ref.split('@') as [string, string]);
  const versions = await prisma.lessonVersion.findMany({ where: { OR: refs.map(([lessonId, v]) => ({ lessonId, version: Number(v) })) } });
  const textOf = new Map(versions.map((v) => [`${v.lessonId}@${v.version}`, v.text]));
  io.out('');
  io.out('lessons used (npm run cli -- memory show <lesson id>)');
  for (const { d, refs: used } of drafts) {
    for (const ref of used) io.out(`  ${d.createdAt.toISOString().slice(0, 19).replace('T', ' ')}  ${d.kind}  ${ref}  ${textOf.get(ref) ?? '(lesson gone)'}`);
  }
}

const brief = (value: unknown, max = 80) => {
  const text = (typeof value === 'string' ? value : JSON.stringify(value ?? '')).replace(/\s+/g, ' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
};

/** The agent runs of the thread, step by step: model turns and tool calls, inputs, results, tokens. */
async function printAgentSteps(prisma: PrismaClient, io: ThreadsCliIo, accountId: string, threadId: string): Promise<void> {
  const steps = await prisma.agentStep.findMany({ where: { accountId, gmailThreadId: threadId }, orderBy: [{ startedAt: 'asc' }, { seq: 'asc' }] });
  if (steps.length === 0) return;
  const runs = [...new Set(steps.map((s) => s.runKey))];
  for (const run of runs) {
    const ofRun = steps.filter((s) => s.runKey === run);
    const tokensIn = ofRun.reduce((n, s) => n + (s.tokensIn ?? 0), 0);
    const tokensOut = ofRun.reduce((n, s) => n + (s.tokensOut ?? 0), 0);
    io.out('');
    io.out(`agent ${ofRun[0]!.profile}, run ${run}: ${ofRun.filter((s) => s.name === 'model').length} model turn(s), ${tokensIn}/${tokensOut} tokens`);
    printTable(
      io.out,
      ['#', 'STARTED', 'MS', 'STEP', 'STATUS', 'INPUT', 'RESULT', 'TOKENS'],
      ofRun.map((s) => [
        String(s.seq),
        s.startedAt.toISOString().slice(11, 23),
        String(s.finishedAt.getTime() - s.startedAt.getTime()),
        s.name,
        s.status,
        brief(s.input, 50),
        brief(s.result),
        s.tokensIn === null ? '-' : `${s.tokensIn}/${s.tokensOut ?? 0}`,
      ]),
    );
  }
}

/**
 * Signals each open thread to classify its latest message again; the decision log keeps the old
 * decision beside the new one. Closed threads (archived, sent, discarded) are left as they are.
 */
async function reclassify(cfg: Env, prisma: PrismaClient, io: ThreadsCliIo, threadId: string | undefined, values: { account?: string; since?: string }): Promise<void> {
  if (threadId && values.since) throw new UsageError('reclassify takes a thread id or --since, not both');
  if (!threadId && !values.since) throw new UsageError('reclassify needs a thread id, or --account and --since');
  const accountId = await accountIdOf(prisma, values.account);
  if (!threadId && !accountId) throw new UsageError('reclassify --since needs --account');
  const since = values.since ? sinceDate(values.since) : undefined;
  const threads = await prisma.thread.findMany({
    where: { ...(accountId ? { accountId } : {}), ...(threadId ? { gmailThreadId: threadId } : { updatedAt: { gte: since! } }) },
    orderBy: { updatedAt: 'asc' },
    select: { accountId: true, gmailThreadId: true, state: true },
  });
  if (threadId && threads.length === 0) throw new UsageError(`no thread ${threadId}${values.account ? ` in ${values.account}` : ''}`);
  if (threadId && threads.length > 1) throw new UsageError(`thread ${threadId} is in ${threads.length} accounts: give --account`);
  const open = threads.filter((t) => !(CLOSED_STATES as readonly string[]).includes(t.state));
  for (const t of threads) if (!open.includes(t)) io.out(`left as it is  ${t.gmailThreadId} (${t.state})`);
  if (open.length === 0) {
    if (!threadId) io.out(`no open thread updated since ${since!.toISOString()}`);
    return;
  }
  const client = await connectClient(cfg, await resolvePayloadKeys(cfg));
  try {
    const settings = threadSettingsFromConfig(cfg);
    const requestId = randomUUID();
    for (const t of open) {
      await requestReclassify(client, { accountId: t.accountId, threadId: t.gmailThreadId, settings, requestId, taskQueue: cfg.TEMPORAL_TASK_QUEUE });
      io.out(`reclassifying  ${t.gmailThreadId} (${t.state}): see npm run cli -- threads show ${t.gmailThreadId}`);
    }
  } finally {
    await client.connection.close();
  }
}

/** snooze, unsnooze, remind, send-later, cancel: a signal to the thread's workflow (started if need be). */
async function timer(
  cfg: Env,
  prisma: PrismaClient,
  io: ThreadsCliIo,
  sub: (typeof TIMER_SUBCOMMANDS)[number],
  threadId: string | undefined,
  values: { account?: string; in?: string; at?: string; until?: string; note?: string; timer?: string },
): Promise<void> {
  const ask: TimerAsk =
    sub === 'snooze'
      ? { kind: 'snooze', until: values.until ?? '' }
      : sub === 'remind'
        ? { kind: 'remind', ...pick(values, 'in', 'at', 'note') }
        : sub === 'send-later'
          ? { kind: 'send_later', ...pick(values, 'in', 'at') }
          : sub === 'unsnooze'
            ? { kind: 'unsnooze' }
            : { kind: 'cancel', ...pick(values, 'timer') };
  if (sub === 'snooze' && values.until === undefined) throw new UsageError('give one of --until');
  const client = await connectClient(cfg, await resolvePayloadKeys(cfg));
  try {
    const asked = await askThreadTimer(cfg, { prisma, client }, { threadId, ...(values.account ? { account: values.account } : {}) }, ask, 'cli');
    const at = 'at' in asked.request ? ` at ${describeLocal(new Date(asked.request.at), asked.zone)}` : '';
    io.out(`${sub}${at}: asked thread ${asked.threadId}; see npm run cli -- threads show ${asked.threadId}`);
  } finally {
    await client.connection.close();
  }
}

/** Entry for src/cli/main.ts. Returns the exit code. */
export async function runThreadsCli(cfg: Env, argv: string[], io: ThreadsCliIo = { out: (l) => console.log(l) }): Promise<number> {
  const parsed = parseSubcommand(io, { name: 'threads', usage: USAGE, subcommands: ['list', 'show', 'reclassify', ...TIMER_SUBCOMMANDS], options: OPTIONS }, argv);
  if (typeof parsed === 'number') return parsed;
  const { sub, values, positionals } = parsed;
  return withDatabase(cfg, io, { name: 'threads', usage: USAGE }, (prisma) => {
    if (sub === 'list') return list(prisma, io, values);
    if (sub === 'show') return show(cfg, prisma, io, positionals[0], values.account);
    if ((TIMER_SUBCOMMANDS as readonly string[]).includes(sub)) return timer(cfg, prisma, io, sub as (typeof TIMER_SUBCOMMANDS)[number], positionals[0], values);
    return reclassify(cfg, prisma, io, positionals[0], values);
  });
}
