// The lessons' memory as plain data (docs/learning.md): what a lesson is, what it was learned from,
// and the rule a triage lesson stands for. zod contracts for what comes back out of JSON columns.
import { z } from 'zod';
import { type ActionSpec, actionSpecsSchema } from '../actions/contracts.js';
import { CATEGORIES, type Category } from '../mail/types.js';

export const LESSON_KINDS = ['fact', 'preference', 'procedure', 'triage'] as const;
export type LessonKind = (typeof LESSON_KINDS)[number];
export const WRITING_KINDS: readonly LessonKind[] = ['fact', 'preference', 'procedure'];

/**
 * What part of the user's writing a writing lesson is about (its key names it: `…:aspect:<aspect>:…`).
 * Only tone and sign-off lessons may take hold without review (auto-accept.ts).
 */
export const WRITING_ASPECTS = ['tone', 'greeting', 'sign_off', 'wording', 'content', 'procedure', 'fact'] as const;
export type WritingAspect = (typeof WRITING_ASPECTS)[number];

export const LESSON_STATES = ['proposed', 'accepted', 'rejected', 'reverted'] as const;
export type LessonState = (typeof LESSON_STATES)[number];

export type LessonScope = 'global' | 'account' | 'domain' | 'sender';

/** One correction a lesson was learned from, with where to see it. */
export const evidenceSchema = z.object({
  /**
   * undone | rejected (an action), reclassified (a thread's category changed at the user's request),
   * moved_back | label_removed | label_added (seen in the mailbox: corrections.ts),
   * sent (our draft as the user sent it), rework (instructions the user typed into our draft)
   */
  source: z.enum(['undone', 'rejected', 'reclassified', 'moved_back', 'label_removed', 'label_added', 'sent', 'rework']),
  threadId: z.string(),
  actionId: z.string().optional(),
  /** A writing lesson's evidence row (writing_evidence.id): its text is deleted after LEARNING_EVIDENCE_DAYS, this id stays. */
  evidenceId: z.string().optional(),
  kind: z.string(),
  argument: z.string().optional(),
  sender: z.string(),
  subject: z.string().optional(),
  /** The category the thread had when the correction was made; for reclassified, the one it moved to. */
  category: z.string().optional(),
  at: z.string(),
  /** The thread in Gmail. */
  link: z.string(),
});
export type Evidence = z.infer<typeof evidenceSchema>;
export const evidenceListSchema = z.array(evidenceSchema);

/** The rule a triage lesson writes when accepted: its scope is the lesson's. */
export const triageRuleSchema = z.object({
  category: z.enum(CATEGORIES),
  /** What the rule's mail gets instead of the category's actions ([] : nothing). */
  actions: actionSpecsSchema,
});
export interface TriageRule {
  category: Category;
  actions: ActionSpec[];
}

export interface LessonVersionView {
  version: number;
  text: string;
  rule?: TriageRule;
  evidence: Evidence[];
  revertOf?: number;
  createdBy: string;
  createdAt: string;
}

export interface Lesson {
  id: string;
  accountId?: string;
  kind: LessonKind;
  scope: LessonScope;
  scopeRef?: string;
  state: LessonState;
  /** The version in force. */
  version: number;
  key?: string;
  ruleId?: string;
  createdAt: string;
  updatedAt: string;
  /** The version in force, in full. */
  current: LessonVersionView;
}

export interface LessonEventView {
  event: string;
  fromState?: string;
  toState: string;
  version: number;
  decidedBy: string;
  note?: string;
  at: string;
}

/** The kinds of action whose adding widens what the assistant does to mail on its own. */
export const WIDENING_KINDS = ['archive', 'trash', 'forward', 'auto_reply'] as const;

/** Whether `after` lets the assistant archive, trash or send where `before` did not. */
export function widens(before: readonly ActionSpec[], after: readonly ActionSpec[]): boolean {
  const had = new Set(before.map((a) => a.kind));
  return after.some((a) => (WIDENING_KINDS as readonly string[]).includes(a.kind) && !had.has(a.kind));
}

export const gmailThreadLink = (email: string, threadId: string) =>
  `https://mail.google.com/mail/u/${encodeURIComponent(email)}/#all/${encodeURIComponent(threadId)}`;

export interface LearningSettings {
  enabled: boolean;
  triageLessonAfter: number;
  lookbackMs: number;
  dryRunWindowMs: number;
}
