// The lessons' memory as plain data (docs/learning.md): what a lesson is, what it was learned from,
// and the rule a triage lesson stands for. zod contracts for what comes back out of JSON columns.
import { z } from 'zod';
import type { ActionSpec } from '../actions/contracts.js';
import type { Category } from '../mail/types.js';

export const LESSON_KINDS = ['fact', 'preference', 'procedure', 'triage'] as const;
export type LessonKind = (typeof LESSON_KINDS)[number];
export const WRITING_KINDS: readonly LessonKind[] = ['fact', 'preference', 'procedure'];

/**
 * What part of the user's writing a writing lesson is about (its key names it: `…:aspect:<aspect>:…`).
 * The first four are typed (below): only a lesson whose value fits its type may take hold without
 * review (auto-accept.ts); the others are free text and always wait for the user.
 */
export const WRITING_ASPECTS = ['tone', 'greeting', 'sign_off', 'language', 'wording', 'content', 'procedure', 'fact'] as const;
export type WritingAspect = (typeof WRITING_ASPECTS)[number];

// ---- typed writing lessons ----------------------------------------------------------------------
// A lesson that may take hold without review is data, not free text: a sign-off, a greeting word, a
// language, a tone. The model proposes the value alone; it must fit its type's schema below, and the
// sentence that goes into the drafting prompt is ours (renderTypedLesson), never the model's words.

/** The tones a tone lesson may name, each with our sentence for the prompt. */
export const TONES = {
  formal: 'Keep the tone formal.',
  neutral: 'Keep the tone neutral and matter-of-fact.',
  friendly: 'Keep the tone friendly.',
  warm: 'Keep the tone warm and personal.',
  casual: 'Keep the tone casual.',
  brief: 'Keep replies brief: a few short sentences.',
} as const;
export type Tone = keyof typeof TONES;
export const TONE_NAMES = Object.keys(TONES) as [Tone, ...Tone[]];

/**
 * A sign-off: one short line of words (letters, spaces and , . ! ' - & only), at most 40 characters
 * and 5 words. So no link, e-mail address, phone number or any digit, no colon or slash, and no
 * dotted name (`sam.example`): nothing that could carry an account number or a place to go.
 */
export const signOffSchema = z
  .string()
  .trim()
  .min(1)
  .max(40)
  .regex(/^[\p{L}\p{M}][\p{L}\p{M} ,.!'’&-]*$/u, 'a sign-off is words only: letters, spaces and , . ! \' - &')
  .refine((s) => !/[\p{L}\p{M}]\.[\p{L}\p{M}]/u.test(s), 'a sign-off holds no dotted name (a link or an address)')
  .refine((s) => s.split(/\s+/).filter(Boolean).length <= 5, 'a sign-off is at most 5 words');

/** A greeting: one or two words of letters (Hey, Hello, Dear, Good morning), at most 20 characters. */
export const greetingSchema = z
  .string()
  .trim()
  .min(1)
  .max(20)
  .regex(/^[\p{L}\p{M}]+( [\p{L}\p{M}]+)?$/u, 'a greeting is one or two words of letters');

const languageNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });

/** The English name of a BCP 47 tag Intl knows (`de` German, `pt-BR` Brazilian Portuguese); undefined for any other string. */
export function languageName(tag: string): string | undefined {
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    const name = canonical ? languageNames.of(canonical) : undefined;
    return name && name !== canonical && /^[\p{L}\p{M} ()-]+$/u.test(name) ? name : undefined;
  } catch {
    return undefined; // not a well-formed tag
  }
}

/** A language: a BCP 47 tag (Intl.getCanonicalLocales validates it), kept in canonical form. */
export const languageTagSchema = z
  .string()
  .trim()
  .min(2)
  .max(35)
  .refine((tag) => languageName(tag) !== undefined, 'a language is a BCP 47 tag with a known language, like de or pt-BR')
  .transform((tag) => Intl.getCanonicalLocales(tag)[0]!);

export const typedLessonSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('sign_off'), text: signOffSchema }).strict(),
  z.object({ type: z.literal('greeting'), word: greetingSchema }).strict(),
  z.object({ type: z.literal('language'), tag: languageTagSchema }).strict(),
  z.object({ type: z.literal('tone'), tone: z.enum(TONE_NAMES) }).strict(),
]);
export type TypedLesson = z.infer<typeof typedLessonSchema>;
export type TypedAspect = TypedLesson['type'];
export const TYPED_ASPECTS: readonly WritingAspect[] = ['sign_off', 'greeting', 'language', 'tone'];

/** The typed value of a lesson the model proposed with `aspect` and `value`, when it fits the aspect's type; else undefined (free text). */
export function typedLessonOf(aspect: WritingAspect, value: string | undefined): TypedLesson | undefined {
  if (value === undefined) return undefined;
  const candidate =
    aspect === 'sign_off' ? { type: aspect, text: value }
    : aspect === 'greeting' ? { type: aspect, word: value }
    : aspect === 'language' ? { type: aspect, tag: value }
    : aspect === 'tone' ? { type: aspect, tone: value.trim().toLowerCase() }
    : undefined;
  const parsed = candidate ? typedLessonSchema.safeParse(candidate) : undefined;
  return parsed?.success ? parsed.data : undefined;
}

/** A stored typed value read back (a JSON column): undefined when absent or when it no longer fits. */
export function readTypedLesson(stored: unknown): TypedLesson | undefined {
  if (stored === null || stored === undefined) return undefined;
  const parsed = typedLessonSchema.safeParse(stored);
  return parsed.success ? parsed.data : undefined;
}

/** Our sentence for a typed lesson: what a person reads and what the drafting prompt gets. */
export function renderTypedLesson(lesson: TypedLesson): string {
  switch (lesson.type) {
    case 'sign_off':
      return `End every reply with "${lesson.text}".`;
    case 'greeting':
      return `Open every reply with "${lesson.word}" and the first name.`;
    case 'language':
      return `Write every reply in ${languageName(lesson.tag) ?? lesson.tag}.`;
    case 'tone':
      return TONES[lesson.tone];
  }
}

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

/** The rule a triage lesson writes when accepted: its scope is the lesson's (checked by memory.ts's triageRuleSchema). */
export interface TriageRule {
  category: Category;
  actions: ActionSpec[];
}

export interface LessonVersionView {
  version: number;
  /** For a typed lesson, our rendering of `typed` (renderTypedLesson). */
  text: string;
  /** A typed writing lesson's value (sign-off, greeting, language, tone); absent: free text. */
  typed?: TypedLesson;
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
