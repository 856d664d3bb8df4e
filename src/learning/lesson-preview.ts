// What a triage lesson would change if it took hold: its rule tried on the account's past mail
// (the dry run), in place of the lesson it would supersede. For the CLI and the approvals page.
import type { SqlExecutor } from '../db/sql-executor.js';
import type { Lesson } from './contracts.js';
import { dryRunRuleChange, type DryRunResult } from './dry-run.js';
import type { Rule } from '../rules/contracts.js';

/** The rule a triage lesson stands for, as the rules engine reads it. */
export function ruleOfLesson(lesson: Lesson): Rule | null {
  if (lesson.kind !== 'triage' || !lesson.current.rule) return null;
  return {
    id: lesson.ruleId ?? `lesson:${lesson.id}`,
    scope: lesson.scope,
    ...(lesson.scopeRef ? { scopeRef: lesson.scopeRef } : {}),
    kind: 'deterministic',
    category: lesson.current.rule.category,
    actions: lesson.current.rule.actions,
    priority: 0,
    enabled: true,
  };
}

/**
 * The dry run of a triage lesson not in force: its rule added, the rules of the account's other
 * accepted lessons for the same sender taken away (accepting supersedes them). Null for a writing
 * lesson, one in force, or one with no account to try it on.
 */
export async function previewLesson(db: SqlExecutor, lesson: Lesson, windowMs: number, now = new Date()): Promise<DryRunResult | null> {
  const rule = ruleOfLesson(lesson);
  if (!rule || !lesson.accountId || lesson.state === 'accepted') return null;
  const superseded = await db.query<{ rule_id: string }>(
    `SELECT rule_id FROM lessons WHERE account_id = $1 AND kind = 'triage' AND state = 'accepted' AND scope::text = $2
       AND scope_ref IS NOT DISTINCT FROM $3 AND rule_id IS NOT NULL AND id <> $4`,
    [lesson.accountId, lesson.scope, lesson.scopeRef ?? null, lesson.id],
  );
  return dryRunRuleChange(db, {
    accountId: lesson.accountId,
    change: { add: rule, remove: superseded.map((r) => r.rule_id) },
    since: new Date(now.getTime() - windowMs),
  });
}
