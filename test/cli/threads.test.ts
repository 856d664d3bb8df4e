// `npm run cli -- threads ...` against the real Postgres, over rows written by the thread
// workflow's own store activity (saveThread).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createStoreActivities } from '../../src/thread/store-activities.js';
import { runThreadsCli } from '../../src/cli/threads.js';
import { createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { cliRunner } from '../helpers/run-cli.js';

const tag = randomUUID().slice(0, 8);
let prisma: PrismaClient;
let account: { id: string; email: string };

const cli = cliRunner(runThreadsCli);

beforeAll(async () => {
  prisma = createPrismaClient(inject('databaseUrl'));
  account = await prisma.account.create({ data: { email: `threads-${tag}@example.com`, encryptedTokens: Buffer.from('unused') } });
  const store = createStoreActivities({ prisma });
  const at = '2026-11-22T10:00:00.000Z';
  await store.saveThread({
    accountId: account.id,
    threadId: `drafted-${tag}`,
    workflowRunId: randomUUID(),
    closed: false,
    memory: { state: 'drafted', category: 'needs_response', confidence: 0.9, draftId: 'r-1', reworkCount: 1, handledMessageIds: ['m1'] },
    decisions: [
      { seq: 0, decision: { at, kind: 'classify', source: 'llm', detail: 'needs_response (0.90): a question', model: 'claude-x', tokensIn: 120, tokensOut: 20 } },
      { seq: 1, decision: { at, kind: 'draft', source: 'llm', detail: 'draft r-1', model: 'claude-x', tokensIn: 300, tokensOut: 80 } },
    ],
  });
  await store.saveThread({
    accountId: account.id,
    threadId: `skipped-${tag}`,
    workflowRunId: randomUUID(),
    closed: false,
    memory: { state: 'skipped', category: 'newsletter', confidence: 1, reworkCount: 0, handledMessageIds: ['m2'] },
    decisions: [{ seq: 0, decision: { at, kind: 'classify', source: 'rules', ruleId: 'builtin:list-unsubscribe', detail: 'newsletter: List-Unsubscribe' } }],
  });
});

afterAll(async () => {
  await prisma.account.delete({ where: { id: account.id } });
  await prisma.$disconnect();
});

describe('threads cli', () => {
  it('lists an account’s threads, newest first, filtered by state', async () => {
    const all = await cli('list', '--account', account.email);
    expect(all.code).toBe(0);
    expect(all.out.split('\n')[0]).toMatch(/^UPDATED\s+ACCOUNT\s+THREAD\s+STATE\s+CATEGORY\s+CONFIDENCE\s+DRAFT\s+REWORKS$/);
    expect(all.out).toMatch(new RegExp(`${account.email}\\s+skipped-${tag}\\s+skipped\\s+newsletter\\s+1\\.00\\s+-\\s+0`));
    expect(all.out).toMatch(new RegExp(`${account.email}\\s+drafted-${tag}\\s+drafted\\s+needs_response\\s+0\\.90\\s+r-1\\s+1`));
    expect(all.out.indexOf(`skipped-${tag}`)).toBeLessThan(all.out.indexOf(`drafted-${tag}`)); // written last, listed first

    const drafted = await cli('list', '--account', account.id, '--state', 'drafted');
    expect(drafted.out).toContain(`drafted-${tag}`);
    expect(drafted.out).not.toContain(`skipped-${tag}`);
    expect((await cli('list', '--account', account.email, '--state', 'sent')).out).toBe('No threads.');
  });

  it('shows a thread with its decision log and where to find it', async () => {
    const shown = await cli('show', `drafted-${tag}`);
    expect(shown.code).toBe(0);
    const lines = shown.out.split('\n');
    expect(lines[0]).toBe(`thread drafted-${tag} of ${account.email}  (https://mail.google.com/mail/u/${encodeURIComponent(account.email)}/#all/drafted-${tag})`);
    expect(lines[1]).toMatch(/^state drafted, needs_response \(0\.90\), draft r-1, 1 rework\(s\), updated /);
    expect(lines[2]).toMatch(new RegExp(`^workflow thread/${account.id}/drafted-${tag} \\(last run [0-9a-f-]{36}\\)$`));
    expect(shown.out).toMatch(/classify\s+llm\s+needs_response \(0\.90\): a question\s+claude-x\s+120\/20/);
    expect(shown.out).toMatch(/draft\s+llm\s+draft r-1\s+claude-x\s+300\/80/);
  });

  it('refuses bad arguments with the reason and exit 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['list', '--state', 'done'], /--state: expected one of pending, skipped, needs_response, drafted/],
      [['list', '--limit', '0'], /--limit: expected 1 to 1000/],
      [['list', '--account', `nobody-${tag}@example.com`], /no account nobody-/],
      [['list', '--colour', 'red'], /Unknown option '--colour'/],
      [['show'], /show needs a thread id/],
      [['show', `missing-${tag}`], new RegExp(`no thread missing-${tag}`)],
      [['archive'], /^usage: npm run cli -- threads list/],
    ];
    for (const [argv, message] of cases) {
      const { code, out } = await cli(...argv);
      expect(code, argv.join(' ')).toBe(2);
      expect(out, argv.join(' ')).toMatch(message);
    }
  });
});
