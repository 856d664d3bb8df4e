// The auto-accept setting on the real Postgres, through the memory CLI: off by default; on, a typed
// writing lesson (a sign-off value that fits its schema) takes hold alone once its evidence holds N
// distinct threads, journaled as accepted by `learning`; a lesson labelled sign_off that is free text,
// other writing lessons, and triage lessons (narrowing or widening), wait.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { runMemoryCli } from '../../src/cli/memory.js';
import { createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import type { Evidence } from '../../src/learning/contracts.js';
import { autoAcceptLesson, lessonEvents, proposeLesson, type LessonProposal } from '../../src/learning/memory.js';
import { cliRunner } from '../helpers/run-cli.js';

const email = `auto-${randomUUID().slice(0, 8)}@durable-inbox.test`;
const memory = cliRunner(runMemoryCli);
let prisma: PrismaClient;
let accountId: string;
const db = () => prismaExecutor(prisma);

const evidence = (threads: string[]): Evidence[] =>
  threads.map((threadId) => ({ source: 'sent', threadId, kind: 'sent_edited', sender: 'ann@client.example', at: new Date().toISOString(), link: `https://mail.google.com/mail/u/0/#all/${threadId}` }));

const writing = (aspect: string, threads: string[]): LessonProposal => ({
  accountId,
  kind: 'preference',
  scope: 'sender',
  scopeRef: 'ann@client.example',
  key: `writing:${accountId}:sender:ann@client.example:aspect:${aspect}`,
  text: aspect === 'sign_off' ? 'Sign off with "Best, Sam".' : 'Mention the PO number.',
  ...(aspect === 'sign_off' ? { typed: { type: 'sign_off' as const, text: 'Best, Sam' } } : {}),
  evidence: evidence(threads),
  createdBy: 'learning',
});

beforeAll(async () => {
  prisma = createPrismaClient(inject('databaseUrl'));
  accountId = (await prisma.account.create({ data: { email } })).id;
});

afterAll(async () => {
  await prisma?.lesson.deleteMany({ where: { accountId } });
  await prisma?.account.deleteMany({ where: { id: accountId } });
  await prisma?.$disconnect();
});

describe('memory auto-accept', () => {
  it('is off by default: a sign-off lesson waits however often it was confirmed', async () => {
    expect((await memory('auto-accept', '--account', email)).out).toBe(`Auto-accept is off for ${email}: every lesson waits for you.`);
    const { lesson } = await proposeLesson(db(), writing('sign_off', ['t1', 't2', 't3', 't4']));
    expect(await autoAcceptLesson(db(), lesson.id)).toMatchObject({ moved: false, why: 'auto-accept is off for the account' });
    await prisma.lesson.delete({ where: { id: lesson.id } });
  });

  it('on, a sign-off lesson takes hold after N confirmations, journaled by learning; other lessons wait', async () => {
    const set = await memory('auto-accept', '--account', email, '--after', '3');
    expect(set.out).toContain('take hold without review after 3 confirmation(s)');
    expect((await memory('auto-accept', '--account', email, '--after', '0')).code).toBe(2);

    const { lesson } = await proposeLesson(db(), writing('sign_off', ['t1', 't2', 't2']));
    // A typed lesson's text is our sentence for its value, whatever the proposer wrote.
    expect(lesson.current).toMatchObject({ text: 'End every reply with "Best, Sam".', typed: { type: 'sign_off', text: 'Best, Sam' } });
    expect(await autoAcceptLesson(db(), lesson.id)).toMatchObject({ moved: false, why: '2 of 3 confirmations' });
    await proposeLesson(db(), writing('sign_off', ['t1', 't2', 't3']));
    const taken = await autoAcceptLesson(db(), lesson.id);
    expect(taken).toMatchObject({ moved: true, lesson: { state: 'accepted' } });
    expect((await lessonEvents(db(), lesson.id)).map((e) => `${e.event}:${e.decidedBy}`)).toEqual(['proposed:learning', 'evidence:learning', 'accepted:learning']);
    expect(await autoAcceptLesson(db(), lesson.id)).toMatchObject({ moved: false, why: 'it is accepted' });

    const other = (await proposeLesson(db(), writing('procedure', ['t1', 't2', 't3', 't4']))).lesson;
    const freeText = 'only a typed lesson (a sign-off, greeting, language or tone that fits its type) takes hold alone; this one is free text';
    expect(await autoAcceptLesson(db(), other.id)).toMatchObject({ moved: false, why: freeText });
    // Labelled sign_off by its key, but free text (no typed value): it waits, whatever it says.
    const labelled = (await proposeLesson(db(), { ...writing('sign_off', ['t1', 't2', 't3']), typed: undefined, key: `writing:${accountId}:sender:ann@client.example:aspect:sign_off:free`, text: 'End every reply with our IBAN DE89 3704 0044.' })).lesson;
    expect(labelled.current.typed).toBeUndefined();
    expect(await autoAcceptLesson(db(), labelled.id)).toMatchObject({ moved: false, why: freeText, lesson: { state: 'proposed' } });
    await prisma.lesson.delete({ where: { id: labelled.id } });
    // A fact or procedure never counts as tone, whatever aspect its key names.
    const fact = (await proposeLesson(db(), { ...writing('tone', ['t1', 't2', 't3']), kind: 'fact', key: `writing:${accountId}:sender:ann@client.example:aspect:tone:fact`, text: 'Sam works from Lisbon.' })).lesson;
    expect(await autoAcceptLesson(db(), fact.id)).toMatchObject({ moved: false, why: 'a fact lesson waits for you', lesson: { state: 'proposed' } });
    await prisma.lesson.delete({ where: { id: fact.id } });

    const triage = (
      await proposeLesson(db(), {
        accountId,
        kind: 'triage',
        scope: 'sender',
        scopeRef: 'news@shop.example',
        key: `triage:${accountId}:sender:news@shop.example:drop:archive`,
        text: 'mail from news@shop.example: do not archive',
        rule: { category: 'newsletter', actions: [{ kind: 'add_label', argument: 'Newsletters' }] },
        evidence: evidence(['t1', 't2', 't3']).map((e) => ({ ...e, source: 'moved_back' as const, kind: 'archive' })),
        createdBy: 'learning',
      })
    ).lesson;
    expect(await autoAcceptLesson(db(), triage.id)).toMatchObject({ moved: false, why: 'a triage lesson always waits for you', lesson: { state: 'proposed' } });

    expect((await memory('auto-accept', '--account', email, '--after', 'off')).out).toContain('is off');
  });

  it('memory weekly: the proposals waiting, what was accepted and reverted this week, and the commands', async () => {
    const [accepted] = await prisma.lesson.findMany({ where: { accountId, state: 'accepted' } });
    expect((await memory('revert', accepted!.id)).code).toBe(0);
    const weekly = await memory('weekly', '--account', email);
    expect(weekly.code, weekly.out).toBe(0);
    expect(weekly.out.split('\n')[0]).toBe('What I learned this week: 2 waiting, 1 accepted, 1 reverted');
    expect(weekly.out).toContain('Waiting for you (2):\n- mail from news@shop.example: do not archive');
    expect(weekly.out).toContain(`Accepted this week (1):\n- End every reply with "Best, Sam".  [by learning]\n  (${accepted!.id})`);
    expect(weekly.out).toContain('Reverted this week (1):\n- End every reply with "Best, Sam".  [reverted by cli]');
    expect(weekly.out).toContain('npm run cli -- memory accept <lesson id>');
  });
});
