// The core of `npm run bench -- learning` (bench/learning-user.ts) on a tiny run: the simulated
// user edits and sends our drafts through thread workflows, the Gmail and Anthropic emulators, and
// corrects a newsletter in Gmail, read by the sync; `memory learn` proposes lessons after the first
// block, the user reviews them through the memory CLI, and the second block's drafts need fewer
// edits, with no scope leak. Also the stand-in's lessons the bench relies on (a sentence cut out of a
// line, a line added before the sign-off), worded in any of its ways, and the drafting stand-in
// following them; and the scope check catching a lesson that leaks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HABITS, editDistance, judge, simulateUser, userReply } from '../../bench/learning-user.js';
import { lessonsInPrompt, WORDINGS, writingLessons } from '../../emulators/anthropic/learning.js';
import { draft } from '../../emulators/anthropic/responder.js';
import { buildWritingLessonsPrompt } from '../../src/learning/writing-lessons.js';
import { lineDiff } from '../../src/learning/writing-evidence.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { acceptLesson, proposeLesson } from '../../src/learning/memory.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';

describe("the stand-in's lessons for a cut sentence and an added line", () => {
  const email = (from: string, subject: string) => `<email>\nFrom: ${from}\nSubject: ${subject}\n\nCould you send it?\n</email>`;
  const ours = (from: string, subject: string) => draft(email(from, subject), { from, subject, body: 'Could you send it?' });

  it('proposes them from two edits and the drafting stand-in follows every lesson of the user', () => {
    const at = new Date('2026-11-01T10:00:00Z');
    const evidence = ['a', 'b'].map((id, n) => {
      const from = `${id}@${HABITS.link.domain}`;
      const draftText = ours(from, `Plan ${n}`);
      return { id, threadId: `t-${id}`, source: 'sent' as const, sender: from, subject: 's', draft: draftText, final: '', edited: true, learned: false, at, diff: lineDiff(draftText, userReply(draftText, HABITS.link.domain)) };
    });
    const prompt = buildWritingLessonsPrompt({ evidence, existing: [], maxInputTokens: 4000 });
    const texts = writingLessons(`${prompt.system}\n${prompt.user}`).lessons.map((l) => l.text);
    // Worded in one of the stand-in's ways each: what they say, not how.
    const taught = `What the user taught you about their writing:\n${texts.map((t) => `- ${t}`).join('\n')}\n`;
    expect(lessonsInPrompt(taught)).toMatchObject({ openWith: HABITS.greeting, closeWith: HABITS.signOff, addLines: [HABITS.link.line] });
    expect(lessonsInPrompt(taught).leaveOut).toContain(HABITS.cutSentence);
    for (const text of texts) expect(judge(text)).toBe('accept'); // the user recognises each as one of its habits
    // Every wording of each lesson is understood by the drafting stand-in.
    for (const way of [0, 1, 2] as const) {
      const each = `What the user taught you about their writing:\n- ${WORDINGS.signOff[way](HABITS.signOff)}\n- ${WORDINGS.greeting[way](HABITS.greeting)}\n- ${WORDINGS.leaveOut[way](HABITS.cutSentence)}\n- ${WORDINGS.addLine[way](HABITS.link.line)}\n- ${WORDINGS.language[way]('German')}\n`;
      expect(lessonsInPrompt(each)).toEqual({ openWith: HABITS.greeting, closeWith: HABITS.signOff, leaveOut: [HABITS.cutSentence], addLines: [HABITS.link.line], language: 'German' });
    }
    const from = `c@${HABITS.link.domain}`;
    const learned = draft(`${taught}${email(from, 'Plan 3')}`, { from, subject: 'Plan 3', body: 'Could you send it?' });
    expect(learned).toBe(userReply(learned, HABITS.link.domain));
    expect(editDistance(learned, userReply(ours(from, 'Plan 3'), HABITS.link.domain))).toBe(0);
  });
});

describe("the stand-in's language lesson for one domain", () => {
  const email = (from: string, subject: string) => `<email>\nFrom: ${from}\nSubject: ${subject}\n\nCould you send it?\n</email>`;
  const ours = (from: string, subject: string) => draft(email(from, subject), { from, subject, body: 'Could you send it?' });
  const { domain, language } = HABITS.language;

  it('learns that one domain is answered in German from two rewritten bodies, and the drafting stand-in writes it', () => {
    const at = new Date('2026-11-01T10:00:00Z');
    const item = (id: string, from: string, subject: string) => {
      const draftText = ours(from, subject);
      const final = userReply(draftText, from.split('@')[1]!);
      return { id, threadId: `t-${id}`, source: 'sent' as const, sender: from, subject, draft: draftText, final, edited: true, learned: false, at, diff: lineDiff(draftText, final) };
    };
    const one = item('a', `ann@${domain}`, 'Plan 1');
    expect(one.final).toContain('Danke für Ihre Nachricht zu "Plan 1".'); // the user's own German, not the stand-in's
    expect(one.final).not.toContain('Ich habe Ihre Anfrage'); // the sentence the user always cuts, cut before the body is rewritten
    expect(one.final.split('\n')[0]).toBe(`${HABITS.greeting} Ann,`);
    const lessonsOf = (evidence: ReturnType<typeof item>[]) => {
      const prompt = buildWritingLessonsPrompt({ evidence, existing: [], maxInputTokens: 4000 });
      return writingLessons(`${prompt.system}\n${prompt.user}`).lessons;
    };
    // Once is not a habit; the other domains' English replies teach no language.
    expect(lessonsOf([one, item('b', `bo@partner1.example`, 'Plan 2')]).map((l) => l.aspect)).not.toContain('language');
    const lesson = lessonsOf([one, item('c', `cy@${domain}`, 'Plan 3')]).find((l) => l.aspect === 'language');
    expect(lesson).toMatchObject({ kind: 'preference', scope: 'domain', scopeRef: domain, value: 'de', evidence: ['E1', 'E2'] });
    expect(lesson!.text).toContain(language);

    const taught = `What the user taught you about their writing:\n- ${lesson!.text}\n- Leave out "${HABITS.cutSentence}".\n- Open every reply with "${HABITS.greeting}" and the first name.\n- End every reply with "${HABITS.signOff}".\n`;
    expect(lessonsInPrompt(taught)).toMatchObject({ language });
    const from = `di@${domain}`;
    const learned = draft(`${taught}${email(from, 'Plan 4')}`, { from, subject: 'Plan 4', body: 'Could you send it?' });
    expect(learned).toBe(`${HABITS.greeting} Di,\n\nVielen Dank für Ihre E-Mail zu "Plan 4".\n\n${HABITS.signOff}`);
    // The user leaves a German line as it is; its own German for our English differs from the stand-in's.
    expect(editDistance(learned, userReply(learned, domain))).toBe(0);
    expect(editDistance(learned, userReply(ours(from, 'Plan 4'), domain))).toBeGreaterThan(0);
  });
});

describe('the learning bench on a tiny run', () => {
  let h: InboxHarness;
  beforeAll(async () => {
    h = await startInboxHarness();
    await h.startWorkers();
  });
  afterAll(async () => {
    await h?.prisma.rule.deleteMany({ where: { scope: 'sender', scopeRef: { in: [HABITS.keepSender, HABITS.unlabelSender] } } });
    await h?.prisma.learningCorrection.deleteMany({ where: { accountId: h.accountId } });
    await h?.prisma.lesson.deleteMany({ where: { accountId: h.accountId } });
    await h?.prisma.writingEvidence.deleteMany({ where: { accountId: h.accountId } });
    await h?.prisma.categoryActions.deleteMany({ where: { scopeRef: h.accountId } });
    await h?.close();
  });

  it('needs fewer edits in the second block once the lessons of the first are reviewed through the CLI; no scope leak', async () => {
    const [first, second] = await simulateUser(h, { threads: 6, block: 3, concurrency: 3 });
    expect(first!.drafts).toBe(3);
    expect(first!.unedited).toBe(0);
    expect(first!.alone).toEqual([]); // auto-accept off: every lesson went through memory accept
    expect(first!.accepted.some((t) => t.includes(`"${HABITS.signOff}"`))).toBe(true);
    expect(first!.accepted.some((t) => t.includes(HABITS.cutSentence))).toBe(true);
    expect(second!.meanEditDistance).toBeLessThan(first!.meanEditDistance);
    expect(second!.unedited).toBe(1);
    expect(second!.corrections).toBe(1); // moved back in Gmail, read by the sync: the sender's first, which teaches no rule yet
    expect(await h.prisma.learningCorrection.count({ where: { accountId: h.accountId, sender: HABITS.keepSender, source: 'moved_back' } })).toBe(1);
    expect([first!.scopeLeaks, second!.scopeLeaks]).toEqual([0, 0]);
    expect(first!.outOfScopeDrafts + second!.outOfScopeDrafts).toBeGreaterThan(0);
  });

  it("the scope check counts a domain's habit reaching other senders' drafts", async () => {
    // A lesson carrying the studio domain's line to the whole account, accepted by hand: every draft shows it.
    const db = prismaExecutor(h.prisma);
    const { lesson } = await proposeLesson(db, {
      accountId: h.accountId,
      kind: 'preference',
      scope: 'account',
      key: `writing:${h.accountId}:account::aspect:content:leak`,
      text: `Add the line "${HABITS.link.line}" before the sign-off.`,
      evidence: [],
      createdBy: 'cli',
    });
    await acceptLesson(db, lesson.id, 'cli');
    const [only] = await simulateUser(h, { threads: 3, block: 3, concurrency: 3 });
    expect(only!.outOfScopeDrafts).toBe(3);
    expect(only!.scopeLeaks).toBe(3);
  });
});
