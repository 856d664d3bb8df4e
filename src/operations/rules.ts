// The operator's rules, shared by the surfaces that act for the user (the CLI's `rules` commands, the
// MCP server's tools): a rule from its flags, checked and added; enabled, disabled or removed; tried
// on an email (which rule decides it, which instructions its prompt carries) or, as a dry run, on an
// account's recent mail. Flags by their CLI names (--scope, --category, ...); `out` gets each line.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { learningSettingsFromConfig, wholeDays } from '../config/settings.js';
import type { Env } from '../config/env.js';
import { prismaExecutor } from '../db/sql-executor.js';
import { dryRunRuleChange } from '../learning/dry-run.js';
import { dryRunLines } from '../learning/describe.js';
import type { PrismaClient } from '../db/client.js';
import { ruleAction, ruleFromRow } from '../rules/rule-rows.js';
import { applicableInstructions, BUILTIN_RULES, evaluateFollowUpRules, evaluateRules, InvalidRuleError, MAX_FOLLOW_UP_DAYS, validateRule } from '../rules/rules.js';
import { CATEGORIES } from '../mail/types.js';
import { canonicalAddress, senderAddress } from '../gmail/addresses.js';
import { formatActionList, InvalidActionSpecError, parseActionList } from '../actions/action-specs.js';
import type { ActionSpec } from '../actions/contracts.js';
import type { Rule } from '../rules/contracts.js';
import { requireAccount } from './account-ref.js';
import { InvalidRequest } from './errors.js';

type Out = (line: string) => void;

/** The flags of `rules add` and `rules test`, as the CLI parses them. */
export const RULE_FLAGS = {
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

export type RuleFlags = ReturnType<typeof parseArgs<{ options: typeof RULE_FLAGS; allowPositionals: true }>>['values'];

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
  throw new InvalidRequest(`--${issue.path.join('.') || 'arguments'}: ${issue.message}`);
}

/** NAME or NAME=PATTERN (NAME=VALUE for `test`). */
function splitHeader(spec: string): { name: string; value?: string } {
  const eq = spec.indexOf('=');
  const name = (eq < 0 ? spec : spec.slice(0, eq)).trim();
  if (!/^[!-9;-~]+$/.test(name)) throw new InvalidRequest(`--header ${spec}: expected NAME or NAME=PATTERN`);
  return eq < 0 ? { name } : { name, value: spec.slice(eq + 1) };
}


/** What a rule does, in one line. */
export function describeDoes(r: Rule): string {
  if (r.kind === 'follow_up') {
    if (!r.expectsReply) return 'sent mail expects no reply';
    return `sent mail expects a reply${r.followUpDays ? `, follow up after ${r.followUpDays} business day(s)` : ''}`;
  }
  if (r.kind === 'instruction') return `instruction: ${JSON.stringify(r.instruction ?? '')}`;
  return `category ${r.category ?? '?'}${r.route ? `, agent ${r.route}` : ''}${r.actions ? `, then ${formatActionList(r.actions)}` : ''}`;
}

export function describeConditions(rule: Rule): string {
  const c = rule.conditions ?? {};
  const parts = (['from', 'to', 'subject', 'body'] as const).flatMap((f) => (c[f] ? [`${f}~${c[f]}`] : []));
  for (const h of c.header ?? []) parts.push(h.pattern === undefined ? `header ${h.name}` : `header ${h.name}~${h.pattern}`);
  return parts.length ? parts.join(' ') : '(all mail in scope)';
}

function actionsArgument(text: string, category: string | undefined): ActionSpec[] {
  if (!category) throw new InvalidRequest('--actions goes with --category (an instruction rule decides nothing)');
  try {
    return parseActionList(text);
  } catch (err) {
    if (err instanceof InvalidActionSpecError) throw new InvalidRequest(`--actions: ${err.message}`);
    throw err;
  }
}

async function routeArgument(prisma: PrismaClient, name: string, category: string | undefined): Promise<string> {
  if (!category) throw new InvalidRequest('--route goes with --category (an instruction rule decides nothing)');
  if (!(await prisma.agentProfile.findUnique({ where: { name } }))) throw new InvalidRequest(`--route: no agent profile ${name} (see npm run cli -- agents list)`);
  return name;
}

/** The rule `rules add` describes, checked; nothing is stored. */
export async function ruleFromArgs(prisma: PrismaClient, values: RuleFlags): Promise<Rule> {
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
    if (err instanceof InvalidRuleError) throw new InvalidRequest(err.message.replace('rule "new": ', ''));
    throw err;
  }
  return rule;
}

export async function addRule(prisma: PrismaClient, values: RuleFlags): Promise<Rule> {
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

export async function changeRule(prisma: PrismaClient, out: Out, sub: 'enable' | 'disable' | 'remove', id: string | undefined): Promise<void> {
  if (!id) throw new InvalidRequest(`${sub} needs a rule id (see npm run cli -- rules list)`);
  if (id.startsWith('builtin:')) {
    throw new InvalidRequest(`${id} is built in: override it with a rule of your own (any user rule in its scope wins)`);
  }
  const where = { id };
  const exists = await prisma.rule.findUnique({ where }).catch(() => null);
  if (!exists) throw new InvalidRequest(`no rule ${id} (see npm run cli -- rules list)`);
  if (sub === 'remove') await prisma.rule.delete({ where });
  else await prisma.rule.update({ where, data: { enabled: sub === 'enable' } });
  out(`${sub === 'remove' ? 'Removed' : sub === 'enable' ? 'Enabled' : 'Disabled'} rule ${id}; it takes effect with the next email.`);
}

/** The account whose past mail a dry run or `test --since` reads: --account, else an account rule's own. */
export async function pastMailAccount(prisma: PrismaClient, values: RuleFlags, what: string): Promise<{ id: string; email: string }> {
  if (values.account) return requireAccount(prisma, values.account);
  if (values.scope === 'account' && values.ref) return requireAccount(prisma, values.ref);
  throw new InvalidRequest(`${what} needs --account (whose past mail to try it on)`);
}

export async function dryRunAdd(prisma: PrismaClient, out: Out, cfg: Env, values: RuleFlags): Promise<void> {
  const rule = { ...(await ruleFromArgs(prisma, values)), id: 'dry-run' };
  if (rule.kind === 'follow_up') throw new InvalidRequest('--dry-run replays classification; an --expects-reply rule decides nothing there');
  const owner = await pastMailAccount(prisma, values, '--dry-run');
  const windowMs = learningSettingsFromConfig(cfg).dryRunWindowMs;
  const result = await dryRunRuleChange(prismaExecutor(prisma), { accountId: owner.id, change: { add: rule }, since: new Date(Date.now() - windowMs) });
  out(`dry run of ${rule.scope}${rule.scopeRef ? ` ${rule.scopeRef}` : ''}, ${rule.category ? `category ${rule.category}` : 'instruction'} when ${describeConditions(rule)}, on ${owner.email}:`);
  for (const line of dryRunLines(result, wholeDays(windowMs))) out(line);
  if (rule.kind === 'instruction') out('an instruction rule decides nothing: it guides the LLM, whose answers a dry run does not replay');
  out('nothing added (run it again without --dry-run to add it)');
}

/** The follow-up rules' word on a message the user would send (`test --sent`). */
async function testSent(prisma: PrismaClient, out: Out, values: RuleFlags): Promise<void> {
  if (!values.to) throw new InvalidRequest('test --sent needs --to (the recipients of the message you would send)');
  const owner = values.account ? await requireAccount(prisma, values.account) : undefined;
  const me = owner?.email ?? '';
  const sent = { from: me, sender: me, headers: { from: me }, to: values.to, subject: values.subject ?? '', body: values.body ?? '', date: new Date().toUTCString() };
  const rows = await prisma.rule.findMany({ where: { enabled: true, kind: 'follow_up', ...(owner ? {} : { scope: { not: 'account' } }) } });
  const verdict = evaluateFollowUpRules(rows.map(ruleFromRow), sent, owner?.id ?? '');
  if (!verdict.decided) return out('no follow-up rule decides: the LLM judges whether it expects an answer');
  const days = verdict.businessDays ? `, follow up after ${verdict.businessDays} business day(s)` : '';
  out(`decided by rule ${verdict.ruleId}: ${verdict.expectsReply ? `expects an answer${days}` : 'expects no answer: no follow-up'} (${verdict.reason}); no LLM call`);
}

/** Which rule would decide an email (or, with --sent, whether a message sent would expect an answer), and the instructions the LLM would get. */
export async function testRules(prisma: PrismaClient, out: Out, values: RuleFlags): Promise<void> {
  if (values.sent) return testSent(prisma, out, values);
  if (!values.from) throw new InvalidRequest('test needs --from (the sender of the email to try)');
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
  out(
    verdict.decided
      ? `decided by rule ${verdict.ruleId}: ${verdict.category} (${verdict.reason}); no LLM call`
      : 'no rule decides: the LLM classifies it',
  );
  const instructions = applicableInstructions(rules, email, accountId);
  out(instructions.length ? `instructions for the LLM:\n${instructions.map((i) => `  - ${i}`).join('\n')}` : 'no instructions apply');
}

