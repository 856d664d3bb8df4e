// The lessons' memory in Postgres (tables lessons, lesson_versions, lesson_events): one home for its
// SQL, used by the learning activities, the CLI and the approvals page. A lesson's content lives in
// versions that are never changed: an edit or a revert adds one. Every change of state or version
// is one statement that also appends to the lesson's journal and, for a triage lesson, writes,
// rewrites or removes its rule, so the three never disagree. A change asked for twice (a retry, a
// second click) finds the lesson already moved and changes nothing.
import { z } from 'zod';
import { actionSpecsSchema } from '../actions/action-specs.js';
import { CATEGORIES } from '../mail/types.js';
import { uuid7 } from '../db/uuid7.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { InvalidRuleError, validateRule } from '../rules/rules.js';
import { autoAcceptAfter, confirmations, mayTakeHoldAlone } from './auto-accept.js';
import {
  evidenceListSchema,
  readTypedLesson,
  renderTypedLesson,
  type Evidence,
  type Lesson,
  type LessonEventView,
  type LessonKind,
  type LessonScope,
  type LessonState,
  type LessonVersionView,
  type TriageRule,
  type TypedLesson,
} from './contracts.js';

/** The rule a triage lesson writes when accepted (TriageRule): its scope is the lesson's. */
const triageRuleSchema = z.object({
  category: z.enum(CATEGORIES),
  /** What the rule's mail gets instead of the category's actions ([] : nothing). */
  actions: actionSpecsSchema,
});

type LessonRow = {
  id: string;
  account_id: string | null;
  kind: LessonKind;
  scope: LessonScope;
  scope_ref: string | null;
  state: LessonState;
  version: number;
  key: string | null;
  rule_id: string | null;
  created_at: Date;
  updated_at: Date;
};

type VersionRow = {
  version: number;
  text: string;
  rule: unknown;
  typed: unknown;
  evidence: unknown;
  revert_of: number | null;
  created_by: string;
  created_at: Date;
};

const LESSON_COLUMNS = `l.id, l.account_id, l.kind, l.scope::text AS scope, l.scope_ref, l.state::text AS state, l.version, l.key, l.rule_id, l.created_at, l.updated_at`;
const VERSION_COLUMNS = `v.version, v.text, v.rule, v.typed, v.evidence, v.revert_of, v.created_by, v.created_at`;

/** A lesson cannot make this change (unknown, or in a state it cannot leave that way). */
export class LessonChangeError extends Error {}

function versionOf(row: VersionRow): LessonVersionView {
  const rule = triageRuleSchema.safeParse(row.rule);
  const evidence = evidenceListSchema.safeParse(row.evidence);
  // A typed value that no longer fits its schema (a rule tightened since) reads as free text: it then waits for the user.
  const typed = readTypedLesson(row.typed);
  return {
    version: row.version,
    text: row.text,
    ...(typed ? { typed } : {}),
    ...(rule.success ? { rule: rule.data } : {}),
    evidence: evidence.success ? evidence.data : [],
    ...(row.revert_of !== null ? { revertOf: row.revert_of } : {}),
    createdBy: row.created_by,
    createdAt: row.created_at.toISOString(),
  };
}

function lessonOf(row: LessonRow & { [k: string]: unknown }, current: VersionRow): Lesson {
  return {
    id: row.id,
    ...(row.account_id ? { accountId: row.account_id } : {}),
    kind: row.kind,
    scope: row.scope,
    ...(row.scope_ref ? { scopeRef: row.scope_ref } : {}),
    state: row.state,
    version: row.version,
    ...(row.key ? { key: row.key } : {}),
    ...(row.rule_id ? { ruleId: row.rule_id } : {}),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    current: versionOf(current),
  };
}

const LESSON_SELECT = `
SELECT ${LESSON_COLUMNS}, ${VERSION_COLUMNS}
FROM lessons l JOIN lesson_versions v ON v.lesson_id = l.id AND v.version = l.version`;

type JoinedRow = LessonRow & VersionRow;

const fromJoined = (row: JoinedRow) => lessonOf(row, row);

const isUuid = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);

export async function loadLesson(db: SqlExecutor, id: string): Promise<Lesson | null> {
  if (!isUuid(id)) return null;
  const [row] = await db.query<JoinedRow>(`${LESSON_SELECT} WHERE l.id = $1`, [id]);
  return row ? fromJoined(row) : null;
}

export interface LessonFilter {
  accountId?: string;
  state?: LessonState;
  kind?: LessonKind;
  limit?: number;
}

/** Newest first. */
export async function listLessons(db: SqlExecutor, filter: LessonFilter = {}): Promise<Lesson[]> {
  const rows = await db.query<JoinedRow>(
    `${LESSON_SELECT}
     WHERE ($1::text IS NULL OR l.account_id = $1) AND ($2::text IS NULL OR l.state::text = $2) AND ($3::text IS NULL OR l.kind = $3)
     ORDER BY l.updated_at DESC, l.id DESC LIMIT $4`,
    [filter.accountId ?? null, filter.state ?? null, filter.kind ?? null, filter.limit ?? 200],
  );
  return rows.map(fromJoined);
}

/** Every version, oldest first. */
export async function lessonVersions(db: SqlExecutor, id: string): Promise<LessonVersionView[]> {
  if (!isUuid(id)) return [];
  const rows = await db.query<VersionRow>(`SELECT ${VERSION_COLUMNS} FROM lesson_versions v WHERE v.lesson_id = $1 ORDER BY v.version`, [id]);
  return rows.map(versionOf);
}

/** The lesson's journal, oldest first. */
export async function lessonEvents(db: SqlExecutor, id: string): Promise<LessonEventView[]> {
  if (!isUuid(id)) return [];
  const rows = await db.query<{ event: string; from_state: string | null; to_state: string; version: number; decided_by: string; note: string | null; created_at: Date }>(
    `SELECT event, from_state, to_state, version, decided_by, note, created_at FROM lesson_events WHERE lesson_id = $1 ORDER BY id`,
    [id],
  );
  return rows.map((r) => ({
    event: r.event,
    ...(r.from_state ? { fromState: r.from_state } : {}),
    toState: r.to_state,
    version: r.version,
    decidedBy: r.decided_by,
    ...(r.note ? { note: r.note } : {}),
    at: r.created_at.toISOString(),
  }));
}

// ---- proposing ---------------------------------------------------------------------------------

export interface LessonProposal {
  accountId?: string;
  kind: LessonKind;
  scope: LessonScope;
  scopeRef?: string;
  /** One lesson per key: the derivation's name for the pattern of corrections. */
  key?: string;
  /** Free text; for a typed lesson it is replaced by our rendering of `typed`. */
  text: string;
  rule?: TriageRule;
  /** A writing lesson's typed value (checked by its schema): only such a lesson may take hold alone. */
  typed?: TypedLesson;
  evidence: Evidence[];
  createdBy: string;
}

/** What a version says: a typed lesson's text is always our rendering of its value, whatever the caller wrote. */
function contentOf(p: { text: string; typed?: TypedLesson }): { text: string; typed: TypedLesson | null } {
  const typed = p.typed ? readTypedLesson(p.typed) ?? null : null;
  return { text: typed ? renderTypedLesson(typed) : p.text, typed };
}

/** A triage lesson's rule as the rules module reads it, checked; a bad one is a LessonChangeError. */
function checkRule(lesson: { scope: LessonScope; scopeRef?: string }, rule: TriageRule): void {
  try {
    validateRule({ id: 'lesson', scope: lesson.scope, scopeRef: lesson.scopeRef, kind: 'deterministic', category: rule.category, actions: rule.actions, priority: 0, enabled: true });
  } catch (err) {
    if (err instanceof InvalidRuleError) throw new LessonChangeError(err.message.replace('rule "lesson": ', ''));
    throw err;
  }
}

/**
 * Records a proposal. With a key already known: a proposal still waiting gets a new version when
 * its evidence grew (the journal says so); an accepted, rejected or reverted one is left alone (the
 * user has decided; the same corrections do not propose it again). Returns the lesson and whether
 * this call created or changed it.
 */
export async function proposeLesson(db: SqlExecutor, p: LessonProposal): Promise<{ lesson: Lesson; changed: boolean }> {
  if (p.kind === 'triage') {
    if (!p.rule) throw new LessonChangeError('a triage lesson needs its rule');
    checkRule(p, p.rule);
  }
  if (p.typed && p.kind === 'triage') throw new LessonChangeError('a triage lesson has a rule, not a typed value');
  const content = contentOf(p);
  const id = uuid7();
  const [created] = await db.query<{ id: string }>(
    `WITH l AS (
       INSERT INTO lessons (id, account_id, kind, scope, scope_ref, key, state, version, created_at, updated_at)
       VALUES ($1, $2, $3, $4::rule_scope, $5, $6, 'proposed', 1, clock_timestamp(), clock_timestamp())
       ON CONFLICT (key) DO NOTHING RETURNING id),
     v AS (INSERT INTO lesson_versions (lesson_id, version, text, rule, typed, evidence, created_by)
       SELECT id, 1, $7, $8::jsonb, $12::jsonb, $9::jsonb, $10 FROM l),
     e AS (INSERT INTO lesson_events (lesson_id, event, to_state, version, decided_by, note)
       SELECT id, 'proposed', 'proposed', 1, $10, $11 FROM l)
     SELECT id FROM l`,
    [id, p.accountId ?? null, p.kind, p.scope, p.scopeRef ?? null, p.key ?? null, content.text, JSON.stringify(p.rule ?? {}), JSON.stringify(p.evidence), p.createdBy, `${p.evidence.length} correction(s)`, content.typed ? JSON.stringify(content.typed) : null],
  );
  if (created) return { lesson: (await loadLesson(db, created.id))!, changed: true };
  const [existing] = await db.query<JoinedRow>(`${LESSON_SELECT} WHERE l.key = $1`, [p.key]);
  const lesson = fromJoined(existing!);
  const known = new Set(lesson.current.evidence.map(evidenceId));
  const grew = p.evidence.some((e) => !known.has(evidenceId(e)));
  if (lesson.state !== 'proposed' || !grew) return { lesson, changed: false };
  const updated = await addVersion(db, lesson.id, { text: p.text, rule: p.rule, typed: p.typed, evidence: p.evidence }, { event: 'evidence', decidedBy: p.createdBy, note: `${p.evidence.length} correction(s)`, onlyIn: ['proposed'] });
  return { lesson: updated ?? lesson, changed: updated !== null };
}

const evidenceId = (e: Evidence) => `${e.source}:${e.actionId ?? ''}:${e.threadId}:${e.at}`;

// ---- changing ----------------------------------------------------------------------------------

/** Who may accept: only the user's own channels (a lesson never accepts itself). */
export const USER_CHANNELS = ['cli', 'page', 'discord', 'mcp'] as const;
export type UserChannel = (typeof USER_CHANNELS)[number];

const RULE_FROM_VERSION = `
  INSERT INTO rules (id, scope, scope_ref, kind, conditions, action, actions, priority, enabled, created_at)
  SELECT $3, m.scope, m.scope_ref, 'deterministic', '{}'::jsonb, v.rule->>'category', v.rule->'actions', 0, true, clock_timestamp()
  FROM moved m JOIN lesson_versions v ON v.lesson_id = m.id AND v.version = m.version
  WHERE m.kind = 'triage'`;

/**
 * The user accepts a proposed (or reverted) lesson: it takes hold. A triage lesson's rule is written
 * now (a sender rule the workflow's rules step reads with the next mail).
 */
export async function acceptLesson(db: SqlExecutor, id: string, decidedBy: UserChannel, note?: string): Promise<{ lesson: Lesson; moved: boolean }> {
  return accept(db, await requireLesson(db, id), decidedBy, note);
}

/**
 * A proposed typed lesson (sign-off, greeting, language, tone) takes hold without review when the setting allows it
 * (auto-accept.ts: on, enough confirmations); journaled like an accept, by `learning`. Otherwise
 * nothing changes and the answer says why.
 */
export async function autoAcceptLesson(db: SqlExecutor, id: string): Promise<{ lesson: Lesson; moved: boolean; why?: string }> {
  const lesson = await requireLesson(db, id);
  if (lesson.state !== 'proposed') return { lesson, moved: false, why: `it is ${lesson.state}` };
  const after = lesson.accountId ? await autoAcceptAfter(db, lesson.accountId) : null;
  const allowed = mayTakeHoldAlone(lesson, after);
  if (!allowed.ok) return { lesson, moved: false, why: allowed.why };
  return accept(db, lesson, 'learning', `taken without review: ${confirmations(lesson)} confirmations, auto-accept after ${after} (memory auto-accept)`);
}

async function accept(db: SqlExecutor, lesson: Lesson, decidedBy: UserChannel | 'learning', note?: string): Promise<{ lesson: Lesson; moved: boolean }> {
  const id = lesson.id;
  if (lesson.kind === 'triage' && lesson.current.rule) checkRule(lesson, lesson.current.rule);
  // One triage lesson in force per account and sender: an older accepted one is superseded (reverted, its rule removed).
  const [moved] = await db.query<{ id: string }>(
    `WITH moved AS (
       UPDATE lessons SET state = 'accepted', rule_id = CASE WHEN kind = 'triage' THEN $3 END, updated_at = clock_timestamp()
       WHERE id = $1 AND state IN ('proposed', 'reverted') RETURNING id, account_id, kind, scope, scope_ref, version),
     r AS (${RULE_FROM_VERSION}),
     older AS (
       SELECT o.id, o.rule_id, o.version FROM lessons o JOIN moved m
         ON o.account_id IS NOT DISTINCT FROM m.account_id AND o.scope = m.scope AND o.scope_ref IS NOT DISTINCT FROM m.scope_ref
       WHERE m.kind = 'triage' AND o.kind = 'triage' AND o.state = 'accepted' AND o.id <> m.id FOR UPDATE OF o),
     superseded AS (UPDATE lessons SET state = 'reverted', rule_id = NULL, updated_at = clock_timestamp() WHERE id IN (SELECT id FROM older)),
     gone AS (DELETE FROM rules WHERE id IN (SELECT rule_id FROM older)),
     e AS (INSERT INTO lesson_events (lesson_id, event, from_state, to_state, version, decided_by, note)
       SELECT id, 'accepted', $4, 'accepted', version, $2, $5 FROM moved
       UNION ALL SELECT id, 'superseded', 'accepted', 'reverted', version, $2, 'lesson ' || $1 || ' accepted for the same sender' FROM older)
     SELECT id FROM moved`,
    [id, decidedBy, uuid7(), lesson.state, note ?? null],
  );
  return settle(db, id, moved !== undefined, lesson, 'accept', ['accepted']);
}

/** The user rejects a proposal: it never takes hold, and the same corrections do not propose it again. */
export async function rejectLesson(db: SqlExecutor, id: string, decidedBy: UserChannel, note?: string): Promise<{ lesson: Lesson; moved: boolean }> {
  const lesson = await requireLesson(db, id);
  const [moved] = await db.query<{ id: string }>(
    `WITH moved AS (
       UPDATE lessons SET state = 'rejected', updated_at = clock_timestamp() WHERE id = $1 AND state = 'proposed' RETURNING id, version),
     e AS (INSERT INTO lesson_events (lesson_id, event, from_state, to_state, version, decided_by, note)
       SELECT id, 'rejected', 'proposed', 'rejected', version, $2, $3 FROM moved)
     SELECT id FROM moved`,
    [id, decidedBy, note ?? null],
  );
  return settle(db, id, moved !== undefined, lesson, 'reject', ['rejected']);
}

/**
 * Takes an accepted lesson back: it stops taking hold (a triage lesson's rule is removed), and every
 * version stays. Accepting it again puts it back.
 */
export async function revertLesson(db: SqlExecutor, id: string, decidedBy: UserChannel, note?: string): Promise<{ lesson: Lesson; moved: boolean }> {
  const lesson = await requireLesson(db, id);
  const [moved] = await db.query<{ id: string }>(
    `WITH old AS (SELECT id, rule_id FROM lessons WHERE id = $1 AND state = 'accepted' FOR UPDATE),
     moved AS (
       UPDATE lessons l SET state = 'reverted', rule_id = NULL, updated_at = clock_timestamp() FROM old WHERE l.id = old.id RETURNING l.id, l.version),
     r AS (DELETE FROM rules WHERE id = (SELECT rule_id FROM old)),
     e AS (INSERT INTO lesson_events (lesson_id, event, from_state, to_state, version, decided_by, note)
       SELECT id, 'reverted', 'accepted', 'reverted', version, $2, $3 FROM moved)
     SELECT id FROM moved`,
    [id, decidedBy, note ?? null],
  );
  return settle(db, id, moved !== undefined, lesson, 'revert', ['reverted']);
}

export interface LessonEdit {
  text?: string;
  rule?: TriageRule;
}

/** The user edits a lesson: a new version; an accepted triage lesson's rule follows it at once. */
export async function editLesson(db: SqlExecutor, id: string, edit: LessonEdit, decidedBy: UserChannel, note?: string): Promise<Lesson> {
  const lesson = await requireLesson(db, id);
  if (edit.rule && lesson.kind !== 'triage') throw new LessonChangeError(`lesson ${id} is a ${lesson.kind} lesson: it has no rule to edit`);
  const rule = edit.rule ?? lesson.current.rule;
  if (lesson.kind === 'triage' && rule) checkRule(lesson, rule);
  // Text the user wrote is free text: the version drops the typed value (it now waits for, or was written by, the user).
  const typed = edit.text === undefined ? lesson.current.typed : undefined;
  const content = { text: edit.text ?? lesson.current.text, rule, typed, evidence: lesson.current.evidence };
  const updated = await addVersion(db, id, content, { event: 'edited', decidedBy, note });
  if (!updated) throw new LessonChangeError(`lesson ${id} changed meanwhile: try again`);
  return updated;
}

/**
 * Restores an earlier version as a new one (the history only grows); an accepted triage lesson's
 * rule becomes that version's rule at once.
 */
export async function restoreVersion(db: SqlExecutor, id: string, toVersion: number, decidedBy: UserChannel, note?: string): Promise<Lesson> {
  const lesson = await requireLesson(db, id);
  const versions = await lessonVersions(db, id);
  const old = versions.find((v) => v.version === toVersion);
  if (!old) throw new LessonChangeError(`lesson ${id} has no version ${toVersion} (it has 1 to ${lesson.version})`);
  if (toVersion === lesson.version) throw new LessonChangeError(`version ${toVersion} is the one in force already`);
  const updated = await addVersion(db, id, { text: old.text, rule: old.rule, typed: old.typed, evidence: old.evidence, revertOf: toVersion }, { event: 'restored', decidedBy, note: note ?? `version ${toVersion} restored` });
  if (!updated) throw new LessonChangeError(`lesson ${id} changed meanwhile: try again`);
  return updated;
}

/**
 * Appends a version after the one in force and makes it current, journals `event`, and rewrites an
 * accepted triage lesson's rule; one statement. Null when the lesson is not in one of `onlyIn`.
 */
async function addVersion(
  db: SqlExecutor,
  id: string,
  input: { text: string; rule?: TriageRule; typed?: TypedLesson; evidence: Evidence[]; revertOf?: number },
  how: { event: string; decidedBy: string; note?: string; onlyIn?: LessonState[] },
): Promise<Lesson | null> {
  const content = { ...input, ...contentOf(input) };
  const [row] = await db.query<{ id: string }>(
    `WITH cur AS (SELECT id, version, state FROM lessons WHERE id = $1 AND state::text = ANY($8::text[]) FOR UPDATE),
     v AS (INSERT INTO lesson_versions (lesson_id, version, text, rule, typed, evidence, revert_of, created_by)
       SELECT id, version + 1, $2, $3::jsonb, $10::jsonb, $4::jsonb, $5, $6 FROM cur RETURNING lesson_id, version),
     u AS (UPDATE lessons l SET version = v.version, updated_at = clock_timestamp() FROM v WHERE l.id = v.lesson_id
       RETURNING l.id, l.version, l.state::text AS state, l.rule_id, l.kind),
     r AS (UPDATE rules SET action = $3::jsonb->>'category', actions = $3::jsonb->'actions'
       WHERE id = (SELECT rule_id FROM u WHERE state = 'accepted' AND kind = 'triage')),
     e AS (INSERT INTO lesson_events (lesson_id, event, from_state, to_state, version, decided_by, note)
       SELECT id, $7, state, state, version, $6, $9 FROM u)
     SELECT id FROM u`,
    [id, content.text, JSON.stringify(content.rule ?? {}), JSON.stringify(content.evidence), content.revertOf ?? null, how.decidedBy, how.event, how.onlyIn ?? ['proposed', 'accepted', 'rejected', 'reverted'], how.note ?? null, content.typed ? JSON.stringify(content.typed) : null],
  );
  return row ? loadLesson(db, id) : null;
}

async function requireLesson(db: SqlExecutor, id: string): Promise<Lesson> {
  const lesson = await loadLesson(db, id);
  if (!lesson) throw new LessonChangeError(`no lesson ${id} (see npm run cli -- memory list)`);
  return lesson;
}

/** The lesson after a change; a change to a state it is already in is no error (a second click). */
async function settle(db: SqlExecutor, id: string, moved: boolean, before: Lesson, verb: string, done: LessonState[]): Promise<{ lesson: Lesson; moved: boolean }> {
  const lesson = (await loadLesson(db, id))!;
  if (!moved && !done.includes(lesson.state)) throw new LessonChangeError(`cannot ${verb} lesson ${id}: it is ${before.state}`);
  return { lesson, moved };
}
