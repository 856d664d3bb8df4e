// A row of the `rules` table as the rules module's Rule: one mapping for the workflow's rules step
// (raw SQL) and the CLI (Prisma), which select the same columns under the same names.
import type { Rule } from './rules.js';
import { isCategory } from '../mail/types.js';

export interface RuleRow {
  id: string;
  scope: Rule['scope'];
  scopeRef: string | null;
  kind: Rule['kind'];
  conditions: unknown;
  /** The category a deterministic rule assigns; `instruction` for instruction rules. */
  action: string;
  instruction: string | null;
  priority: number;
  enabled: boolean;
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
    priority: row.priority,
    enabled: row.enabled,
  };
}
