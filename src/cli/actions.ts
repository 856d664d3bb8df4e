// `npm run cli -- actions ...`: what the assistant did or wants to do in Gmail, and the user's say
// over it (docs/actions.md).
//   list [--account A] [--state S] [--thread T] [--limit N]   the journal, newest first
//   show <action id>                                          one action: why, its state, how to undo it
//   approve|reject <action id>                                decide an action that waits for approval
//   undo <action id> | --account A --since 1h                 take back one action, or everything since
//   pause|resume [--account A]                                the kill switch (drafting goes on)
//   defaults [--account A] [--category C --set LIST]          what each category's mail gets
//   policy [--account A] [--allow KIND:SCOPE[:REF]]... [--forward-to ADDRESS]... [--protect SENDER]...
//          [--min-confidence X] [--sends-per-hour N] [--earned-after N] [--follow-up-nudge on|off] [--reset]
// <A> is an account id or its email address.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { Env } from '../config/env.js';
import type { PrismaClient } from '../db/client.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';
import { connectClient } from '../temporal/client.js';
import { formatActionList, InvalidActionSpecError, parseActionList } from '../actions/action-specs.js';
import { ACTION_KINDS, ACTION_STATES, type ActionKind, type Decision, reversalOf } from '../actions/contracts.js';
import { decideAction, undoSince, type DecideDeps } from '../thread/decide.js';
import { listActions, loadAction, loadCategoryActions, loadSafetyPolicy, setCategoryActions, updateSafetySettings } from '../actions/journal.js';
import type { Allowance, AllowanceScope, SafetyPolicy } from '../actions/policy.js';
import { CATEGORIES, type Category } from '../mail/types.js';
import { prismaExecutor } from '../db/sql-executor.js';
import { accountIdOf } from '../operations/account-ref.js';
import { parseSubcommand, sinceDate, UsageError, withDatabase, type CliIo } from './command.js';
import { printTable } from './table.js';
import { recipientsText } from '../actions/approval-request.js';
import { displaySafe } from '../shared/display-text.js';

export const USAGE = `usage: npm run cli -- actions list [--account A] [--state ${ACTION_STATES.join('|')}] [--thread T] [--limit N]
       npm run cli -- actions show <action id>
       npm run cli -- actions approve|reject <action id>
       npm run cli -- actions undo <action id>
       npm run cli -- actions undo --account A --since <N>m|h|d
       npm run cli -- actions pause|resume [--account A]
       npm run cli -- actions defaults [--account A] [--category C --set LIST]
       npm run cli -- actions policy [--account A] [--allow KIND:SCOPE[:REF]]... [--forward-to ADDRESS]... [--protect SENDER]...
                                     [--min-confidence X] [--sends-per-hour N] [--earned-after N] [--follow-up-nudge on|off] [--reset]
LIST: kind or kind:argument, comma-separated (${ACTION_KINDS.join(', ')}), or none; e.g. add_label:Newsletters,archive
SCOPE: global, account, domain or sender`;

const OPTIONS = {
  account: { type: 'string' },
  state: { type: 'string' },
  thread: { type: 'string' },
  limit: { type: 'string' },
  since: { type: 'string' },
  category: { type: 'string' },
  set: { type: 'string' },
  allow: { type: 'string', multiple: true },
  'forward-to': { type: 'string', multiple: true },
  protect: { type: 'string', multiple: true },
  'min-confidence': { type: 'string' },
  'sends-per-hour': { type: 'string' },
  'earned-after': { type: 'string' },
  'follow-up-nudge': { type: 'string' },
  reset: { type: 'boolean', default: false },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

const SUBCOMMANDS = ['list', 'show', 'approve', 'reject', 'undo', 'pause', 'resume', 'defaults', 'policy'] as const;

const when = (iso: string | undefined) => (iso ? iso.slice(0, 19).replace('T', ' ') : '-');


function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, flag: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new UsageError(`${flag}: ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

const wholeNumber = (min: number, max: number) =>
  z.string().regex(/^\d+$/, 'expected a whole number').transform(Number).refine((n) => n >= min && n <= max, `expected ${min} to ${max}`);

async function list(prisma: PrismaClient, io: CliIo, values: Values): Promise<void> {
  const state = values.state === undefined ? undefined : parseOrThrow(z.enum(ACTION_STATES, { error: `expected one of ${ACTION_STATES.join(', ')}` }), values.state, '--state');
  const limit = values.limit === undefined ? 50 : parseOrThrow(wholeNumber(1, 1000), values.limit, '--limit');
  const accountId = await accountIdOf(prisma, values.account);
  const actions = await listActions(prismaExecutor(prisma), {
    ...(accountId ? { accountId } : {}),
    ...(values.thread ? { threadId: values.thread } : {}),
    ...(state ? { states: [state] } : {}),
    limit,
  });
  if (actions.length === 0) {
    io.out('No actions.');
    return;
  }
  printTable(
    io.out,
    ['CREATED', 'ID', 'THREAD', 'ACTION', 'TO', 'STATE', 'BY', 'WHY'],
    actions.map((a) => [
      when(a.createdAt),
      a.id,
      a.threadId,
      a.argument ? `${a.kind} ${a.argument}` : a.kind,
      recipientsText(a) || '-',
      a.state,
      a.reason.source === 'rule' ? `rule ${a.reason.ruleId}` : a.reason.source === 'llm' ? `llm ${a.reason.confidence.toFixed(2)}` : a.reason.source,
      a.because.join('; '),
    ]),
  );
}

async function show(prisma: PrismaClient, io: CliIo, id: string | undefined): Promise<void> {
  if (!id) throw new UsageError('show needs an action id (see npm run cli -- actions list)');
  const a = await loadAction(prismaExecutor(prisma), id);
  if (!a) throw new UsageError(`no action ${id}`);
  const reversal = reversalOf(a, a.state);
  // What the journal holds came from mail in part: shown without control characters or bidi overrides.
  const out = (line: string) => io.out(displaySafe(line, { multiline: true }));
  out(`action ${a.id}: ${a.argument ? `${a.kind} ${a.argument}` : a.kind} on thread ${a.threadId} (message ${a.messageId})`);
  if (a.sender) out(`from       ${a.sender}`);
  if (a.subject) out(`subject    ${a.subject}`);
  if (a.recipients.length > 0 || a.kind === 'forward') out(`to         ${recipientsText(a) || '(nobody)'}`);
  out(`state      ${a.state}${a.decidedBy ? ` (by ${a.decidedBy})` : ''}${a.note ? `: ${a.note}` : ''}`);
  out(`proposed   ${when(a.createdAt)} by ${JSON.stringify(a.reason)}`);
  out(`policy     ${a.verdict}: ${a.because.join('; ')}`);
  if (a.expiresAt) out(`expires    ${when(a.expiresAt)}`);
  if (a.scheduledFor) out(`sends at   ${when(a.scheduledFor)}`);
  if (a.doneAt) out(`done       ${when(a.doneAt)}`);
  if (a.result?.sentMessageId) out(`sent as    ${a.result.sentMessageId}`);
  if (a.result?.body) out(`text       ${a.result.body.split('\n').join('\n           ')}`);
  if (a.result?.mailboxRead?.length) out(`read       ${a.result.mailboxRead.join('\n           ')}`);
  out(`undo       ${reversal.kind === 'none' ? `not possible: ${reversal.why}` : `npm run cli -- actions undo ${a.id}`}`);
  if (a.state === 'awaiting_approval') out(`decide     npm run cli -- actions approve ${a.id}   (or reject)`);
}

async function decide(cfg: Env, prisma: PrismaClient, io: CliIo, decision: Decision, id: string | undefined, values: Values): Promise<boolean> {
  const client = await connectClient(cfg, await resolvePayloadKeys(cfg));
  const deps: DecideDeps = { client, db: prismaExecutor(prisma), taskQueue: cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: cfg.GMAIL_TASK_QUEUE };
  try {
    if (decision === 'undo' && !id) {
      if (!values.since) throw new UsageError('undo needs an action id, or --account and --since');
      const since = sinceDate(values.since);
      const accountId = await accountIdOf(prisma, values.account);
      if (!accountId) throw new UsageError('undo --since needs --account');
      const outcomes = await undoSince(deps, { accountId, since }, 'cli');
      if (outcomes.length === 0) io.out(`nothing to undo since ${since.toISOString()}`);
      for (const o of outcomes) io.out(`${o.ok ? 'undone   ' : 'not undone'} ${o.message}`);
      return outcomes.every((o) => o.ok);
    }
    if (!id) throw new UsageError(`${decision} needs an action id (see npm run cli -- actions list --state awaiting_approval)`);
    const outcome = await decideAction(deps, id, decision, 'cli');
    io.out(outcome.message);
    return outcome.ok;
  } finally {
    await client.connection.close();
  }
}

async function defaults(prisma: PrismaClient, io: CliIo, values: Values): Promise<void> {
  const accountId = await accountIdOf(prisma, values.account);
  const db = prismaExecutor(prisma);
  if (values.set !== undefined || values.category !== undefined) {
    if (values.set === undefined || values.category === undefined) throw new UsageError('--category and --set go together');
    const category = parseOrThrow(z.enum(CATEGORIES, { error: `expected one of ${CATEGORIES.join(', ')}` }), values.category, '--category');
    let specs;
    try {
      specs = parseActionList(values.set);
    } catch (err) {
      if (err instanceof InvalidActionSpecError) throw new UsageError(`--set: ${err.message}`);
      throw err;
    }
    await setCategoryActions(db, accountId ?? '', category, specs);
    io.out(`${category} mail${accountId ? ` of ${values.account}` : ''} now gets: ${formatActionList(specs)}`);
    return;
  }
  const byCategory = await loadCategoryActions(db, accountId ?? '');
  printTable(io.out, ['CATEGORY', 'ACTIONS'], (Object.entries(byCategory) as [Category, typeof byCategory[Category]][]).map(([c, specs]) => [c, formatActionList(specs)]));
}

function allowanceOf(text: string): Allowance {
  const [kind, scope, ...rest] = text.split(':');
  const ref = rest.join(':') || undefined;
  if (!(ACTION_KINDS as readonly string[]).includes(kind ?? '')) throw new UsageError(`--allow: ${kind} is not an action kind (${ACTION_KINDS.join(', ')})`);
  if (!['global', 'account', 'domain', 'sender'].includes(scope ?? '')) throw new UsageError(`--allow: expected KIND:global, KIND:account:A, KIND:domain:D or KIND:sender:S`);
  if (scope !== 'global' && !ref) throw new UsageError(`--allow: ${scope} needs a reference (${kind}:${scope}:<ref>)`);
  return { kind: kind as ActionKind, scope: scope as AllowanceScope, ...(ref ? { ref: ref.toLowerCase() } : {}) };
}

async function policy(prisma: PrismaClient, io: CliIo, values: Values): Promise<void> {
  const accountId = await accountIdOf(prisma, values.account);
  const db = prismaExecutor(prisma);
  const scope = accountId ?? '';
  if (values.reset) await prisma.safetySettings.deleteMany({ where: { scopeRef: scope } });
  const current = await loadSafetyPolicy(db, scope);
  const patch: Partial<SafetyPolicy> = {};
  if (values.allow) patch.allowances = [...current.allowances, ...values.allow.map(allowanceOf).map((a) => (a.scope === 'account' && accountId ? { ...a, ref: accountId } : a))];
  if (values['forward-to']) patch.forwardTo = [...new Set([...current.forwardTo, ...values['forward-to'].map((a) => parseOrThrow(z.email(), a, '--forward-to').toLowerCase())])];
  if (values.protect) patch.protectedSenders = [...new Set([...current.protectedSenders, ...values.protect.map((p) => p.toLowerCase())])];
  if (values['min-confidence'] !== undefined) patch.minConfidence = parseOrThrow(z.coerce.number().min(0).max(1), values['min-confidence'], '--min-confidence');
  if (values['sends-per-hour'] !== undefined) patch.sendsPerHour = parseOrThrow(wholeNumber(0, 10_000), values['sends-per-hour'], '--sends-per-hour');
  if (values['earned-after'] !== undefined) patch.earnedAfter = parseOrThrow(wholeNumber(0, 1000), values['earned-after'], '--earned-after');
  if (values['follow-up-nudge'] !== undefined) patch.followUpNudge = parseOrThrow(z.enum(['on', 'off'], { error: 'expected on or off' }), values['follow-up-nudge'], '--follow-up-nudge') === 'on';
  if (Object.keys(patch).length > 0) await updateSafetySettings(db, scope, patch);
  const p = await loadSafetyPolicy(db, scope);
  io.out(`safety policy${accountId ? ` of ${values.account}` : ' (global)'}${p.paused ? ' — PAUSED: every automatic action waits for approval' : ''}`);
  io.out(`allowed without approval  ${p.allowances.map((a) => `${a.kind}:${a.scope}${a.ref ? `:${a.ref}` : ''}`).join(', ') || 'none'}`);
  io.out(`forwards only to          ${p.forwardTo.join(', ') || 'nobody'}`);
  io.out(`protected senders         ${p.protectedSenders.join(', ') || 'none'}`);
  io.out(`LLM confidence below      ${p.minConfidence} needs approval`);
  io.out(`automatic sends per hour  ${p.sendsPerHour}`);
  io.out(`auto-reply earned after   ${p.earnedAfter} drafts sent unedited`);
  io.out(`follow-up nudge drafts    ${p.followUpNudge ? 'on' : 'off'}`);
}

/** Entry for src/cli/main.ts. Returns the exit code. */
export async function runActionsCli(cfg: Env, argv: string[], io: CliIo = { out: (l) => console.log(l) }): Promise<number> {
  const parsed = parseSubcommand(io, { name: 'actions', usage: USAGE, subcommands: SUBCOMMANDS, options: OPTIONS }, argv);
  if (typeof parsed === 'number') return parsed;
  const { sub, values, positionals } = parsed;
  let ok = true;
  const code = await withDatabase(cfg, io, { name: 'actions', usage: USAGE }, async (prisma) => {
    switch (sub) {
      case 'list':
        return list(prisma, io, values);
      case 'show':
        return show(prisma, io, positionals[0]);
      case 'approve':
      case 'reject':
      case 'undo':
        ok = await decide(cfg, prisma, io, sub, positionals[0], values);
        return;
      case 'pause':
      case 'resume': {
        const accountId = await accountIdOf(prisma, values.account);
        await updateSafetySettings(prismaExecutor(prisma), accountId ?? '', { paused: sub === 'pause' });
        io.out(
          sub === 'pause'
            ? `paused${accountId ? ` for ${values.account}` : ''}: every automatic action now waits for approval; drafting goes on (resume with npm run cli -- actions resume)`
            : `resumed${accountId ? ` for ${values.account}` : ''}: automatic actions run as the policy allows`,
        );
        return;
      }
      case 'defaults':
        return defaults(prisma, io, values);
      case 'policy':
        return policy(prisma, io, values);
    }
  });
  return code === 0 && !ok ? 1 : code;
}
