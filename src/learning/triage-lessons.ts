// Triage lessons, computed from the user's repeated corrections, never by the LLM: an action the
// user took back (undo) or refused (an approval rejected) on threads of one sender, as many times
// as the setting says, becomes a proposal for a sender rule that keeps the sender's category and
// drops that action — "mail from news@shop.example: do not archive"; threads of one sender the
// user had classified again into the same other category become a sender rule for that category.
// Nothing takes hold here: the proposal waits for the user (src/learning/memory.ts).
import type { ActionSpec } from '../actions/contracts.js';
import { formatActionList } from '../actions/action-specs.js';
import { loadCategoryActions } from '../actions/journal.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { isCategory, type Category } from '../mail/types.js';
import { type Evidence, gmailThreadLink, type LearningSettings, type TriageRule, widens } from './contracts.js';
import { outcomeOf, rulesInForce, storedThreads } from './dry-run.js';
import { proposeLesson, type LessonProposal } from './memory.js';
import type { CorrectionSource, DerivedLessons } from './activity-contracts.js';

/** One correction as the journal holds it. */
export interface Correction {
  /** The journal row taken back; absent for a label the user added. */
  actionId?: string;
  threadId: string;
  /** undone, rejected: the actions journal; the rest: what the thread saw in the mailbox (corrections.ts). */
  source: 'undone' | 'rejected' | CorrectionSource;
  kind: string;
  argument?: string;
  sender: string;
  subject: string;
  category: Category | null;
  at: Date;
}

const CORRECTIONS_SQL = `
SELECT a.id, a.gmail_thread_id, a.kind, a.argument, a.state::text AS source, a.sender, a.subject, a.updated_at AS at, t.category
FROM actions a LEFT JOIN threads t ON t.account_id = a.account_id AND t.gmail_thread_id = a.gmail_thread_id
WHERE a.account_id = $1 AND a.state IN ('undone', 'rejected') AND a.updated_at >= $2
  AND a.kind <> 'draft' AND a.sender <> '' AND a.reason->>'source' IN ('rule', 'llm', 'agent')
UNION ALL
SELECT c.action_id, c.gmail_thread_id, c.kind, c.argument, c.source, c.sender, c.subject, c.created_at, c.category
FROM learning_corrections c WHERE c.account_id = $1 AND c.created_at >= $2
ORDER BY at, id`;

/**
 * The account's corrections of triage since `since`, oldest first: actions it proposed or did that
 * the user undid or rejected, and the corrections the threads saw in the mailbox.
 */
export async function loadCorrections(db: SqlExecutor, accountId: string, since: Date): Promise<Correction[]> {
  const rows = await db.query<{
    id: string | null;
    gmail_thread_id: string;
    kind: string;
    argument: string | null;
    source: Correction['source'];
    sender: string;
    subject: string;
    at: Date;
    category: string | null;
  }>(CORRECTIONS_SQL, [accountId, since]);
  return rows.map((r) => ({
    ...(r.id !== null ? { actionId: r.id } : {}),
    threadId: r.gmail_thread_id,
    source: r.source,
    kind: r.kind,
    ...(r.argument !== null ? { argument: r.argument } : {}),
    sender: r.sender,
    subject: r.subject,
    category: isCategory(r.category) ? r.category : null,
    at: r.at,
  }));
}

const specKey = (s: { kind: string; argument?: string }) => (s.argument ? `${s.kind}:${s.argument.toLowerCase()}` : s.kind);

/** What the sender's mail gets now, and so what a lesson can take away from it. */
export interface SenderNow {
  category: Category | null;
  actions: ActionSpec[];
}

/** Spec keys corrected on at least `threshold` distinct threads. */
function repeatedSpecs(corrections: readonly Correction[], threshold: number): Set<string> {
  const threadsBySpec = new Map<string, Set<string>>();
  for (const c of corrections) {
    const key = specKey(c);
    threadsBySpec.set(key, (threadsBySpec.get(key) ?? new Set()).add(c.threadId));
  }
  return new Set([...threadsBySpec].filter(([, threads]) => threads.size >= threshold).map(([key]) => key));
}

/**
 * The lessons one sender's corrections teach, as pure data: the actions taken back on at least
 * `threshold` distinct threads that the sender's mail still gets are dropped; a label the user put
 * on at least `threshold` of its threads, which its mail does not get, is added. Null when there is
 * nothing to learn (too few corrections, no category to keep, nothing left to change), and when the
 * change would let the assistant do more on its own (`widens`: never from these corrections).
 */
export function triageLessonFor(
  input: { accountId: string; accountEmail: string; sender: string; corrections: Correction[]; now: SenderNow; threshold: number },
): LessonProposal | null {
  const category = input.now.category;
  if (!category) return null;
  const takenBack = repeatedSpecs(input.corrections.filter((c) => c.source !== 'label_added'), input.threshold);
  const askedFor = repeatedSpecs(input.corrections.filter((c) => c.source === 'label_added'), input.threshold);
  const dropped = input.now.actions.filter((a) => takenBack.has(specKey(a)));
  const has = new Set(input.now.actions.map(specKey));
  const added: ActionSpec[] = [];
  for (const c of input.corrections) {
    const key = specKey(c);
    if (c.source === 'label_added' && askedFor.has(key) && !has.has(key) && !takenBack.has(key) && c.argument) {
      has.add(key);
      added.push({ kind: 'add_label', argument: c.argument });
    }
  }
  if (dropped.length === 0 && added.length === 0) return null;
  const rule: TriageRule = { category, actions: [...input.now.actions.filter((a) => !takenBack.has(specKey(a))), ...added] };
  if (widens(input.now.actions, rule.actions)) return null;
  const droppedKeys = new Set(dropped.map(specKey));
  const addedKeys = new Set(added.map(specKey));
  const evidence: Evidence[] = input.corrections
    .filter((c) => (c.source === 'label_added' ? addedKeys : droppedKeys).has(specKey(c)))
    .map((c) => ({
      source: c.source,
      threadId: c.threadId,
      ...(c.actionId ? { actionId: c.actionId } : {}),
      kind: c.kind,
      ...(c.argument ? { argument: c.argument } : {}),
      sender: c.sender,
      subject: c.subject,
      ...(c.category ? { category: c.category } : {}),
      at: c.at.toISOString(),
      link: gmailThreadLink(input.accountEmail, c.threadId),
    }));
  const what = [
    ...(dropped.length > 0 ? [`do not ${formatActionList(dropped)}`] : []),
    ...(added.length > 0 ? [`also ${formatActionList(added)}, as you filed it`] : []),
  ].join('; ');
  const keyParts = [
    ...(dropped.length > 0 ? [`drop:${dropped.map(specKey).sort().join(',')}`] : []),
    ...(added.length > 0 ? [`add:${added.map(specKey).sort().join(',')}`] : []),
  ];
  return {
    accountId: input.accountId,
    kind: 'triage',
    scope: 'sender',
    scopeRef: input.sender,
    key: `triage:${input.accountId}:sender:${input.sender}:${keyParts.join(':')}`,
    text: `mail from ${input.sender}: ${what} (still ${category}; then: ${formatActionList(rule.actions)})`,
    rule,
    evidence,
    createdBy: 'learning',
  };
}

/** A thread the user had classified again (`threads reclassify`) that moved to another category. */
export interface Reclassification {
  threadId: string;
  from: Category | null;
  to: Category;
  at: Date;
}

const RECLASSIFIED_SQL = `
SELECT t.gmail_thread_id AS thread_id, d.kind, d.detail->>'text' AS text, d.created_at
FROM decisions d JOIN threads t ON t.id = d.thread_id
WHERE d.thread_id IN (SELECT thread_id FROM decisions WHERE account_id = $1 AND kind = 'reclassify' AND created_at >= $2)
  AND d.kind IN ('classify', 'reclassify')
ORDER BY t.gmail_thread_id, d.id`;

/** The category a classify decision's text starts with ("newsletter: rule …", "fyi (0.91): …"). */
function categoryOfDecision(text: string | null): Category | null {
  const word = /^([a-z_]+)/.exec(text ?? '')?.[1];
  return isCategory(word) ? word : null;
}

/** Threads whose classification after a reclassify request differs from the one before it. */
export async function loadReclassifications(db: SqlExecutor, accountId: string, since: Date): Promise<Reclassification[]> {
  const rows = await db.query<{ thread_id: string; kind: string; text: string | null; created_at: Date }>(RECLASSIFIED_SQL, [accountId, since]);
  const out: Reclassification[] = [];
  let thread = '';
  let last: Category | null = null;
  let asked = false;
  for (const r of rows) {
    if (r.thread_id !== thread) [thread, last, asked] = [r.thread_id, null, false];
    if (r.kind === 'reclassify') {
      asked = true;
      continue;
    }
    const category = categoryOfDecision(r.text);
    if (asked && category && category !== last) out.push({ threadId: r.thread_id, from: last, to: category, at: r.created_at });
    asked = false;
    last = category ?? last;
  }
  return out;
}

/**
 * The lesson a sender's reclassified threads teach: once `threshold` of them moved to one category
 * that no rule gives the sender's mail now, a sender rule for it with the category's actions. Such
 * a rule may widen what the assistant does (the text says so): it waits for the user like any other.
 */
export function categoryLessonFor(input: {
  accountId: string;
  accountEmail: string;
  sender: string;
  moves: (Reclassification & { subject: string })[];
  now: SenderNow & { ruleId: string | null };
  categoryActions: Record<Category, ActionSpec[]>;
  threshold: number;
}): LessonProposal | null {
  const byCategory = new Map<Category, Set<string>>();
  for (const m of input.moves) byCategory.set(m.to, (byCategory.get(m.to) ?? new Set()).add(m.threadId));
  const [to] = [...byCategory].filter(([, threads]) => threads.size >= input.threshold).map(([c]) => c);
  if (!to || (input.now.ruleId !== null && input.now.category === to)) return null;
  const rule: TriageRule = { category: to, actions: input.categoryActions[to] };
  const wider = widens(input.now.actions, rule.actions);
  return {
    accountId: input.accountId,
    kind: 'triage',
    scope: 'sender',
    scopeRef: input.sender,
    key: `triage:${input.accountId}:sender:${input.sender}:category:${to}`,
    text: `mail from ${input.sender}: ${to}, as you reclassified it (then: ${formatActionList(rule.actions)}${wider ? '; this lets it do more on its own' : ''})`,
    rule,
    evidence: input.moves
      .filter((m) => m.to === to)
      .map((m) => ({
        source: 'reclassified' as const,
        threadId: m.threadId,
        kind: 'classify',
        sender: input.sender,
        subject: m.subject,
        category: to,
        at: m.at.toISOString(),
        link: gmailThreadLink(input.accountEmail, m.threadId),
      })),
    createdBy: 'learning',
  };
}

/**
 * Looks at the account's corrections and proposes what they teach. Idempotent: the same corrections
 * find their lesson by key, and a lesson the user decided on is not proposed again.
 */
export async function deriveTriageLessons(
  db: SqlExecutor,
  input: { accountId: string; settings: LearningSettings; now?: Date },
): Promise<DerivedLessons> {
  if (!input.settings.enabled) return { changed: [], senders: 0 };
  const now = input.now ?? new Date();
  const since = new Date(now.getTime() - input.settings.lookbackMs);
  const [corrections, moves] = await Promise.all([loadCorrections(db, input.accountId, since), loadReclassifications(db, input.accountId, since)]);
  if (corrections.length === 0 && moves.length === 0) return { changed: [], senders: 0 };
  const [[account], rules, categoryActions, threads] = await Promise.all([
    db.query<{ email: string }>(`SELECT email FROM accounts WHERE id = $1`, [input.accountId]),
    rulesInForce(db, input.accountId),
    loadCategoryActions(db, input.accountId),
    storedThreads(db, input.accountId, since),
  ]);
  const threadById = new Map(threads.map((t) => [t.threadId, t]));
  const accountEmail = account?.email ?? '';
  const threshold = input.settings.triageLessonAfter;
  // What the sender's mail gets now: one of its threads through the rules in force.
  const nowFor = (sender: string, threadId: string, fallback: { category: Category | null; subject: string; at: Date }) =>
    outcomeOf(rules, threadById.get(threadId) ?? {
      threadId,
      recorded: fallback.category,
      updatedAt: fallback.at,
      from: 'journal',
      email: { from: sender, sender, to: '', subject: fallback.subject, date: '', body: '', headers: { from: sender } },
    }, input.accountId, categoryActions);

  const proposals: LessonProposal[] = [];
  const bySender = new Map<string, Correction[]>();
  for (const c of corrections) bySender.set(c.sender, [...(bySender.get(c.sender) ?? []), c]);
  for (const [sender, theirs] of bySender) {
    const newest = theirs.at(-1)!;
    const now = nowFor(sender, newest.threadId, { category: newest.category, subject: newest.subject, at: newest.at });
    const proposal = triageLessonFor({ accountId: input.accountId, accountEmail, sender, corrections: theirs, now, threshold });
    if (proposal) proposals.push(proposal);
  }
  // Reclassified threads count for the sender the stored mail or the journal names.
  const movesBySender = new Map<string, (Reclassification & { subject: string })[]>();
  for (const m of moves) {
    const email = threadById.get(m.threadId)?.email;
    if (!email?.sender) continue;
    movesBySender.set(email.sender, [...(movesBySender.get(email.sender) ?? []), { ...m, subject: email.subject }]);
  }
  for (const [sender, theirs] of movesBySender) {
    const newest = theirs.at(-1)!;
    const now = nowFor(sender, newest.threadId, { category: newest.to, subject: newest.subject, at: newest.at });
    const proposal = categoryLessonFor({ accountId: input.accountId, accountEmail, sender, moves: theirs, now, categoryActions, threshold });
    if (proposal) proposals.push(proposal);
  }

  const changed: string[] = [];
  for (const proposal of proposals) {
    const { lesson, changed: didChange } = await proposeLesson(db, proposal);
    if (didChange) changed.push(lesson.id);
  }
  return { changed, senders: new Set([...bySender.keys(), ...movesBySender.keys()]).size };
}
