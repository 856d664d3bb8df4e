// The demo's triage lesson: two demo newsletters in the Gmail emulator, their moved-back corrections
// seeded in Postgres, and the real derivation proposes "do not archive" for the demo shop, once.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { startGmailEmulator, type RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { DEMO_NEWS_SENDER, deliverDemoNewsletters, ensureDemoTriageLesson } from '../../src/dev/demo-lessons.js';
import { listLessons } from '../../src/learning/memory.js';

const settings = { enabled: true, triageLessonAfter: 2, lookbackMs: 60 * 86_400_000, dryRunWindowMs: 30 * 86_400_000 };
const email = `demo-${randomUUID().slice(0, 8)}@durable-inbox.test`;
let gmail: RunningGmailEmulator;
let prisma: PrismaClient;
let accountId: string;

beforeAll(async () => {
  gmail = await startGmailEmulator({ quota: false });
  await gmail.control.createAccount({ email, name: 'Demo User' });
  prisma = createPrismaClient(inject('databaseUrl'));
  accountId = (await prisma.account.create({ data: { email } })).id;
});

afterAll(async () => {
  await prisma?.lesson.deleteMany({ where: { accountId } });
  await prisma?.account.deleteMany({ where: { id: accountId } });
  await prisma?.$disconnect();
  await gmail?.close();
});

describe('the demo triage lesson', () => {
  it('waits for the user after the demo newsletters, once', async () => {
    expect(await ensureDemoTriageLesson(gmail, prisma, accountId, email, settings)).toEqual([]); // no newsletters yet
    await deliverDemoNewsletters(gmail, email);
    const [id] = await ensureDemoTriageLesson(gmail, prisma, accountId, email, settings);
    const lessons = await listLessons(prismaExecutor(prisma), { accountId });
    expect(lessons).toHaveLength(1);
    expect(lessons[0]).toMatchObject({ id, state: 'proposed', scopeRef: DEMO_NEWS_SENDER });
    expect(lessons[0]!.current.text).toBe(`mail from ${DEMO_NEWS_SENDER}: do not archive (still newsletter; then: add_label:Newsletters)`);
    expect(lessons[0]!.current.evidence.map((e) => e.source)).toEqual(['moved_back', 'moved_back']);
    // A restart seeds and proposes nothing again.
    expect(await ensureDemoTriageLesson(gmail, prisma, accountId, email, settings)).toEqual([]);
    expect(await listLessons(prismaExecutor(prisma), { accountId })).toHaveLength(1);
  });
});
