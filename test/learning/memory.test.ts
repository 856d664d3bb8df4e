// The lessons' memory on a real Postgres (a scratch database): derivation thresholds from journaled
// corrections, the dry run reading the backfill's stored messages, writing lessons' versions, and
// one triage lesson in force per sender (a newer accepted one supersedes the older, whose rule goes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setCategoryActions } from '../../src/actions/journal.js';
import { uuid7 } from '../../src/db/uuid7.js';
import { widens } from '../../src/learning/contracts.js';
import { dryRunRuleChange, replayRules } from '../../src/learning/dry-run.js';
import { acceptLesson, editLesson, lessonEvents, LessonChangeError, listLessons, loadLesson, proposeLesson, restoreVersion } from '../../src/learning/memory.js';
import { deriveTriageLessons } from '../../src/learning/triage-lessons.js';
import { openJournal, seedAction } from '../helpers/approvals.js';

let journal: Awaited<ReturnType<typeof openJournal>>;
const settings = { enabled: true, triageLessonAfter: 2, lookbackMs: 60 * 86_400_000, dryRunWindowMs: 30 * 86_400_000 };

async function thread(threadId: string, category: string, stored?: { from: string; subject: string; headers?: Record<string, string> }): Promise<void> {
  await journal.db.query(`INSERT INTO threads (id, account_id, gmail_thread_id, state, category, updated_at) VALUES ($1, $2, $3, 'done', $4, now())`, [uuid7(), journal.accountId, threadId, category]);
  if (stored) {
    await journal.db.query(
      `INSERT INTO messages (account_id, gmail_id, gmail_thread_id, label_ids, internal_date, headers, body_text, raw_size)
       VALUES ($1, $2, $3, ARRAY['INBOX'], now(), $4::jsonb, 'body', 100)`,
      [journal.accountId, `m-${threadId}`, threadId, JSON.stringify({ from: stored.from, subject: stored.subject, ...stored.headers })],
    );
  }
}

const undone = (threadId: string, sender: string, kind: 'archive' | 'mark_read' = 'archive') =>
  seedAction(journal.db, { accountId: journal.accountId, threadId, kind, state: 'undone', sender, reason: { source: 'rule', ruleId: 'builtin:list-unsubscribe' }, subject: `About ${threadId}` });

beforeAll(async () => {
  journal = await openJournal('memory-test@durable-inbox.test');
  await setCategoryActions(journal.db, journal.accountId, 'newsletter', [{ kind: 'add_label', argument: 'Newsletters' }, { kind: 'archive' }]);
});

afterAll(async () => {
  await journal?.close();
});

describe('triage lesson derivation', () => {
  it('waits for the threshold of distinct threads, and reads stored messages in the dry run', async () => {
    const sender = 'digest@shop.example';
    await thread('t-shop-1', 'newsletter', { from: `Shop <${sender}>`, subject: 'Deals 1', headers: { 'list-unsubscribe': '<mailto:u@shop.example>' } });
    await thread('t-shop-2', 'newsletter', { from: `Shop <${sender}>`, subject: 'Deals 2', headers: { 'list-unsubscribe': '<mailto:u@shop.example>' } });
    await thread('t-other', 'newsletter', { from: 'Other <x@other.example>', subject: 'Other', headers: { 'list-unsubscribe': '<mailto:u@other.example>' } });
    await undone('t-shop-1', sender);
    expect((await deriveTriageLessons(journal.db, { accountId: journal.accountId, settings })).changed).toEqual([]);
    // The same thread corrected twice is still one thread.
    await undone('t-shop-1', sender, 'mark_read');
    expect((await deriveTriageLessons(journal.db, { accountId: journal.accountId, settings })).changed).toEqual([]);
    await undone('t-shop-2', sender);
    const { changed } = await deriveTriageLessons(journal.db, { accountId: journal.accountId, settings });
    expect(changed).toHaveLength(1);
    const lesson = (await loadLesson(journal.db, changed[0]!))!;
    // mark_read was undone once only and is not what newsletters get: only archive goes.
    expect(lesson.current.rule).toEqual({ category: 'newsletter', actions: [{ kind: 'add_label', argument: 'Newsletters' }] });
    expect(await deriveTriageLessons(journal.db, { accountId: journal.accountId, settings: { ...settings, enabled: false } })).toEqual({ changed: [], senders: 0 });

    const result = await dryRunRuleChange(journal.db, {
      accountId: journal.accountId,
      change: { add: { id: 'dry-run', scope: 'sender', scopeRef: sender, kind: 'deterministic', category: 'newsletter', actions: lesson.current.rule!.actions, priority: 0, enabled: true } },
      since: new Date(Date.now() - settings.dryRunWindowMs),
    });
    expect(result).toMatchObject({ threads: 3, fromJournal: 0, recategorised: 0, actedOnDifferently: 2 });
    expect(result.examples.map((e) => e.before.ruleId)).toEqual(['builtin:list-unsubscribe', 'builtin:list-unsubscribe']);
    const replay = await replayRules(journal.db, { accountId: journal.accountId, since: new Date(Date.now() - 86_400_000) });
    expect(replay).toMatchObject({ threads: 3, decidedBy: { 'builtin:list-unsubscribe': 3 }, differ: 0 });
  });

  it('keeps one triage lesson in force per sender: accepting a newer one supersedes the older and removes its rule', async () => {
    const sender = 'promo@store.example';
    const base = { accountId: journal.accountId, kind: 'triage' as const, scope: 'sender' as const, scopeRef: sender, evidence: [], createdBy: 'learning' };
    const first = (await proposeLesson(journal.db, { ...base, key: 'k-store-1', text: 'no archive', rule: { category: 'newsletter', actions: [{ kind: 'add_label', argument: 'Newsletters' }] } })).lesson;
    const second = (await proposeLesson(journal.db, { ...base, key: 'k-store-2', text: 'nothing at all', rule: { category: 'newsletter', actions: [] } })).lesson;
    const a = (await acceptLesson(journal.db, first.id, 'cli')).lesson;
    const b = (await acceptLesson(journal.db, second.id, 'page')).lesson;
    const rules = await journal.db.query<{ id: string; actions: unknown }>(`SELECT id, actions FROM rules WHERE scope_ref = $1`, [sender]);
    expect(rules).toEqual([{ id: b.ruleId, actions: [] }]);
    expect((await loadLesson(journal.db, a.id))!.state).toBe('reverted');
    expect((await lessonEvents(journal.db, a.id)).map((e) => e.event)).toEqual(['proposed', 'accepted', 'superseded']);
  });
});

describe('lessons from reclassified threads', () => {
  it('proposes a sender rule once two of its threads were reclassified into the same category', async () => {
    const sender = 'ops@vendor.example';
    await setCategoryActions(journal.db, journal.accountId, 'automated', [{ kind: 'mark_read' }]);
    const decide = async (threadId: string, kind: string, source: string, text: string) =>
      journal.db.query(
        `INSERT INTO decisions (account_id, thread_id, kind, source, detail) SELECT $1, id, $3, $4::decision_source, jsonb_build_object('text', $5::text) FROM threads WHERE gmail_thread_id = $2`,
        [journal.accountId, threadId, kind, source, text],
      );
    for (const t of ['t-ops-1', 't-ops-2']) {
      await thread(t, 'automated', { from: `Ops <${sender}>`, subject: `Job ${t} finished` });
      await decide(t, 'classify', 'llm', 'needs_response (0.62): asks about a job');
      await decide(t, 'reclassify', 'user', 'classify again (was needs_response)');
      await decide(t, 'classify', 'llm', 'automated (0.93): a job notice');
      if (t === 't-ops-1') expect((await deriveTriageLessons(journal.db, { accountId: journal.accountId, settings })).changed).toEqual([]);
    }
    // A reclassify that did not change the category teaches nothing.
    await thread('t-ops-3', 'automated', { from: `Ops <${sender}>`, subject: 'Job 3' });
    await decide('t-ops-3', 'classify', 'llm', 'automated (0.9): notice');
    await decide('t-ops-3', 'reclassify', 'user', 'classify again (was automated)');
    await decide('t-ops-3', 'classify', 'llm', 'automated (0.9): notice');

    const { changed } = await deriveTriageLessons(journal.db, { accountId: journal.accountId, settings });
    expect(changed).toHaveLength(1);
    const lesson = (await loadLesson(journal.db, changed[0]!))!;
    expect(lesson).toMatchObject({ scope: 'sender', scopeRef: sender, current: { rule: { category: 'automated', actions: [{ kind: 'mark_read' }] } } });
    expect(lesson.current.text).toBe(`mail from ${sender}: automated, as you reclassified it (then: mark_read)`);
    expect(lesson.current.evidence.map((e) => [e.source, e.threadId, e.category])).toEqual([
      ['reclassified', 't-ops-1', 'automated'],
      ['reclassified', 't-ops-2', 'automated'],
    ]);
    // Once accepted, the rule gives the sender's mail that category: nothing more to propose.
    await acceptLesson(journal.db, lesson.id, 'cli');
    expect((await deriveTriageLessons(journal.db, { accountId: journal.accountId, settings })).changed).toEqual([]);
  });
});

describe('writing lessons', () => {
  it('versions a writing lesson: edits and restores add versions, accepting writes no rule, a rule edit is refused', async () => {
    const { lesson } = await proposeLesson(journal.db, { accountId: journal.accountId, kind: 'preference', scope: 'domain', scopeRef: 'partner.example', text: 'Sign off with "Best, Ann".', evidence: [], createdBy: 'cli' });
    const edited = await editLesson(journal.db, lesson.id, { text: 'Sign off with "Cheers, Ann".' }, 'cli');
    expect(edited.version).toBe(2);
    const restored = await restoreVersion(journal.db, lesson.id, 1, 'cli');
    expect(restored).toMatchObject({ version: 3, current: { text: 'Sign off with "Best, Ann".', revertOf: 1 } });
    await expect(editLesson(journal.db, lesson.id, { rule: { category: 'fyi', actions: [] } }, 'cli')).rejects.toBeInstanceOf(LessonChangeError);
    const accepted = (await acceptLesson(journal.db, lesson.id, 'cli')).lesson;
    expect(accepted.ruleId).toBeUndefined();
    expect(await listLessons(journal.db, { kind: 'preference', state: 'accepted' })).toHaveLength(1);
  });

  it('tells whether a rule change widens what the assistant does on its own', () => {
    expect(widens([{ kind: 'add_label', argument: 'X' }, { kind: 'archive' }], [{ kind: 'add_label', argument: 'X' }])).toBe(false);
    expect(widens([{ kind: 'mark_read' }], [{ kind: 'archive' }])).toBe(true);
    expect(widens([], [{ kind: 'forward', argument: 'a@b.example' }])).toBe(true);
  });
});
