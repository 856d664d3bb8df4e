// The account setting that lets a writing lesson take hold without review (docs/learning.md): only a
// typed preference (a sign-off, a greeting word, a language, a tone: data that fits its type's zod
// schema, rendered into the prompt by our own sentence), only after N confirmations (distinct threads
// in its evidence), only when the user turned it on (`memory auto-accept --account A --after N`;
// default off). The aspect the model declared is not trusted: what counts is the typed value checked
// again here. Every free-text lesson (fact, procedure, content, wording, and a typed aspect whose
// value did not fit) waits for the user. A triage lesson never takes hold alone: one that widens what
// the assistant does (`widens`) always needs the user, and the setting does not cover the ones that
// narrow it either.
import type { SqlExecutor } from '../db/sql-executor.js';
import { readTypedLesson, TYPED_ASPECTS, WRITING_KINDS, type Lesson, type WritingAspect } from './contracts.js';

/** What a writing lesson may be about and still take hold alone: the typed aspects. */
export const AUTO_ACCEPT_ASPECTS: readonly WritingAspect[] = TYPED_ASPECTS;

/**
 * The aspect of writing a lesson is about, as its key names it (`…:aspect:<aspect>[:…]`): the
 * writing derivation puts it there; a lesson without one is never taken alone.
 */
export function lessonAspect(lesson: Pick<Lesson, 'key'>): string | undefined {
  return /(?:^|:)aspect:([a-z_]+)(?::|$)/.exec(lesson.key ?? '')?.[1];
}

/** Distinct threads the lesson's version in force was confirmed on. */
export const confirmations = (lesson: Pick<Lesson, 'current'>) => new Set(lesson.current.evidence.map((e) => e.threadId)).size;

/** Whether the lesson may take hold without review under the account's setting; else why not. */
export function mayTakeHoldAlone(lesson: Lesson, after: number | null): { ok: true } | { ok: false; why: string } {
  if (lesson.kind === 'triage') return { ok: false, why: 'a triage lesson always waits for you' };
  if (!WRITING_KINDS.includes(lesson.kind)) return { ok: false, why: `a ${lesson.kind} lesson waits for you` };
  if (after === null) return { ok: false, why: 'auto-accept is off for the account' };
  // A fact or a procedure is never "only tone", whatever aspect the model named.
  if (lesson.kind !== 'preference') return { ok: false, why: `a ${lesson.kind} lesson waits for you` };
  // Checked again, not taken from the model's label: the version in force must hold a value that fits its type.
  const typed = readTypedLesson(lesson.current.typed);
  if (!typed || !AUTO_ACCEPT_ASPECTS.includes(typed.type)) {
    return { ok: false, why: 'only a typed lesson (a sign-off, greeting, language or tone that fits its type) takes hold alone; this one is free text' };
  }
  const seen = confirmations(lesson);
  if (seen < after) return { ok: false, why: `${seen} of ${after} confirmations` };
  return { ok: true };
}

/** The account's setting: confirmations before a typed lesson takes hold alone; null: off. */
export async function autoAcceptAfter(db: SqlExecutor, accountId: string): Promise<number | null> {
  const [row] = await db.query<{ after: number | null }>(`SELECT lesson_auto_accept_after AS after FROM accounts WHERE id = $1`, [accountId]);
  return row?.after ?? null;
}

export async function setAutoAcceptAfter(db: SqlExecutor, accountId: string, after: number | null): Promise<void> {
  await db.query(`UPDATE accounts SET lesson_auto_accept_after = $2, updated_at = clock_timestamp() WHERE id = $1`, [accountId, after]);
}
