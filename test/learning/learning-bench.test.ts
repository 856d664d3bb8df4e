// The core of `npm run bench -- learning` (bench/learning-user.ts) on a tiny run: the simulated
// user edits and sends our drafts through thread workflows, the Gmail and Anthropic emulators; the
// learning workflow proposes lessons after the first block, the user accepts them, and the second
// block's drafts need fewer edits. Also the stand-in's lessons the bench relies on (a sentence cut
// out of a line, a line added before the sign-off) and the drafting stand-in following them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HABITS, editDistance, simulateUser, userReply } from '../../bench/learning-user.js';
import { lessonsInPrompt, writingLessons } from '../../emulators/anthropic/learning.js';
import { draft } from '../../emulators/anthropic/responder.js';
import { buildWritingLessonsPrompt } from '../../src/learning/writing-lessons.js';
import { lineDiff } from '../../src/learning/writing-evidence.js';
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
    expect(texts).toEqual(expect.arrayContaining([
      `Leave out "${HABITS.cutSentence}".`,
      `Add the line "${HABITS.link.line}" before the sign-off.`,
      `Open every reply with "${HABITS.greeting}" and the first name.`,
      `End every reply with "${HABITS.signOff}".`,
    ]));

    const taught = `What the user taught you about their writing:\n${texts.map((t) => `- ${t}`).join('\n')}\n`;
    expect(lessonsInPrompt(taught)).toMatchObject({ openWith: HABITS.greeting, closeWith: HABITS.signOff, addLines: [HABITS.link.line] });
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
    expect(one.final).toContain('Vielen Dank für Ihre E-Mail zu "Plan 1".');
    expect(one.final).not.toContain('Ich habe Ihre Anfrage'); // the sentence the user always cuts, cut before the body is rewritten
    expect(one.final.split('\n')[0]).toBe(`${HABITS.greeting} Ann,`);
    const lessonsOf = (evidence: ReturnType<typeof item>[]) => {
      const prompt = buildWritingLessonsPrompt({ evidence, existing: [], maxInputTokens: 4000 });
      return writingLessons(`${prompt.system}\n${prompt.user}`).lessons;
    };
    // Once is not a habit; the other domains' English replies teach no language.
    expect(lessonsOf([one, item('b', `bo@partner1.example`, 'Plan 2')]).map((l) => l.text)).not.toContain(`Write every reply in ${language}.`);
    const lesson = lessonsOf([one, item('c', `cy@${domain}`, 'Plan 3')]).find((l) => l.text === `Write every reply in ${language}.`);
    expect(lesson).toMatchObject({ kind: 'preference', scope: 'domain', scopeRef: domain, evidence: ['E1', 'E2'] });

    const taught = `What the user taught you about their writing:\n- ${lesson!.text}\n- Leave out "${HABITS.cutSentence}".\n- Open every reply with "${HABITS.greeting}" and the first name.\n- End every reply with "${HABITS.signOff}".\n`;
    expect(lessonsInPrompt(taught)).toMatchObject({ language });
    const from = `di@${domain}`;
    const learned = draft(`${taught}${email(from, 'Plan 4')}`, { from, subject: 'Plan 4', body: 'Could you send it?' });
    expect(learned).toBe(`${HABITS.greeting} Di,\n\nVielen Dank für Ihre E-Mail zu "Plan 4".\n\n${HABITS.signOff}`);
    expect(editDistance(learned, userReply(learned, domain))).toBe(0);
    expect(editDistance(learned, userReply(ours(from, 'Plan 4'), domain))).toBe(0);
  });
});

describe('the learning bench on a tiny run', () => {
  let h: InboxHarness;
  beforeAll(async () => {
    h = await startInboxHarness();
    await h.startWorkers();
  });
  afterAll(async () => {
    await h?.prisma.rule.deleteMany({ where: { scope: 'sender', scopeRef: { in: [HABITS.keepSender, HABITS.protectedSender] } } });
    await h?.prisma.lesson.deleteMany({ where: { accountId: h.accountId } });
    await h?.prisma.writingEvidence.deleteMany({ where: { accountId: h.accountId } });
    await h?.prisma.categoryActions.deleteMany({ where: { scopeRef: h.accountId } });
    await h?.close();
  });

  it('needs fewer edits in the second block once the lessons of the first are accepted', async () => {
    const [first, second] = await simulateUser(h, { threads: 6, block: 3, concurrency: 3 });
    expect(first!.drafts).toBe(3);
    expect(first!.unedited).toBe(0);
    expect(first!.accepted).toEqual(expect.arrayContaining([`End every reply with "${HABITS.signOff}".`, `Leave out "${HABITS.cutSentence}".`]));
    expect(second!.meanEditDistance).toBeLessThan(first!.meanEditDistance);
    expect(second!.unedited).toBe(1);
    expect(second!.corrections).toBe(1); // the sender's first newsletter: one correction teaches no rule yet
  });
});
