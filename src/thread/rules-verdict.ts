// Tier one of classification: what the user's rules (Postgres: global, account, domain and sender
// scopes, after the built-in header rules) say about one email, with the category's actions and a
// routing rule's agent profile. Read with the thread (readThread), so it costs no step of its own.
// And the follow-up rules' word on a message the user sent (followUpRulesVerdict).
import { loadCategoryActions } from '../actions/journal.js';
import { loadAgentProfile } from '../agent/profiles.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { precheckRules } from '../rules/pattern-safety.js';
import { ruleFromRow, type RuleRow } from '../rules/rule-rows.js';
import { applicableInstructions, BUILTIN_RULES, evaluateFollowUpRules, evaluateRules, InvalidRuleError, validateRule } from '../rules/rules.js';
import type { FollowUpRulesVerdict, RulesVerdict } from './activity-contracts.js';
import type { Rule, RuleEmail } from '../rules/contracts.js';

const ENABLED_RULES_SQL = `
SELECT id, scope::text AS scope, scope_ref AS "scopeRef", kind::text AS kind, conditions, action, instruction, priority, enabled, actions, route,
       follow_up_days AS "followUpDays"
FROM rules
WHERE enabled AND (scope <> 'account' OR scope_ref = $1)`;

/** The built-ins and the account's enabled rules, their regexes' backtracking checked (off the event loop, once per pattern). */
async function loadRules(db: SqlExecutor, accountId: string): Promise<Rule[]> {
  // Which domain and sender rules apply is decided by the domain module (subdomains, `@domain`,
  // case); here only other accounts' rules are left out.
  const rows = await db.query<RuleRow & Record<string, unknown>>(ENABLED_RULES_SQL, [accountId]);
  const rules = [...BUILTIN_RULES, ...rows.map(ruleFromRow)];
  await precheckRules(rules);
  return rules;
}

export async function rulesVerdict(db: SqlExecutor, accountId: string, email: RuleEmail): Promise<RulesVerdict> {
  const [rules, categoryActions] = await Promise.all([loadRules(db, accountId), loadCategoryActions(db, accountId)]);
  try {
    return await withRoute(db, verdictOf(rules, email, accountId, categoryActions));
  } catch (err) {
    if (!(err instanceof InvalidRuleError)) throw err;
    // A broken rule (edited by hand in SQL, say) must not hold up the mail: it is left out, and
    // the workflow records why in the thread's decision log.
    const { usable, skipped } = partitionValid(rules);
    return { ...(await withRoute(db, verdictOf(usable, email, accountId, categoryActions))), skipped };
  }
}

/**
 * Whether a message the user sent expects an answer, as the follow-up rules say (undecided: the LLM
 * is asked). A broken rule is left out, with the reason, as for classification.
 */
export async function followUpRulesVerdict(db: SqlExecutor, accountId: string, sent: RuleEmail): Promise<FollowUpRulesVerdict> {
  const rules = await loadRules(db, accountId);
  try {
    return evaluateFollowUpRules(rules, sent, accountId);
  } catch (err) {
    if (!(err instanceof InvalidRuleError)) throw err;
    const { usable, skipped } = partitionValid(rules);
    return { ...evaluateFollowUpRules(usable, sent, accountId), skipped };
  }
}

/** Whether the verdict leaves a reply to write: no rule decided (the LLM may draft), or the rule's actions draft or auto-reply. */
export function mayNeedReply(verdict: RulesVerdict): boolean {
  if (!verdict.decided) return true;
  if (verdict.route) return false; // the agent gathers what it needs with its tools
  const actions = verdict.actions ?? verdict.categoryActions[verdict.category] ?? [];
  return actions.some((a) => a.kind === 'draft' || a.kind === 'auto_reply');
}

function verdictOf(
  rules: Rule[],
  email: RuleEmail,
  accountId: string,
  categoryActions: RulesVerdict['categoryActions'],
): RulesVerdict & { routeTo?: string } {
  const instructions = applicableInstructions(rules, email, accountId);
  const verdict = evaluateRules(rules, email, accountId);
  if (!verdict.decided) return { decided: false, instructions, categoryActions };
  const rule = rules.find((r) => r.id === verdict.ruleId);
  return {
    decided: true,
    category: verdict.category,
    ruleId: verdict.ruleId,
    reason: verdict.reason,
    instructions,
    categoryActions,
    ...(rule?.actions ? { actions: rule.actions } : {}),
    ...(rule?.route ? { routeTo: rule.route } : {}),
  };
}

function partitionValid(rules: Rule[]): { usable: Rule[]; skipped: string[] } {
  const usable: Rule[] = [];
  const skipped: string[] = [];
  for (const rule of rules) {
    try {
      validateRule(rule);
      usable.push(rule);
    } catch (err) {
      if (!(err instanceof InvalidRuleError)) throw err;
      skipped.push(err.message);
    }
  }
  return { usable, skipped };
}

/** A routing rule's agent profile, loaded; a route to a profile that does not exist is left out, with why. */
async function withRoute(db: SqlExecutor, verdict: RulesVerdict & { routeTo?: string }): Promise<RulesVerdict> {
  const { routeTo, ...rest } = verdict;
  if (!routeTo || !rest.decided) return rest;
  const profile = await loadAgentProfile(db, routeTo);
  if (profile) return { ...rest, route: profile };
  return { ...rest, skipped: [...(rest.skipped ?? []), `rule ${rest.ruleId} routes to agent profile "${routeTo}", which does not exist: classified without it`] };
}
