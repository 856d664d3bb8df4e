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
import type { Env } from '../config/env.js';
import { prismaExecutor } from '../db/sql-executor.js';
import { describeOutcome, replayRules } from '../learning/dry-run.js';
import type { PrismaClient } from '../db/client.js';
import { ruleFromRow } from '../rules/rule-rows.js';
import { BUILTIN_RULES } from '../rules/rules.js';
import { CATEGORIES } from '../mail/types.js';
import { requireAccount } from '../operations/account-ref.js';
import { addRule, changeRule, describeConditions, describeDoes, dryRunAdd, pastMailAccount, RULE_FLAGS, testRules, type RuleFlags } from '../operations/rules.js';
import { parseSubcommand, sinceDate, withDatabase, type CliIo } from './command.js';
import { printTable } from './table.js';

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

async function replaySince(prisma: PrismaClient, io: RulesCliIo, values: RuleFlags): Promise<void> {
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

/** Entry for src/cli/main.ts. Returns the exit code. */
export async function runRulesCli(cfg: Env, argv: string[], io: RulesCliIo = { out: (l) => console.log(l) }): Promise<number> {
  const parsed = parseSubcommand(io, { name: 'rules', usage: USAGE, subcommands: ['list', 'add', 'enable', 'disable', 'remove', 'test'], options: RULE_FLAGS }, argv);
  if (typeof parsed === 'number') return parsed;
  const { sub } = parsed;
  return withDatabase(cfg, io, { name: 'rules', usage: USAGE }, async (prisma) => {
    switch (sub) {
      case 'list':
        return listRules(prisma, io, parsed.values.account);
      case 'add': {
        if (parsed.values['dry-run']) return dryRunAdd(prisma, io.out, cfg, parsed.values);
        const rule = await addRule(prisma, parsed.values);
        io.out(`Added rule ${rule.id}: ${rule.scope}${rule.scopeRef ? ` ${rule.scopeRef}` : ''}, ${describeDoes(rule)} when ${describeConditions(rule)}`);
        return;
      }
      case 'test':
        return parsed.values.since !== undefined ? replaySince(prisma, io, parsed.values) : testRules(prisma, io.out, parsed.values);
      default:
        return changeRule(prisma, io.out, sub as 'enable' | 'disable' | 'remove', parsed.positionals[0]);
    }
  });
}
