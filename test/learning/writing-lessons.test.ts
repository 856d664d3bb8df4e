// Writing lessons end to end: real thread workflows on the dev server draft replies in the Gmail
// emulator; the user edits (a sign-off of their own instead of ours) and sends them; the thread
// workflow keeps our draft beside what was sent as evidence; the learning workflow asks the
// Anthropic emulator (its deterministic stand-in) for lessons; the user accepts one and rejects the
// other through the memory CLI; the next draft's prompt holds the accepted lesson, `threads show`
// lists it, and after a revert it is gone. Rework instructions are evidence too, and retention
// deletes the evidence after its bound while the lesson keeps its provenance.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMemoryCli } from '../../src/cli/memory.js';
import { runThreadsCli } from '../../src/cli/threads.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { listLessons, loadLesson } from '../../src/learning/memory.js';
import { lineDiff } from '../../src/learning/writing-evidence.js';
import { retentionWorkflow } from '../../src/retention/retention-workflow.js';
import { LEARNING_SCHEDULE_ID, scheduleDefinitions } from '../../src/schedules/schedules.js';
import { waitUntil } from '../helpers/wait-until.js';
import { worded, writingLessons } from '../../emulators/anthropic/learning.js';
import { buildWritingLessonsPrompt } from '../../src/learning/writing-lessons.js';
import type { InboxHarness } from '../helpers/inbox-harness.js';
import { startWritingWorld, type WritingUser, type WritingWorld } from '../helpers/writing-user.js';
import { recordHistory, recordWorkflowHistory } from '../helpers/histories.js';

const tag = randomUUID().slice(0, 8);
const SIGN_OFF = 'Cheers, Sam';
let world: WritingWorld;
let h: InboxHarness;

const db = () => prismaExecutor(h.prisma);

async function cli(entry: typeof runMemoryCli, ...argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await entry(h.cfg, argv, { out: (l) => lines.push(l) });
  return { code, out: lines.join('\n') };
}

/** The user in the Gmail emulator (test/helpers/writing-user.ts): questions drafted, drafts edited and sent, rework typed. */
let user: WritingUser;
const draftOf = (threadId: string) => user.draftOf(threadId);
const drafted = (from: string, subject: string) => user.drafted(from, subject);
const send = (threadId: string, edit?: (body: string) => string) => user.send(threadId, edit);

const ownSignOff = (body: string) => body.replace('Best regards', SIGN_OFF);

const evidenceRows = () => h.prisma.writingEvidence.findMany({ where: { accountId: h.accountId }, orderBy: { createdAt: 'asc' } });

/** One learning run for this file's account (the shared test database holds other files' accounts too). */
const learn = () => user.learn({ announce: false });

/** The system prompt of the drafting request that answered `subject`. */
function draftPromptFor(subject: string): string {
  const requests = h.anthropic.recentRequests().filter((r) => {
    const body = r.body as { tools?: unknown; messages: { content: unknown }[]; system?: unknown };
    return !body.tools && JSON.stringify(body.messages).includes(subject);
  });
  expect(requests.length, `a drafting request for ${subject}`).toBeGreaterThan(0);
  return String((requests.at(-1)!.body as { system?: unknown }).system ?? '');
}

beforeAll(async () => {
  world = await startWritingWorld();
  ({ h, user } = world);
});

afterAll(async () => {
  await world?.close();
});

describe('the line diff of our draft and what was sent', () => {
  it('finds the lines added and removed, and a greeting or sign-off the user added', () => {
    const ours = 'Hi Ann,\n\nThanks for asking. I hope this finds you well.\n\nBest regards';
    const sent = 'Hey Ann,\n\nThanks for asking.\n\nCheers, Sam\n\n> quoted text';
    expect(lineDiff(ours, sent)).toEqual({
      added: ['Hey Ann,', 'Thanks for asking.', 'Cheers, Sam'],
      removed: ['Hi Ann,', 'Thanks for asking. I hope this finds you well.', 'Best regards'],
      opens: 'Hey Ann,',
      closes: 'Cheers, Sam',
    });
    expect(lineDiff(ours, ours)).toEqual({ added: [], removed: [] });
  });
});

describe("the emulator's stand-in for a model proposing writing lessons", () => {
  const at = new Date('2026-11-01T10:00:00Z');
  const sent = (id: string, sender: string, first: string) => ({
    id, threadId: `t-${id}`, source: 'sent' as const, sender, subject: 's', draft: '', final: '', edited: true, learned: false, at,
    diff: { added: [first, 'Thanks, Sam'], removed: ['Hi Ann,', 'Best regards'], opens: first, closes: 'Thanks, Sam' },
  });
  const prompt = (existing: string[] = []) =>
    buildWritingLessonsPrompt({
      evidence: [sent('a', 'ann@acme.example', 'Hey Ann,'), sent('b', 'bo@acme.example', 'Hey Bo,'), sent('c', 'cy@other.example', 'Dear Cy,')],
      existing: existing.map((text) => ({ kind: 'preference', scope: 'account', state: 'rejected', current: { text } }) as never),
      maxInputTokens: 4000,
    });
  const text = (p: ReturnType<typeof prompt>) => `${p.system}\n${p.user}`;

  it('proposes only what repeats, scoped to what the items share, and nothing the user has already', () => {
    const { lessons } = writingLessons(text(prompt()));
    expect(lessons).toEqual([
      { kind: 'preference', aspect: 'sign_off', scope: 'account', text: worded('signOff', 'Thanks, Sam'), value: 'Thanks, Sam', evidence: ['E1', 'E2', 'E3'] },
      { kind: 'preference', aspect: 'greeting', scope: 'domain', scopeRef: 'acme.example', text: worded('greeting', 'Hey'), value: 'Hey', evidence: ['E2', 'E3'] },
      { kind: 'preference', aspect: 'wording', scope: 'account', text: worded('leaveOut', 'Best regards'), evidence: ['E1', 'E2', 'E3'] },
      { kind: 'preference', aspect: 'wording', scope: 'account', text: worded('leaveOut', 'Hi Ann,'), evidence: ['E1', 'E2', 'E3'] },
    ]);
    expect(writingLessons(text(prompt([worded('leaveOut', 'Best regards'), worded('signOff', 'Thanks, Sam')]))).lessons.map((l) => l.text)).toEqual([
      worded('greeting', 'Hey'),
      worded('leaveOut', 'Hi Ann,'),
    ]);
  });
});

describe('writing lessons from drafts the user edited and sent', () => {
  let threads: string[];
  let signOff: string;
  let leaveOut: string;

  it('keeps our draft beside what the user sent, edited or not, with the diff', async () => {
    threads = [await drafted(`Ann <ann@north-${tag}.example>`, 'Q3 report'), await drafted(`Bo <bo@south-${tag}.example>`, 'Q4 plan')];
    for (const threadId of threads) await send(threadId, ownSignOff);
    const unedited = await drafted(`Cy <cy@west-${tag}.example>`, 'Budget');
    await send(unedited);

    const rows = await evidenceRows();
    expect(rows.map((r) => [r.gmailThreadId, r.source, r.edited])).toEqual([
      [threads[0], 'sent', true],
      [threads[1], 'sent', true],
      [unedited, 'sent', false],
    ]);
    expect(rows[0]).toMatchObject({ sender: `ann@north-${tag}.example`, diff: { added: [SIGN_OFF], removed: ['Best regards'], closes: SIGN_OFF } });
    expect(rows[0]!.draft).toContain('Best regards');
    expect(rows[0]!.final).toContain(SIGN_OFF);
    await recordHistory(h, threads[0]!, 'thread-sent-edited-evidence');
  });

  it('the learning workflow proposes lessons from the edits, once, with their evidence', async () => {
    const { handle, result } = await learn();
    expect(result.skipped.filter((s) => s.accountId === h.accountId)).toEqual([]);
    await recordWorkflowHistory(handle, 'learning-writing-proposed');

    const lessons = await listLessons(db(), { accountId: h.accountId });
    expect(result.proposed).toEqual(expect.arrayContaining(lessons.map((l) => l.id)));
    expect(lessons.map((l) => [l.kind, l.scope, l.state, l.current.text]).sort()).toEqual([
      ['preference', 'account', 'proposed', `End every reply with "${SIGN_OFF}".`],
      ['preference', 'account', 'proposed', worded('leaveOut', 'Best regards')],
    ]);
    signOff = lessons.find((l) => l.current.text.startsWith('End'))!.id;
    leaveOut = lessons.find((l) => l.current.text === worded('leaveOut', 'Best regards'))!.id;
    const evidence = (await loadLesson(db(), signOff))!.current.evidence;
    expect(evidence.map((e) => [e.source, e.kind, e.threadId]).sort()).toEqual(threads.map((t) => ['sent', 'sent_edited', t]).sort());
    expect(evidence.every((e) => e.evidenceId && e.argument === '+1 -1 line(s)')).toBe(true);

    // The model saw the diffs, not whole mails; a second tick has no new evidence and asks nothing.
    const asked = () => h.anthropic.recentRequests().filter((r) => JSON.stringify(r.body).includes('propose_writing_lessons') && JSON.stringify(r.body).includes(tag));
    expect(asked()).toHaveLength(1);
    expect(JSON.stringify(asked()[0]!.body)).toContain(`<added position=\\"last\\">${SIGN_OFF}</added>`);
    expect(JSON.stringify(asked()[0]!.body)).not.toContain('Could you send me');
    const again = (await learn()).result;
    expect(again.proposed.filter((id) => lessons.some((l) => l.id === id))).toEqual([]);
    expect(asked()).toHaveLength(1);
    expect((await listLessons(db(), { accountId: h.accountId })).map((l) => l.version)).toEqual([1, 1]);

    const shown = await cli(runMemoryCli, 'show', signOff);
    expect(shown.out).toContain('evidence   2 correction(s)');
    expect(shown.out).toContain('sent sent_edited:+1 -1 line(s)');
    expect(shown.out).toContain(`      + ${SIGN_OFF}\n      - Best regards`); // the edit itself, while the evidence is kept
  });

  it('an accepted lesson reaches the next draft\'s prompt, and threads show lists it; a rejected one does not', async () => {
    expect((await cli(runMemoryCli, 'accept', signOff)).code).toBe(0);
    expect((await cli(runMemoryCli, 'reject', leaveOut)).code).toBe(0);

    const threadId = await drafted(`Di <di@east-${tag}.example>`, 'Q1 forecast');
    const system = draftPromptFor('Q1 forecast');
    expect(system).toContain(`- End every reply with "${SIGN_OFF}".`);
    expect(system).not.toContain(worded('leaveOut', 'Best regards'));
    expect((await draftOf(threadId)).body.trim().endsWith(SIGN_OFF)).toBe(true); // the stand-in follows it

    const decision = await h.prisma.decision.findFirst({ where: { accountId: h.accountId, kind: 'draft', thread: { gmailThreadId: threadId } } });
    expect(decision?.detail).toMatchObject({ lessons: [`${signOff}@1`] });
    const shown = await cli(runThreadsCli, 'show', threadId);
    expect(shown.out).toContain('lessons used');
    expect(shown.out).toMatch(new RegExp(`draft {2}${signOff}@1 {2}End every reply with "${SIGN_OFF}"\\.`));
  });

  it('an edited lesson reaches the prompt as its new version; a reverted one no longer does', async () => {
    expect((await cli(runMemoryCli, 'edit', signOff, '--text', `End every reply with "${SIGN_OFF}" on its own line.`)).code).toBe(0);
    const edited = await drafted(`Ed <ed@east-${tag}.example>`, 'Q2 forecast');
    expect(draftPromptFor('Q2 forecast')).toContain(`- End every reply with "${SIGN_OFF}" on its own line.`);
    expect((await h.prisma.decision.findFirst({ where: { kind: 'draft', thread: { gmailThreadId: edited, accountId: h.accountId } } }))?.detail).toMatchObject({ lessons: [`${signOff}@2`] });

    expect((await cli(runMemoryCli, 'revert', signOff)).code).toBe(0);
    const threadId = await drafted(`Fay <fay@east-${tag}.example>`, 'Q3 forecast');
    const system = draftPromptFor('Q3 forecast');
    expect(system).not.toContain('What the user taught you');
    expect(system).not.toContain(SIGN_OFF);
    expect((await draftOf(threadId)).body).toContain('Best regards');
    expect((await cli(runThreadsCli, 'show', threadId)).out).not.toContain('lessons used');
  });

  it('keeps the rework instructions the user typed as evidence', async () => {
    for (const subject of ['Contract', 'Contract renewal']) {
      const threadId = await drafted(`Gus <gus@north-${tag}.example>`, subject);
      await user.rework(threadId, 'Mention the invoice number');
      const row = (await evidenceRows()).find((r) => r.gmailThreadId === threadId);
      expect(row).toMatchObject({ source: 'rework', edited: true, final: 'Mention the invoice number', sender: `gus@north-${tag}.example` });
      expect(row!.draft).toContain('Best regards');
    }
  });

  it('the learning Schedule proposes a procedure for the sender from the repeated rework instructions', async () => {
    const prefix = `test-${tag}-`;
    const [schedule] = scheduleDefinitions({
      retentionDays: 90,
      taskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
      idPrefix: prefix,
      learning: { every: '365 days', llmTaskQueue: h.cfg.LLM_TASK_QUEUE },
    }).filter((d) => d.scheduleId === `${prefix}${LEARNING_SCHEDULE_ID}`);
    const handle = await h.client.schedule.create(schedule!);
    try {
      await handle.trigger();
      const lesson = await waitUntil('the procedure proposed', async () =>
        (await listLessons(db(), { accountId: h.accountId, kind: 'procedure' }))[0], { timeoutMs: 30_000 });
      expect(lesson).toMatchObject({ scope: 'sender', scopeRef: `gus@north-${tag}.example`, state: 'proposed', current: { text: 'Mention the invoice number.' } });
      expect(lesson.current.evidence.map((e) => [e.source, e.kind])).toEqual([['rework', 'rework'], ['rework', 'rework']]);
    } finally {
      await handle.delete();
    }
  });

  it('retention deletes the evidence after its bound; the lesson keeps its provenance', async () => {
    await h.prisma.writingEvidence.updateMany({ where: { accountId: h.accountId, gmailThreadId: { in: threads } }, data: { createdAt: new Date(Date.now() - 15 * 86_400_000) } });
    const result = await h.client.workflow.execute(retentionWorkflow, {
      taskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
      workflowId: `retention-${tag}`,
      args: [{ retentionDays: 3650, evidenceDays: 14 }],
    });
    expect(result.evidenceDeleted).toBeGreaterThanOrEqual(2);
    const left = await evidenceRows();
    expect(left.some((r) => threads.includes(r.gmailThreadId))).toBe(false);
    expect(left.length).toBeGreaterThanOrEqual(2); // the recent ones stay
    const lesson = (await loadLesson(db(), signOff))!;
    expect(lesson.current.evidence.map((e) => e.threadId).sort()).toEqual([...threads].sort());
    expect(JSON.stringify(lesson.current.evidence)).not.toContain('Best regards');
    const shown = await cli(runMemoryCli, 'show', signOff);
    expect(shown.out).toContain('(its text is deleted: evidence is kept LEARNING_EVIDENCE_DAYS days');
    expect(shown.out).not.toContain('- Best regards');
  });

  it('a spent daily budget skips the account for this tick; its evidence waits for the next', async () => {
    const threadId = await drafted(`Hal <hal@south-${tag}.example>`, 'Q4 numbers');
    await send(threadId, ownSignOff);
    const day = new Date(new Date().toISOString().slice(0, 10));
    const key = { accountId_day: { accountId: h.accountId, day } };
    const budget = h.cfg.DAILY_TOKEN_BUDGET;
    await h.prisma.tokenUsage.upsert({ where: key, create: { accountId: h.accountId, day, tokensIn: budget }, update: { tokensIn: { increment: budget } } });
    try {
      const { result } = await learn();
      expect(result.skipped.find((x) => x.accountId === h.accountId)?.reason).toMatch(/LlmPaused.*budget/);
      expect((await evidenceRows()).find((r) => r.gmailThreadId === threadId)?.learnedAt).toBeNull();
    } finally {
      await h.prisma.tokenUsage.update({ where: key, data: { tokensIn: { decrement: budget } } });
      await h.prisma.llmBreaker.deleteMany({ where: { accountId: h.accountId } });
    }
    const next = (await learn()).result;
    expect(next.skipped.filter((x) => x.accountId === h.accountId)).toEqual([]);
    expect((await evidenceRows()).find((r) => r.gmailThreadId === threadId)?.learnedAt).not.toBeNull();
    // The sign-off lesson exists (reverted): the same edits do not propose it again.
    expect((await listLessons(db(), { accountId: h.accountId, kind: 'preference' })).length).toBe(2);
  });

  it('memory learn runs the writing derivation for the account through the learning workflow, and only for it', async () => {
    // Another account has unread evidence: a run limited to this account leaves it for the Schedule.
    const other = await h.prisma.account.create({ data: { email: `other-${tag}@example.com` } });
    await h.prisma.writingEvidence.create({
      data: { accountId: other.id, gmailThreadId: `other-${tag}`, source: 'sent', key: `other-${tag}`, sender: 'x@y.example', draft: 'Hi', final: 'Hey', edited: true, diff: { added: ['Hey'], removed: ['Hi'] } },
    });
    try {
      for (const [name, subject] of [['Ivy', 'Q5 plan'], ['Jo', 'Q6 plan']] as const) {
        const threadId = await drafted(`${name} <${name.toLowerCase()}@west-${tag}.example>`, subject);
        await send(threadId, (body) => body.replace(/^Hi /, 'Hey '));
      }
      const learned = await cli(runMemoryCli, 'learn', '--account', h.email);
      expect(learned.code).toBe(0);
      expect(learned.out).toContain('triage lessons: 0 proposed or updated');
      expect(learned.out).toContain(`writing lessons: workflow learning-cli-${h.accountId}`);
      expect(learned.out).toMatch(/writing lessons: 1 proposed or updated from the new edits of 1 account\(s\)/);
      const greeting = (await listLessons(db(), { accountId: h.accountId, state: 'proposed' })).find((l) => l.current.text === 'Open every reply with "Hey" and the first name.');
      expect(greeting).toMatchObject({ kind: 'preference', scope: 'domain', scopeRef: `west-${tag}.example` });
      // The run was the learning workflow's, limited to this account, its LLM call through the LLM worker.
      const run = h.client.workflow.getHandle(`learning-cli-${h.accountId}`);
      expect((await run.result()).proposed).toEqual([greeting!.id]);
      expect((await h.prisma.writingEvidence.findUniqueOrThrow({ where: { key: `other-${tag}` } })).learnedAt).toBeNull();
      // Nothing new: the next `memory learn` asks the model nothing.
      const again = await cli(runMemoryCli, 'learn', '--account', h.email);
      expect(again.out).toMatch(/writing lessons: 0 proposed or updated from the new edits of 0 account\(s\)/);
    } finally {
      await h.prisma.writingEvidence.deleteMany({ where: { accountId: other.id } });
      await h.prisma.account.delete({ where: { id: other.id } });
    }
  });
});
