// Writing lessons taking hold alone, and the ones that wait announced, end to end: real thread
// workflows draft in the Gmail emulator, the user edits and sends (or reworks) them, the learning
// workflow asks the Anthropic emulator's stand-in, which names each lesson's aspect. With the
// account's auto-accept off, every lesson waits and is announced on Discord (the emulator) once;
// at 2, a sign-off lesson confirmed on 2 threads is accepted by `learning`, journaled with why, and
// reaches the next draft's prompt, while a procedure from the same tick waits and is announced.
// The first tick's proposal answer is lost once: the retried tick announces what the first attempt proposed.
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { worded } from '../../emulators/anthropic/learning.js';
import type { RunningDiscordEmulator } from '../../emulators/discord/index.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { lessonAspect } from '../../src/learning/auto-accept.js';
import type { Lesson } from '../../src/learning/contracts.js';
import { lessonEvents, listLessons } from '../../src/learning/memory.js';
import { recordWorkflowHistory } from '../helpers/histories.js';
import type { InboxHarness } from '../helpers/inbox-harness.js';
import { startWritingWorld, type WritingUser, type WritingWorld } from '../helpers/writing-user.js';

let h: InboxHarness;
let world: WritingWorld;
let user: WritingUser;
let discord: RunningDiscordEmulator;
let webhookId: string;
const db = () => prismaExecutor(h.prisma);

const memory = (...argv: string[]) => user.memory(...argv);

const lessonWith = async (text: string): Promise<Lesson> => {
  const lesson = (await listLessons(db(), { accountId: h.accountId })).find((l) => l.current.text === text);
  expect(lesson, `a lesson "${text}"`).toBeDefined();
  return lesson!;
};

/** The Discord messages that name the lesson. */
const postedAbout = async (lessonId: string) => (await discord.control.messages(webhookId)).filter((m) => m.message.content.includes(lessonId));

/** Two questions from different domains, each answered with our draft's sign-off replaced by `signOff`. */
async function signedOff(signOff: string, subjects: [string, string]): Promise<string[]> {
  const threads = [await user.drafted(`Ann <ann@north.example>`, subjects[0]), await user.drafted(`Bo <bo@south.example>`, subjects[1])];
  for (const threadId of threads) await user.send(threadId, (body) => body.replace('Best regards', signOff));
  return threads;
}

/**
 * The first tick's proposal runs and its answer is lost, as when the worker dies after the lessons were
 * recorded and the evidence marked read: the retried tick must still announce them.
 */
let lostProposals = 0;
const loseFirstProposal: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      const out = await next(input);
      if (ctx.info.activityType === 'proposeWritingLessons' && lostProposals === 0) {
        lostProposals++;
        throw new Error('the worker lost the answer of proposeWritingLessons');
      }
      return out;
    },
  },
});

beforeAll(async () => {
  world = await startWritingWorld({ announce: true });
  ({ h, user } = world);
  await h.stopWorkers();
  await h.startWorkers({ activityInterceptors: [loseFirstProposal] });
  discord = world.discord!.emulator;
  webhookId = world.discord!.webhookId;
});

afterAll(async () => {
  await world?.close();
});

describe('writing lessons: auto-accept and announcements', () => {
  it('with auto-accept off, nothing takes hold alone: each lesson waits, named by its aspect, and is announced once', async () => {
    expect((await memory('auto-accept', '--account', h.email)).out).toContain('is off');
    await signedOff('Thanks, Sam', ['Q1 report', 'Q2 report']);
    const { result } = await user.learn();
    expect(result.skipped).toEqual([]);
    expect(lostProposals).toBe(1); // the tick below is the retry's

    const signOff = await lessonWith('End every reply with "Thanks, Sam".');
    const leaveOut = await lessonWith(worded('leaveOut', 'Best regards')); // the stand-in's wording of a free-text lesson
    expect([signOff.state, leaveOut.state]).toEqual(['proposed', 'proposed']);
    expect([lessonAspect(signOff), lessonAspect(leaveOut)]).toEqual(['sign_off', 'wording']);
    expect(signOff.key).toMatch(new RegExp(`^writing:${h.accountId}:account::aspect:sign_off:[0-9a-f]{24}$`));
    expect(new Set(signOff.current.evidence.map((e) => e.threadId)).size).toBe(2); // two confirmations, but the setting is off

    expect([...(result.announced ?? [])].sort()).toEqual([signOff.id, leaveOut.id].sort());
    for (const lesson of [signOff, leaveOut]) {
      const posted = await postedAbout(lesson.id);
      expect(posted).toHaveLength(1);
      // A writing lesson's message names its kind, aspect and scope, and quotes none of the mail its text comes from.
      expect(posted[0]!.message.content).toContain(`**Writing lesson proposed** (\`preference\`, \`${lessonAspect(lesson)}\`, ${lesson.current.typed ? 'typed' : 'free text'}, account), from 2 correction(s).`);
      expect(posted[0]!.message.content).not.toContain(lesson.current.text);
      expect(posted[0]!.message.content).toMatch(new RegExp(`<http://127\\.0\\.0\\.1:3999/approvals/l/${lesson.id}\\?exp=\\d+&sig=[\\w-]+>`));
      expect((await lessonEvents(db(), lesson.id)).map((e) => `${e.event}:${e.decidedBy}`)).toEqual(['proposed:learning', 'notified:learning']);
    }

    // A tick with no new evidence asks nothing and tells nothing again.
    const again = (await user.learn()).result;
    expect(again.announced).toBeUndefined();
    expect(await postedAbout(signOff.id)).toHaveLength(1);
  });

  it('at 2, a sign-off lesson confirmed on 2 threads takes hold alone and reaches the next draft; a procedure waits and is announced', async () => {
    expect((await memory('auto-accept', '--account', h.email, '--after', '2')).code).toBe(0);
    await signedOff('Cheers, Sam', ['Q3 report', 'Q4 report']);
    for (const subject of ['Contract', 'Contract renewal']) {
      await user.rework(await user.drafted(`Gus <gus@west.example>`, subject), 'Mention the invoice number');
    }
    const { handle, result } = await user.learn();
    expect(result.skipped).toEqual([]);
    await recordWorkflowHistory(handle, 'learning-writing-auto-accepted-announced');

    const signOff = await lessonWith('End every reply with "Cheers, Sam".');
    expect(signOff).toMatchObject({ kind: 'preference', scope: 'account', state: 'accepted' });
    expect(lessonAspect(signOff)).toBe('sign_off');
    const journal = await lessonEvents(db(), signOff.id);
    expect(journal.map((e) => `${e.event}:${e.decidedBy}`)).toEqual(['proposed:learning', 'accepted:learning']);
    expect(journal[1]!.note).toBe('taken without review: 2 confirmations, auto-accept after 2 (memory auto-accept)');
    expect(await postedAbout(signOff.id)).toEqual([]); // nothing waits for the user

    const procedure = await lessonWith('Mention the invoice number.');
    expect(procedure).toMatchObject({ kind: 'procedure', scope: 'sender', scopeRef: 'gus@west.example', state: 'proposed' });
    expect(lessonAspect(procedure)).toBe('procedure');
    expect(result.announced).toEqual([procedure.id]);
    expect(await postedAbout(procedure.id)).toHaveLength(1);

    // The lesson waiting from before the setting was on is not touched by evidence that does not confirm it.
    expect((await lessonWith('End every reply with "Thanks, Sam".')).state).toBe('proposed');

    // It takes hold like an accepted one: the next draft is written with it.
    const threadId = await user.drafted(`Di <di@east.example>`, 'Q1 forecast');
    expect((await user.draftOf(threadId)).body.trim().endsWith('Cheers, Sam')).toBe(true);
    const decision = await h.prisma.decision.findFirst({ where: { accountId: h.accountId, kind: 'draft', thread: { gmailThreadId: threadId } } });
    expect(decision?.detail).toMatchObject({ lessons: [`${signOff.id}@1`] });
  });
});
