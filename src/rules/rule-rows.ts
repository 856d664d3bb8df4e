// A row of the `rules` table as the rules module's Rule: one mapping for the workflow's rules step
// (raw SQL) and the CLI (Prisma), which select the same columns under the same names.
import { isCategory } from '../mail/types.js';
import { actionSpecsOf, InvalidActionSpecError } from '../actions/action-specs.js';
import type { ActionSpec } from '../actions/contracts.js';
import type { Rule } from './contracts.js';

/** A rule's actions as stored; ones edited by hand into something invalid do nothing rather than guess. */
function ruleActions(value: unknown): ActionSpec[] {
  try {
    return actionSpecsOf(value);
  } catch (err) {
    if (err instanceof InvalidActionSpecError) return [];
    throw err;
  }
}

export interface RuleRow {
  id: string;
  scope: Rule['scope'];
  scopeRef: string | null;
  kind: Rule['kind'];
  conditions: unknown;
  /** The category a deterministic rule assigns; `instruction` for instruction rules; `expects_reply` or `no_reply` for follow-up rules. */
  action: string;
  instruction: string | null;
  priority: number;
  enabled: boolean;
  /** [{kind, argument?}] or null (the category's actions). */
  actions?: unknown;
  /** An agent profile's name, or null. */
  route?: string | null;
  /** A follow-up rule's own wait in business days, or null. */
  followUpDays?: number | null;
}

/** What the `action` column holds for a follow-up rule. */
export const FOLLOW_UP_ACTIONS = { yes: 'expects_reply', no: 'no_reply' } as const;

/** The `action` column of a rule: its category, `instruction`, or a follow-up rule's answer. */
export function ruleAction(rule: Rule): string {
  if (rule.kind === 'follow_up') return rule.expectsReply ? FOLLOW_UP_ACTIONS.yes : FOLLOW_UP_ACTIONS.no;
  return rule.category ?? 'instruction';
}

export function ruleFromRow(row: RuleRow): Rule {
  return {
    id: row.id,
    scope: row.scope,
    scopeRef: row.scopeRef ?? undefined,
    kind: row.kind,
    conditions: (row.conditions ?? {}) as Rule['conditions'],
    category: isCategory(row.action) ? row.action : undefined,
    instruction: row.instruction ?? undefined,
    ...(row.actions !== null && row.actions !== undefined ? { actions: ruleActions(row.actions) } : {}),
    ...(row.route ? { route: row.route } : {}),
    // Anything else in a follow-up rule's action leaves expectsReply unset: the rule is then skipped as invalid.
    ...(row.kind === 'follow_up' && (row.action === FOLLOW_UP_ACTIONS.yes || row.action === FOLLOW_UP_ACTIONS.no)
      ? { expectsReply: row.action === FOLLOW_UP_ACTIONS.yes }
      : {}),
    ...(row.followUpDays !== null && row.followUpDays !== undefined ? { followUpDays: row.followUpDays } : {}),
    priority: row.priority,
    enabled: row.enabled,
  };
}
