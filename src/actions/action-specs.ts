// The configured actions of a category or a rule, validated where they come in (the CLI, a rule
// row, a category_actions row): `archive`, `add_label:Newsletters`, `forward:me@example.com`.
import { z } from 'zod';
import { isGmailSystemLabel } from '../gmail/system-labels.js';
import { ACTION_KINDS, type ActionSpec } from './contracts.js';

// Here, not in contracts.ts: workflow code imports the contracts, and zod stays out of the workflow bundle (docs/performance.md).
const NEEDS_ARGUMENT = ['add_label', 'remove_label', 'forward'] as const;

export const actionSpecSchema = z
  .object({ kind: z.enum(ACTION_KINDS), argument: z.string().trim().min(1).max(225).optional() })
  .superRefine((spec, ctx) => {
    const needs = (NEEDS_ARGUMENT as readonly string[]).includes(spec.kind);
    if (needs && !spec.argument) ctx.addIssue({ code: 'custom', message: `${spec.kind} needs an argument (${spec.kind}:<${spec.kind === 'forward' ? 'address' : 'label'}>)` });
    if (!needs && spec.argument) ctx.addIssue({ code: 'custom', message: `${spec.kind} takes no argument` });
    if (spec.kind === 'forward' && spec.argument && !z.email().safeParse(spec.argument).success) {
      ctx.addIssue({ code: 'custom', message: `forward: ${spec.argument} is not an email address` });
    }
    if ((spec.kind === 'add_label' || spec.kind === 'remove_label') && spec.argument && isGmailSystemLabel(spec.argument)) {
      ctx.addIssue({ code: 'custom', message: `${spec.kind}: ${spec.argument} is a Gmail system label (use archive, mark_read, star, trash)` });
    }
  });

export const actionSpecsSchema = z.array(actionSpecSchema).max(10);

export class InvalidActionSpecError extends Error {}

/** `kind` or `kind:argument`, comma-separated, as the CLI takes them; '' or 'none' is no action. */
export function parseActionList(text: string): ActionSpec[] {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed === 'none') return [];
  const specs = trimmed.split(',').map((part) => {
    const at = part.indexOf(':');
    const kind = (at < 0 ? part : part.slice(0, at)).trim();
    const argument = at < 0 ? undefined : part.slice(at + 1).trim();
    return argument === undefined ? { kind } : { kind, argument };
  });
  return actionSpecsOf(specs);
}

/** Validates stored or given actions; throws InvalidActionSpecError with the first problem. */
export function actionSpecsOf(value: unknown): ActionSpec[] {
  const parsed = actionSpecsSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? `action ${Number(issue.path[0]) + 1}: ` : '';
    throw new InvalidActionSpecError(`${where}${issue.message}`);
  }
  return parsed.data.map((s) => (s.argument === undefined ? { kind: s.kind } : { kind: s.kind, argument: s.argument }));
}

export function formatActionList(specs: readonly ActionSpec[]): string {
  return specs.length === 0 ? 'none' : specs.map((s) => (s.argument ? `${s.kind}:${s.argument}` : s.kind)).join(',');
}
