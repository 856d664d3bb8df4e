// `npm run cli -- rules <list|add|enable|disable|remove|test> ...`: tier one of classification, the
// rules stored in Postgres (docs/rules.md).
//   list   [--account A]                          user rules (for A: the ones that apply to it) and built-ins
//   add    --scope global|account|domain|sender [--ref REF]
//          (--category C [--actions LIST] [--route AGENT] | --instruction TEXT | --expects-reply yes|no [--follow-up-days N])
//          [--from P] [--to P] [--subject P] [--body P] [--header NAME[=P]]... [--priority N]
//          [--dry-run --account A]   nothing added: what the rule would have changed on A's mail of the last 30 days
//   enable|disable|remove <rule id>
//   test   [--account A] --from ADDRESS [--to ADDRESS] [--subject S] [--body B] [--header NAME=VALUE]...
//          which rule would decide such an email, and the instructions its prompt would carry
//   test   --account A --since 30d: the rules in force over A's stored threads of that long back
//   test   [--account A] --sent --to ADDRESSES [--subject S] [--body B]
//          whether a message you send would expect an answer by the follow-up rules (else the LLM judges)
// REF: the account (id or email) for account rules, a domain for domain rules, an address for sender rules
// (for an --expects-reply rule: of the sent message's recipients).
// P: a case-insensitive substring, or a regular expression between slashes (/^re:/).
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { learningSettingsFromConfig, wholeDays } from '../config/settings.js';
import type { Env } from '../config/env.js';
import { prismaExecutor } from '../db/sql-executor.js';
import { describeOutcome, dryRunRuleChange, replayRules } from '../learning/dry-run.js';
import { dryRunLines } from '../learning/describe.js';
import type { PrismaClient } from '../db/client.js';
import { ruleAction, ruleFromRow } from '../rules/rule-rows.js';
import { applicableInstructions, BUILTIN_RULES, evaluateFollowUpRules, evaluateRules, InvalidRuleError, MAX_FOLLOW_UP_DAYS, validateRule } from '../rules/rules.js';
import { CATEGORIES } from '../mail/types.js';
import { canonicalAddress, senderAddress } from '../gmail/addresses.js';
import { formatActionList, InvalidActionSpecError, parseActionList } from '../actions/action-specs.js';
import type { ActionSpec } from '../actions/contracts.js';
import { requireAccount } from './account-ref.js';
import { parseSubcommand, sinceDate, UsageError, withDatabase, type CliIo } from './command.js';
import { printTable } from './table.js';
import type { Rule } from '../rules/contracts.js';

export type RulesCliIo = CliIo;

export const USAGE = `usage: npm run cli -- rules list [--account A]
       npm run cli -- rules add --scope global|account|domain|sender [--ref REF]
                                (--category C [--actions LIST] [--route AGENT] | --instruction TEXT | --expects-reply yes|no [--follow-up-days N])
                                [--from P] [--to P] [--subject P] [--body P] [--header NAME[=P]]... [--priority N]
                                [--dry-run --account A]
       npm run cli -- rules enable|disable|remove <rule id>
       npm run cli -- rules test [--account A] --from ADDRESS [--to ADDRESS] [--subject S] [--body B] [--header NAME=VALUE]...
       npm run cli -- rules test --account A --since <N>d|h|m
       npm run cli -- rules test [--account A] --sent --to ADDRESSES [--subject S] [--body B]
categories: ${CATEGORIES.join(', ')}
LIST: what to do with the thread instead of the category's actions, e.g. archive,add_label:Receipts (docs/actions.md)
AGENT: an agent profile (npm run cli -- agents list) the thread is handed to instead (docs/agent.md)
--expects-reply: for mail you send matching the rule (domain/sender scope: its recipients), whether it expects an answer,
  decided without the LLM; N: business days before the follow-up (docs/time.md)`;


const OPTIONS = {
  account: { type: 'string' },
  scope: { type: 'string' },
  ref: { type: 'string' },
  category: { type: 'string' },
  instruction: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  subject: { type: 'string' },
  body: { type: 'string' },
  header: { type: 'string', multiple: true },
  priority: { type: 'string' },
  actions: { type: 'string' },
  route: { type: 'string' },
  'expects-reply': { type: 'string' },
  'follow-up-days': { type: 'string' },
  since: { type: 'string' },
  'dry-run': { type: 'boolean', default: false },
  sent: { type: 'boolean', default: false },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

const addArgs = z
  .object({
    scope: z.enum(['global', 'account', 'domain', 'sender'], { error: 'expected global, account, domain or sender' }),
    ref: z.string().trim().min(1).optional(),
    category: z.enum(CATEGORIES, { error: `expected one of ${CATEGORIES.join(', ')}` }).optional(),
    instruction: z.string().trim().min(1, 'expected the instruction text').optional(),
    'expects-reply': z.enum(['yes', 'no'], { error: 'expected yes or no' }).optional(),
    'follow-up-days': z
      .string()
      .regex(/^\d+$/, 'expected a whole number of business days')
      .transform(Number)
      .refine((n) => n >= 1 && n <= MAX_FOLLOW_UP_DAYS, `expected 1 to ${MAX_FOLLOW_UP_DAYS}`)
      .optional(),
    from: z.string().min(1).optional(),
    to: z.string().min(1).optional(),
    subject: z.string().min(1).optional(),
    body: z.string().min(1).optional(),
    header: z.array(z.string().min(1)).optional(),
    priority: z
      .string()
      .regex(/^-?\d+$/, 'expected a whole number')
      .transform(Number)
      .optional(),
  })
  .refine((a) => [a.category, a.instruction, a['expects-reply']].filter((v) => v !== undefined).length === 1, {
    message: 'give exactly one of --category (the rule decides), --instruction (the rule guides the LLM) and --expects-reply (for mail you send)',
    path: ['category'],
  })
  .refine((a) => a['follow-up-days'] === undefined || a['expects-reply'] === 'yes', {
    message: 'goes with --expects-reply yes (the wait for the answer)',
    path: ['follow-up-days'],
  })
  .refine((a) => (a.scope === 'global') === (a.ref === undefined), {
    message: 'global rules take no --ref; account, domain and sender rules need one',
    path: ['ref'],
  })
  .refine((a) => a.scope !== 'sender' || canonicalAddress(a.ref ?? '') !== '', { message: 'a sender rule needs an address', path: ['ref'] })
  .refine((a) => a.scope !== 'domain' || /^@?[^@\s]+\.[^@\s]+$/.test(a.ref ?? ''), {
    message: 'a domain rule needs a domain (example.com; subdomains are included)',
    path: ['ref'],
  });

function parseOrThrow<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new UsageError(`--${issue.path.join('.') || 'arguments'}: ${issue.message}`);
}

/** NAME or NAME=PATTERN (NAME=VALUE for `test`). */
function splitHeader(spec: string): { name: string; value?: string } {
  const eq = spec.indexOf('=');
  const name = (eq < 0 ? spec : spec.slice(0, eq)).trim();
  if (!/^[!-9;-~]+$/.test(name)) throw new UsageError(`--header ${spec}: expected NAME or NAME=PATTERN`);
  return eq < 0 ? { name } : { name, value: spec.slice(eq + 1) };
}


/** What a rule does, in one line. */
function describeDoes(r: Rule): string {
  if (r.kind === 'follow_up') {
    if (!r.expectsReply) return 'sent mail expects no reply';
    return `sent mail expects a reply${r.followUpDays ? `, follow up after ${r.followUpDays} business day(s)` : ''}`;
  }
  if (r.kind === 'instruction') return `instruction: ${JSON.stringify(r.instruction ?? '')}`;
  return `category ${r.category ?? '?'}${r.route ? `, agent ${r.route}` : ''}${r.actions ? `, then ${formatActionList(r.actions)}` : ''}`;
}

function describeConditions(rule: Rule): string {
  const c = rule.conditions ?? {};
  const parts = (['from', 'to', 'subject', 'body'] as const).flatMap((f) => (c[f] ? [`${f}~${c[f]}`] : []));
  for (const h of c.header ?? []) parts.push(h.pattern === undefined ? `header ${h.name}` : `header ${h.name}~${h.pattern}`);
  return parts.length ? parts.join(' ') : '(all mail in scope)';
}

async function listRules(prisma: PrismaClient, io: RulesCliIo, account?: string): Promise<void> {
  const owner = account ? await requireAccount(prisma, account) : undefined;
  const rows = await prisma.rule.findMany({
    where: owner ? { OR: [{ scope: { not: 'account' } }, { scopeRef: owner.id }] } : {},
    orderBy: [{ scope: 'asc' }, { priority: 'desc' }, { createdAt: 'asc' }],
  });
  const rules = [...rows.map(ruleFromRow), ...BUILTIN_RULES];
  // Account rules name the account by its email (they store its id).
  const accountIds = [...new Set(rules.flatMap((r) => (r.scope === 'account' && r.scopeRef ? [r.scopeRef] : [])))];
  const emails = new Map(
    (await prisma.account.findMany({ where: { id: { in: accountIds } }, select: { id: true, email: true } })).map((a) => [a.id, a.email]),
  );
  printTable(
    io.out,
    ['ID', 'SCOPE', 'REF', 'DOES', 'WHEN', 'PRIORITY', 'ENABLED'],
    rules.map((r) => [
      r.id,
      r.scope,
      (r.scope === 'account' && r.scopeRef ? emails.get(r.scopeRef) : undefined) ?? r.scopeRef ?? '-',
      describeDoes(r),
      describeConditions(r),
      String(r.priority),
      r.id.startsWith('builtin:') ? 'built-in' : r.enabled ? 'yes' : 'no',
    ]),
  );
  io.out('\nA more specific scope wins (sender > domain > account > global); within a scope, the higher priority.');
}

function actionsArgument(text: string, category: string | undefined): ActionSpec[] {
  if (!category) throw new UsageError('--actions goes with --category (an instruction rule decides nothing)');
  try {
    return parseActionList(text);
  } catch (err) {
    if (err instanceof InvalidActionSpecError) throw new UsageError(`--actions: ${err.message}`);
    throw err;
  }
}

async function routeArgument(prisma: PrismaClient, name: string, category: string | undefined): Promise<string> {
  if (!category) throw new UsageError('--route goes with --category (an instruction rule decides nothing)');
  if (!(await prisma.agentProfile.findUnique({ where: { name } }))) throw new UsageError(`--route: no agent profile ${name} (see npm run cli -- agents list)`);
  return name;
}

/** The rule `rules add` describes, checked; nothing is stored. */
export async function ruleFromArgs(prisma: PrismaClient, values: Values): Promise<Rule> {
  const args = parseOrThrow(addArgs, values);
  let scopeRef = args.ref;
  if (args.scope === 'account') scopeRef = (await requireAccount(prisma, args.ref!)).id;
  if (args.scope === 'sender' || args.scope === 'domain') scopeRef = scopeRef!.toLowerCase();
  const rule: Rule = {
    id: 'new',
    scope: args.scope,
    scopeRef,
    kind: args.category ? 'deterministic' : args['expects-reply'] ? 'follow_up' : 'instruction',
    conditions: {
      ...(args.from ? { from: args.from } : {}),
      ...(args.to ? { to: args.to } : {}),
      ...(args.subject ? { subject: args.subject } : {}),
      ...(args.body ? { body: args.body } : {}),
      ...(args.header ? { header: args.header.map(splitHeader).map(({ name, value }) => ({ name, ...(value ? { pattern: value } : {}) })) } : {}),
    },
    category: args.category,
    instruction: args.instruction,
    ...(args['expects-reply'] ? { expectsReply: args['expects-reply'] === 'yes' } : {}),
    ...(args['follow-up-days'] ? { followUpDays: args['follow-up-days'] } : {}),
    priority: args.priority ?? 0,
    enabled: true,
    ...(values.actions !== undefined ? { actions: actionsArgument(values.actions, args.category) } : {}),
    ...(values.route !== undefined ? { route: await routeArgument(prisma, values.route, args.category) } : {}),
  };
  try {
    validateRule(rule);
  } catch (err) {
    if (err instanceof InvalidRuleError) throw new UsageError(err.message.replace('rule "new": ', ''));
    throw err;
  }
  return rule;
}

export async function addRule(prisma: PrismaClient, values: Values): Promise<Rule> {
  const rule = await ruleFromArgs(prisma, values);
  const row = await prisma.rule.create({
    data: {
      scope: rule.scope,
      scopeRef: rule.scopeRef ?? null,
      kind: rule.kind,
      conditions: rule.conditions as object,
      // Instruction and follow-up rules assign no category; the column names what the rule does.
      action: ruleAction(rule),
      instruction: rule.instruction ?? null,
      priority: rule.priority,
      ...(rule.actions ? { actions: rule.actions as object[] } : {}),
      ...(rule.route ? { route: rule.route } : {}),
      ...(rule.followUpDays ? { followUpDays: rule.followUpDays } : {}),
    },
  });
  return ruleFromRow(row);
}

async function changeRule(prisma: PrismaClient, io: RulesCliIo, sub: 'enable' | 'disable' | 'remove', id: string | undefined): Promise<void> {
  if (!id) throw new UsageError(`${sub} needs a rule id (see npm run cli -- rules list)`);
  if (id.startsWith('builtin:')) {
    throw new UsageError(`${id} is built in: override it with a rule of your own (any user rule in its scope wins)`);
  }
  const where = { id };
  const exists = await prisma.rule.findUnique({ where }).catch(() => null);
  if (!exists) throw new UsageError(`no rule ${id} (see npm run cli -- rules list)`);
  if (sub === 'remove') await prisma.rule.delete({ where });
  else await prisma.rule.update({ where, data: { enabled: sub === 'enable' } });
  io.out(`${sub === 'remove' ? 'Removed' : sub === 'enable' ? 'Enabled' : 'Disabled'} rule ${id}; it takes effect with the next email.`);
}

/** The account whose past mail a dry run or `test --since` reads: --account, else an account rule's own. */
async function pastMailAccount(prisma: PrismaClient, values: Values, what: string): Promise<{ id: string; email: string }> {
  if (values.account) return requireAccount(prisma, values.account);
  if (values.scope === 'account' && values.ref) return requireAccount(prisma, values.ref);
  throw new UsageError(`${what} needs --account (whose past mail to try it on)`);
}

async function dryRunAdd(prisma: PrismaClient, io: RulesCliIo, cfg: Env, values: Values): Promise<void> {
  const rule = { ...(await ruleFromArgs(prisma, values)), id: 'dry-run' };
  if (rule.kind === 'follow_up') throw new UsageError('--dry-run replays classification; an --expects-reply rule decides nothing there');
  const owner = await pastMailAccount(prisma, values, '--dry-run');
  const windowMs = learningSettingsFromConfig(cfg).dryRunWindowMs;
  const result = await dryRunRuleChange(prismaExecutor(prisma), { accountId: owner.id, change: { add: rule }, since: new Date(Date.now() - windowMs) });
  io.out(`dry run of ${rule.scope}${rule.scopeRef ? ` ${rule.scopeRef}` : ''}, ${rule.category ? `category ${rule.category}` : 'instruction'} when ${describeConditions(rule)}, on ${owner.email}:`);
  for (const line of dryRunLines(result, wholeDays(windowMs))) io.out(line);
  if (rule.kind === 'instruction') io.out('an instruction rule decides nothing: it guides the LLM, whose answers a dry run does not replay');
  io.out('nothing added (run it again without --dry-run to add it)');
}

async function replaySince(prisma: PrismaClient, io: RulesCliIo, values: Values): Promise<void> {
  const owner = await pastMailAccount(prisma, values, 'test --since');
  const since = sinceDate(values.since!);
  const replay = await replayRules(prismaExecutor(prisma), { accountId: owner.id, since });
  io.out(`the rules in force over the ${replay.threads} thread(s) of ${owner.email} since ${replay.since}` + (replay.fromJournal ? ` (${replay.fromJournal} by sender and subject only: no stored message)` : '') + ':');
  const counts = Object.entries(replay.decidedBy).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  printTable(io.out, ['DECIDED BY', 'THREADS'], counts.map(([by, n]) => [by === 'llm' ? 'no rule: the LLM' : `rule ${by}`, String(n)]));
  io.out(`${replay.differ} thread(s) the rules now put in another category than the one recorded`);
  for (const ex of replay.examples) {
    io.out(`  ${ex.threadId}  ${ex.sender}  ${JSON.stringify(ex.subject)}: was ${ex.recorded ?? 'unclassified'}, now ${describeOutcome(ex.now)}`);
  }
}

/** The follow-up rules' word on a message the user would send (`test --sent`). */
async function testSent(prisma: PrismaClient, io: RulesCliIo, values: Values): Promise<void> {
  if (!values.to) throw new UsageError('test --sent needs --to (the recipients of the message you would send)');
  const owner = values.account ? await requireAccount(prisma, values.account) : undefined;
  const me = owner?.email ?? '';
  const sent = { from: me, sender: me, headers: { from: me }, to: values.to, subject: values.subject ?? '', body: values.body ?? '', date: new Date().toUTCString() };
  const rows = await prisma.rule.findMany({ where: { enabled: true, kind: 'follow_up', ...(owner ? {} : { scope: { not: 'account' } }) } });
  const verdict = evaluateFollowUpRules(rows.map(ruleFromRow), sent, owner?.id ?? '');
  if (!verdict.decided) return io.out('no follow-up rule decides: the LLM judges whether it expects an answer');
  const days = verdict.businessDays ? `, follow up after ${verdict.businessDays} business day(s)` : '';
  io.out(`decided by rule ${verdict.ruleId}: ${verdict.expectsReply ? `expects an answer${days}` : 'expects no answer: no follow-up'} (${verdict.reason}); no LLM call`);
}

async function testRules(prisma: PrismaClient, io: RulesCliIo, values: Values): Promise<void> {
  if (values.since !== undefined) return replaySince(prisma, io, values);
  if (values.sent) return testSent(prisma, io, values);
  if (!values.from) throw new UsageError('test needs --from (the sender of the email to try)');
  const owner = values.account ? await requireAccount(prisma, values.account) : undefined;
  const accountId = owner?.id ?? '';
  const headers: Record<string, string> = {};
  for (const spec of values.header ?? []) {
    const { name, value } = splitHeader(spec);
    headers[name] = value ?? '';
  }
  const email = {
    from: values.from,
    // Read as the workflow reads a From header: the address only.
    sender: senderAddress(values.from),
    headers: { from: values.from, ...headers },
    to: values.to ?? owner?.email ?? '',
    subject: values.subject ?? '',
    body: values.body ?? '',
    date: new Date().toUTCString(),
  };
  // Without --account, no account's own rules apply.
  const rows = await prisma.rule.findMany({ where: { enabled: true, ...(owner ? {} : { scope: { not: 'account' } }) } });
  const rules = [...BUILTIN_RULES, ...rows.map(ruleFromRow)];
  const verdict = evaluateRules(rules, email, accountId);
  io.out(
    verdict.decided
      ? `decided by rule ${verdict.ruleId}: ${verdict.category} (${verdict.reason}); no LLM call`
      : 'no rule decides: the LLM classifies it',
  );
  const instructions = applicableInstructions(rules, email, accountId);
  io.out(instructions.length ? `instructions for the LLM:\n${instructions.map((i) => `  - ${i}`).join('\n')}` : 'no instructions apply');
}

/** Entry for src/cli/main.ts. Returns the exit code. */
export async function runRulesCli(cfg: Env, argv: string[], io: RulesCliIo = { out: (l) => console.log(l) }): Promise<number> {
  const parsed = parseSubcommand(io, { name: 'rules', usage: USAGE, subcommands: ['list', 'add', 'enable', 'disable', 'remove', 'test'], options: OPTIONS }, argv);
  if (typeof parsed === 'number') return parsed;
  const { sub } = parsed;
  return withDatabase(cfg, io, { name: 'rules', usage: USAGE }, async (prisma) => {
    switch (sub) {
      case 'list':
        return listRules(prisma, io, parsed.values.account);
      case 'add': {
        if (parsed.values['dry-run']) return dryRunAdd(prisma, io, cfg, parsed.values);
        const rule = await addRule(prisma, parsed.values);
        io.out(`Added rule ${rule.id}: ${rule.scope}${rule.scopeRef ? ` ${rule.scopeRef}` : ''}, ${describeDoes(rule)} when ${describeConditions(rule)}`);
        return;
      }
      case 'test':
        return testRules(prisma, io, parsed.values);
      default:
        return changeRule(prisma, io, sub as 'enable' | 'disable' | 'remove', parsed.positionals[0]);
    }
  });
}
