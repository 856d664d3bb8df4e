// Tier one of classification: what the user's rules (Postgres: global, account, domain and sender
// scopes, after the built-in header rules) say about one email, with the category's actions and a
// routing rule's agent profile. Read with the thread (readThread), so it costs no step of its own.
// Then the cold-email gate (withColdEmailGate), and mail from a sender the user unsubscribed from
// (withUnsubscribeWatch). And the follow-up rules' word on a message the user sent (followUpRulesVerdict).
import { lastUnsubscribed, loadCategoryActions } from '../actions/journal.js';
import { loadAgentProfile } from '../agent/profiles.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { precheckRules } from '../rules/pattern-safety.js';
import { ruleFromRow, type RuleRow } from '../rules/rule-rows.js';
import { applicableInstructions, BUILTIN_RULES, evaluateFollowUpRules, evaluateRules, InvalidRuleError, validateRule } from '../rules/rules.js';
import type { FollowUpRulesVerdict, RulesVerdict } from './activity-contracts.js';
import type { Rule, RuleEmail } from '../rules/contracts.js';
import { allowedBy } from '../rules/cold-email-allowlist.js';
import { coldEmailGate, coldEmailSignals, firstContactInstruction } from '../rules/cold-email.js';
import { COLD_EMAIL_RULE_ID, STILL_SENDING_RULE_ID } from '../rules/contracts.js';

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

/**
 * The cold-email gate on top of the rules' verdict (docs/cleanup.md): a rule of the user's decides
 * alone; otherwise first-contact outreach is decided here (before the built-in header rules), or
 * the LLM gets a first-contact hint, or the verdict says the sender is never gated. `earlierThread`
 * reads the mailbox; it is asked only for a sender not allowlisted, and only when a signal was found.
 */
export async function withColdEmailGate(
  db: SqlExecutor,
  accountId: string,
  email: RuleEmail,
  verdict: RulesVerdict,
  earlierThread: () => Promise<boolean>,
): Promise<RulesVerdict> {
  if (email.sender === '') return verdict; // no single sender: nobody to have had contact with
  if (verdict.decided && (!verdict.ruleId.startsWith('builtin:') || verdict.route)) return verdict;
  const signals = coldEmailSignals(email);
  if (verdict.decided && signals.wording.length === 0) return verdict; // a built-in header rule, no pitch in sight
  const allowed = await allowedBy(db, accountId, email.sender);
  // Without a signal the gate cannot speak for itself: the mailbox is not searched (no quota spent on
  // every mail the model classifies), and only the allowlist keeps a model's cold_outreach from holding.
  const silent = signals.wording.length + signals.bulkHeaders.length === 0;
  const gate = coldEmailGate(signals, { ...(allowed ? { allowedBy: allowed } : {}), earlierThread: !allowed && !silent && (await earlierThread()) });
  switch (gate.gate) {
    case 'none':
      return verdict;
    case 'exempt':
      return { ...verdict, coldEmail: gate };
    case 'ask':
      if (verdict.decided) return verdict; // one signal does not overrule a built-in header rule
      return { ...verdict, instructions: [...verdict.instructions, firstContactInstruction(gate.reason)], coldEmail: gate };
    case 'cold': {
      const { categoryActions, skipped, instructions } = verdict;
      return {
        decided: true,
        category: 'cold_outreach',
        ruleId: COLD_EMAIL_RULE_ID,
        reason: gate.reason,
        instructions,
        categoryActions,
        ...(skipped ? { skipped } : {}),
        coldEmail: gate,
      };
    }
  }
}

/**
 * Gmail's and Yahoo's bulk-sender rules give a sender 2 days to honour an unsubscribe
 * (support.google.com/a/answer/81126); mail after that is the sender ignoring it.
 */
export const UNSUBSCRIBE_GRACE_MS = 2 * 24 * 3600_000;
/** The label such mail gets (the user sees who ignores an unsubscribe, and can report or block them). */
export const UNSUBSCRIBE_IGNORED_LABEL = 'Unsubscribe Ignored';

/**
 * Mail from a sender whose unsubscribe the product carried out (journaled done) more than the grace
 * before it arrived is labelled Unsubscribe Ignored, with the date in the decision log. A rule of the
 * user's decides alone. `receivedAt` is the server's time of arrival (not the sender's Date header).
 */
export async function withUnsubscribeWatch(db: SqlExecutor, accountId: string, email: RuleEmail, receivedAt: number, verdict: RulesVerdict): Promise<RulesVerdict> {
  if (email.sender === '') return verdict;
  if (verdict.decided && !verdict.ruleId.startsWith('builtin:')) return verdict;
  const unsubscribedAt = await lastUnsubscribed(db, accountId, email.sender);
  if (!unsubscribedAt || receivedAt - unsubscribedAt.getTime() < UNSUBSCRIBE_GRACE_MS) return verdict;
  const days = Math.floor((receivedAt - unsubscribedAt.getTime()) / (24 * 3600_000));
  const { categoryActions, skipped, instructions } = verdict;
  return {
    decided: true,
    category: 'newsletter',
    ruleId: STILL_SENDING_RULE_ID,
    reason: `${email.sender} still sends ${days} day(s) after you unsubscribed (${unsubscribedAt.toISOString().slice(0, 10)})`,
    instructions,
    actions: [{ kind: 'add_label', argument: UNSUBSCRIBE_IGNORED_LABEL }],
    categoryActions,
    ...(skipped ? { skipped } : {}),
  };
}

/** Which of these threads of the account were classified cold outreach (their workflows' rows). */
export async function coldOutreachThreads(db: SqlExecutor, accountId: string, threadIds: string[]): Promise<Set<string>> {
  const rows = await db.query<{ id: string }>(
    `SELECT gmail_thread_id AS id FROM threads WHERE account_id = $1 AND gmail_thread_id = ANY($2::text[]) AND category = 'cold_outreach'`,
    [accountId, threadIds],
  );
  return new Set(rows.map((r) => r.id));
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
