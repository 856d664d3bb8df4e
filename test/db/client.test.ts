import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDatabasePool, createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { waitUntil } from '../helpers/wait-until.js';
import { Prisma } from '../../src/generated/prisma/client.js';

let prisma: PrismaClient;
const email = () => `client-test-${randomBytes(6).toString('hex')}@example.com`;

beforeAll(() => {
  prisma = createPrismaClient(inject('databaseUrl'));
});

afterAll(async () => {
  await prisma.$disconnect();
});

describe('Prisma Client on the test database', () => {
  it('creates, reads, updates and deletes an account with its encrypted token blob', async () => {
    const tokens = randomBytes(48);
    const created = await prisma.account.create({ data: { email: email(), encryptedTokens: tokens } });
    expect(created.status).toBe('active');
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/);

    const read = await prisma.account.findUniqueOrThrow({ where: { email: created.email } });
    expect(Buffer.from(read.encryptedTokens!)).toEqual(tokens);

    const updated = await prisma.account.update({
      where: { id: created.id },
      data: { status: 'needs_reauth', historyId: '12345', watchExpiration: new Date('2030-01-01T00:00:00Z') },
    });
    expect(updated).toMatchObject({ status: 'needs_reauth', historyId: '12345' });
    expect(updated.updatedAt.getTime()).toBeGreaterThanOrEqual(created.updatedAt.getTime());

    await prisma.account.delete({ where: { id: created.id } });
    expect(await prisma.account.findUnique({ where: { id: created.id } })).toBeNull();
  });

  it('keeps one thread per Gmail thread id and account, and cascades deletes to threads and decisions', async () => {
    const account = await prisma.account.create({ data: { email: email() } });
    const thread = await prisma.thread.create({
      data: { accountId: account.id, gmailThreadId: 'gmail-thread-1', state: 'classifying', confidence: 0.75 },
    });
    const duplicate = await prisma.thread
      .create({ data: { accountId: account.id, gmailThreadId: 'gmail-thread-1', state: 'new' } })
      .catch((err: unknown) => err);
    expect(duplicate).toBeInstanceOf(Prisma.PrismaClientKnownRequestError);
    expect(duplicate).toMatchObject({ code: 'P2002' });

    const decision = await prisma.decision.create({
      data: {
        accountId: account.id,
        threadId: thread.id,
        kind: 'classify',
        source: 'llm',
        model: 'claude-sonnet-4-5',
        tokensIn: 1200,
        tokensOut: 40,
        detail: { category: 'needs_response', reasons: ['question asked'] },
      },
    });
    expect(typeof decision.id).toBe('bigint');
    const log = await prisma.decision.findMany({ where: { threadId: thread.id } });
    expect(log.map((d) => d.detail)).toEqual([{ category: 'needs_response', reasons: ['question asked'] }]);

    await prisma.account.delete({ where: { id: account.id } });
    expect(await prisma.thread.count({ where: { accountId: account.id } })).toBe(0);
    expect(await prisma.decision.count({ where: { accountId: account.id } })).toBe(0);
  });

  it('adds up token usage per account and day with an upsert', async () => {
    const account = await prisma.account.create({ data: { email: email() } });
    const day = new Date('2026-03-01T00:00:00Z');
    const spend = (tokensIn: number, tokensOut: number) =>
      prisma.tokenUsage.upsert({
        where: { accountId_day: { accountId: account.id, day } },
        create: { accountId: account.id, day, tokensIn, tokensOut },
        update: { tokensIn: { increment: tokensIn }, tokensOut: { increment: tokensOut } },
      });
    await spend(100, 10);
    const total = await spend(50, 5);
    expect(total).toMatchObject({ tokensIn: 150, tokensOut: 15 });
    expect(total.day.toISOString()).toBe('2026-03-01T00:00:00.000Z');
    await prisma.account.delete({ where: { id: account.id } });
  });

  it('stores rules and push rejections with JSON details', async () => {
    const rule = await prisma.rule.create({
      data: {
        scope: 'domain',
        scopeRef: 'example.com',
        kind: 'deterministic',
        conditions: { from: { domain: 'example.com' } },
        action: 'newsletter',
      },
    });
    expect(rule).toMatchObject({ priority: 100, enabled: true, instruction: null });
    const found = await prisma.rule.findMany({ where: { scope: 'domain', scopeRef: 'example.com', id: rule.id } });
    expect(found).toHaveLength(1);
    await prisma.rule.delete({ where: { id: rule.id } });

    const rejection = await prisma.pushRejection.create({
      data: { reason: 'unknown_account', detail: { emailAddress: 'nobody@example.com', historyId: '9' } },
    });
    expect(rejection.receivedAt).toBeInstanceOf(Date);
    expect(rejection.detail).toEqual({ emailAddress: 'nobody@example.com', historyId: '9' });
    await prisma.pushRejection.delete({ where: { id: rejection.id } });
  });

  it('rolls back an interactive transaction that throws', async () => {
    const address = email();
    await expect(
      prisma.$transaction(async (tx) => {
        await tx.account.create({ data: { email: address } });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await prisma.account.findUnique({ where: { email: address } })).toBeNull();
  });
});

describe('the worker process pool (createDatabasePool)', () => {
  it('survives PostgreSQL ending an idle connection, and opens a new one for the next statement', async () => {
    const { pool, prisma: pooled } = createDatabasePool(inject('databaseUrl'), { poolSize: 2 });
    try {
      const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const pid = rows[0]!.pid;
      // As a PostgreSQL restart or a dropped database does: the idle connection is ended from the server.
      await prisma.$queryRaw`SELECT pg_terminate_backend(${pid}::int)`;
      await waitUntil('the pool noticed the ended connection', async () => pool.idleCount === 0 || undefined, { timeoutMs: 5_000, everyMs: 50 });
      const again = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      expect(again.rows[0]!.pid).not.toBe(pid);
    } finally {
      await pooled.$disconnect();
      await pool.end();
    }
  });
});
