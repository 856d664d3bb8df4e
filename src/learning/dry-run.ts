// The dry run: a rule change tried on the user's own past mail before it takes hold. Over the
// account's threads stored in the last window (30 days by default), the latest inbound message as
// the backfill stored it (else the sender and subject the action journal holds) goes through the
// same rules engine the thread workflow uses, with and without the change; a thread counts as
// changed when its category or what the assistant would do with it differs. Reads only.
import { loadCategoryActions } from '../actions/journal.js';
import type { ActionSpec } from '../actions/contracts.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { senderAddress } from '../gmail/addresses.js';
import { type Category, isCategory } from '../mail/types.js';
import { ruleFromRow, type RuleRow } from '../rules/rule-rows.js';
import { BUILTIN_RULES, evaluateRules, InvalidRuleError, validateRule } from '../rules/rules.js';
import { formatActionList } from '../actions/action-specs.js';
import type { Rule, RuleEmail } from '../rules/contracts.js';

export interface StoredThread {
  threadId: string;
  /** The category the thread was given (by a rule, the LLM or the user); null if never classified. */
  recorded: Category | null;
  updatedAt: Date;
  email: RuleEmail;
  /** messages: the backfill's stored message; journal: only the sender and subject the action journal holds. */
  from: 'messages' | 'journal';
}

export interface Outcome {
  category: Category | null;
  actions: ActionSpec[];
  /** The rule that decides, or null when the LLM does (then the recorded category stands). */
  ruleId: string | null;
}

export interface ThreadDifference {
  threadId: string;
  sender: string;
  subject: string;
  before: Outcome;
  after: Outcome;
}

export interface DryRunResult {
  since: string;
  /** Threads of the window. */
  threads: number;
  /** Of those, how many had no stored message: judged by sender and subject alone. */
  fromJournal: number;
  /** Threads the change would have categorised differently. */
  recategorised: number;
  /** Threads it would have acted on differently (same category, other actions). */
  actedOnDifferently: number;
  /** The first differences, newest thread first. */
  examples: ThreadDifference[];
}

const STORED_THREADS_SQL = `
SELECT t.gmail_thread_id AS thread_id, t.category, t.updated_at, m.headers, m.body_text, a.sender AS a_sender, a.subject AS a_subject
FROM threads t
LEFT JOIN LATERAL (
  SELECT headers, body_text FROM messages
  WHERE account_id = t.account_id AND gmail_thread_id = t.gmail_thread_id
    AND NOT ('SENT' = ANY(label_ids)) AND NOT ('DRAFT' = ANY(label_ids))
  ORDER BY internal_date DESC LIMIT 1) m ON true
LEFT JOIN LATERAL (
  SELECT sender, subject FROM actions
  WHERE account_id = t.account_id AND gmail_thread_id = t.gmail_thread_id AND sender <> ''
  ORDER BY created_at DESC LIMIT 1) a ON true
WHERE t.account_id = $1 AND t.updated_at >= $2
ORDER BY t.updated_at DESC, t.gmail_thread_id
LIMIT $3`;

/** The account's threads of the window with what the rules read of each; threads with nothing to read are left out. */
export async function storedThreads(db: SqlExecutor, accountId: string, since: Date, limit = 5000): Promise<StoredThread[]> {
  const rows = await db.query<{
    thread_id: string;
    category: string | null;
    updated_at: Date;
    headers: Record<string, string> | null;
    body_text: string | null;
    a_sender: string | null;
    a_subject: string | null;
  }>(STORED_THREADS_SQL, [accountId, since, limit]);
  const out: StoredThread[] = [];
  for (const r of rows) {
    const base = { threadId: r.thread_id, recorded: isCategory(r.category) ? r.category : null, updatedAt: r.updated_at };
    if (r.headers) {
      const h = r.headers;
      out.push({
        ...base,
        from: 'messages',
        email: { from: h.from ?? '', sender: senderAddress(h.from), to: h.to ?? '', subject: h.subject ?? '', date: h.date ?? '', body: r.body_text ?? '', headers: h },
      });
    } else if (r.a_sender) {
      out.push({
        ...base,
        from: 'journal',
        email: { from: r.a_sender, sender: r.a_sender, to: '', subject: r.a_subject ?? '', date: '', body: '', headers: { from: r.a_sender } },
      });
    }
  }
  return out;
}

const RULES_SQL = `
SELECT id, scope::text AS scope, scope_ref AS "scopeRef", kind::text AS kind, conditions, action, instruction, priority, enabled, actions, route
FROM rules WHERE enabled AND (scope <> 'account' OR scope_ref = $1)`;

/** The rules the workflow would read for the account now (the built-ins and the enabled ones), valid ones only. */
export async function rulesInForce(db: SqlExecutor, accountId: string): Promise<Rule[]> {
  const rows = await db.query<RuleRow & Record<string, unknown>>(RULES_SQL, [accountId]);
  return [...BUILTIN_RULES, ...rows.map(ruleFromRow)].filter((rule) => {
    try {
      validateRule(rule);
      return true;
    } catch (err) {
      if (err instanceof InvalidRuleError) return false; // the workflow leaves it out too
      throw err;
    }
  });
}

/** What the rules make of one stored thread: the deciding rule's category and actions, else the recorded category's. */
export function outcomeOf(rules: readonly Rule[], thread: StoredThread, accountId: string, categoryActions: Record<Category, ActionSpec[]>): Outcome {
  const verdict = evaluateRules(rules, thread.email, accountId);
  if (!verdict.decided) {
    return { category: thread.recorded, actions: thread.recorded ? categoryActions[thread.recorded] : [], ruleId: null };
  }
  const rule = rules.find((r) => r.id === verdict.ruleId);
  return { category: verdict.category, actions: rule?.actions ?? categoryActions[verdict.category], ruleId: verdict.ruleId };
}

const actionsText = (actions: ActionSpec[]) => formatActionList(actions);
const sameActions = (a: ActionSpec[], b: ActionSpec[]) => actionsText([...a].sort(byKind)) === actionsText([...b].sort(byKind));
const byKind = (x: ActionSpec, y: ActionSpec) => `${x.kind}:${x.argument ?? ''}`.localeCompare(`${y.kind}:${y.argument ?? ''}`);

export interface RuleChange {
  /** The rule to add (its id should be new, e.g. "dry-run"). */
  add?: Rule;
  /** Rules the change takes away (a lesson it supersedes). */
  remove?: string[];
}

/**
 * Which of the account's stored threads since `since` the change would have categorised or acted on
 * differently than the rules in force do, with the first `exampleCount` differences.
 */
export async function dryRunRuleChange(
  db: SqlExecutor,
  input: { accountId: string; change: RuleChange; since: Date; exampleCount?: number },
): Promise<DryRunResult> {
  if (input.change.add) validateRule(input.change.add);
  const [current, categoryActions, threads] = await Promise.all([
    rulesInForce(db, input.accountId),
    loadCategoryActions(db, input.accountId),
    storedThreads(db, input.accountId, input.since),
  ]);
  const removed = new Set(input.change.remove ?? []);
  const changed = [...current.filter((r) => !removed.has(r.id)), ...(input.change.add ? [input.change.add] : [])];
  const result: DryRunResult = { since: input.since.toISOString(), threads: threads.length, fromJournal: 0, recategorised: 0, actedOnDifferently: 0, examples: [] };
  for (const thread of threads) {
    if (thread.from === 'journal') result.fromJournal += 1;
    const before = outcomeOf(current, thread, input.accountId, categoryActions);
    const after = outcomeOf(changed, thread, input.accountId, categoryActions);
    const recategorised = before.category !== after.category;
    if (!recategorised && sameActions(before.actions, after.actions)) continue;
    if (recategorised) result.recategorised += 1;
    else result.actedOnDifferently += 1;
    if (result.examples.length < (input.exampleCount ?? 5)) {
      result.examples.push({ threadId: thread.threadId, sender: thread.email.sender, subject: thread.email.subject, before, after });
    }
  }
  return result;
}

/** One line per outcome, for the CLI and the page: "newsletter: add_label:Newsletters,archive (rule …)". */
export function describeOutcome(o: Outcome): string {
  return `${o.category ?? 'unclassified'}: ${actionsText(o.actions)}${o.ruleId ? ` (rule ${o.ruleId})` : ' (LLM)'}`;
}

export interface RulesReplay {
  since: string;
  threads: number;
  fromJournal: number;
  /** Per deciding rule id, how many threads it decides now; 'llm' for those no rule decides. */
  decidedBy: Record<string, number>;
  /** Threads the rules in force now put in another category than the one recorded. */
  differ: number;
  examples: Array<{ threadId: string; sender: string; subject: string; recorded: Category | null; now: Outcome }>;
}

/** `rules test --since`: the rules in force now over the stored threads of the window, against what was recorded. */
export async function replayRules(db: SqlExecutor, input: { accountId: string; since: Date; exampleCount?: number }): Promise<RulesReplay> {
  const [rules, categoryActions, threads] = await Promise.all([
    rulesInForce(db, input.accountId),
    loadCategoryActions(db, input.accountId),
    storedThreads(db, input.accountId, input.since),
  ]);
  const replay: RulesReplay = { since: input.since.toISOString(), threads: threads.length, fromJournal: 0, decidedBy: {}, differ: 0, examples: [] };
  for (const thread of threads) {
    if (thread.from === 'journal') replay.fromJournal += 1;
    const now = outcomeOf(rules, thread, input.accountId, categoryActions);
    const by = now.ruleId ?? 'llm';
    replay.decidedBy[by] = (replay.decidedBy[by] ?? 0) + 1;
    if (now.ruleId === null || now.category === thread.recorded) continue;
    replay.differ += 1;
    if (replay.examples.length < (input.exampleCount ?? 5)) {
      replay.examples.push({ threadId: thread.threadId, sender: thread.email.sender, subject: thread.email.subject, recorded: thread.recorded, now });
    }
  }
  return replay;
}
