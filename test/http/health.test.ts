// GET /healthz on a scratch database and the real Temporal dev server: ok; degraded (200) with a
// reason per account that needs reauth, per account whose push went silent while mail arrived, and
// per alert of the current backfill; down (503) when PostgreSQL does not answer. Anyone sees reason
// codes only; the operator token shows which account and why. A route that throws answers a
// generic 500.
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { journalAlertLevels } from '../../src/backfill/alert-journal.js';
import { judgeMetadata } from '../../src/backfill/alerts.js';
import { createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { healthRoute } from '../../src/http/health.js';
import { defaultReasonSources } from '../../src/http/health-reasons.js';
import { startHttpServer, type HttpServer } from '../../src/shared/http-server.js';
import { prismaExecutor, type SqlExecutor } from '../../src/db/sql-executor.js';
import { seedAccount } from '../helpers/approvals.js';
import { createScratchDatabase, unusedDatabaseUrl } from '../helpers/scratch-database.js';

const POLL_MS = 15 * 60_000;
const OPERATOR_TOKEN = 'operator-token-for-the-health-test';

let database: { url: string; drop(): Promise<void> };
let prisma: PrismaClient;
let db: SqlExecutor;
let connection: Connection;
let server: HttpServer;

beforeAll(async () => {
  database = await createScratchDatabase();
  await applyMigrations(database.url);
  prisma = createPrismaClient(database.url);
  db = prismaExecutor(prisma);
  connection = await Connection.connect({ address: inject('temporalAddress') });
  const temporal = new Client({ connection });
  server = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    routes: {
      'GET /healthz': healthRoute({ temporal, prisma, reasons: defaultReasonSources({ pushSilentAfterMs: POLL_MS }), operatorToken: OPERATOR_TOKEN }),
    },
  });
});

afterAll(async () => {
  await server?.close();
  await connection?.close();
  await prisma?.$disconnect();
  await database?.drop();
});

interface HealthBody {
  status: string;
  reasons: Array<{ kind: string; accountId?: string; level?: string; message?: string; count?: number }>;
}

/** As the operator sees it (with the token), or as anyone does. */
async function health(as: 'operator' | 'anyone' = 'operator'): Promise<{ code: number; body: HealthBody; text: string }> {
  const headers: Record<string, string> = as === 'operator' ? { authorization: `Bearer ${OPERATOR_TOKEN}` } : {};
  const res = await fetch(`${server.url}/healthz`, { headers });
  const text = await res.text();
  return { code: res.status, body: JSON.parse(text) as HealthBody, text };
}

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);

/** An account with a live watch (a day left), its last push and the last mail the sync found. */
async function watchedAccount(id: string, times: { lastPush: Date; lastHistory: Date }): Promise<void> {
  await db.query(`UPDATE accounts SET watch_expiration = $2, last_push_at = $3, last_history_at = $4 WHERE id = $1`, [
    id,
    new Date(Date.now() + 86_400_000),
    times.lastPush,
    times.lastHistory,
  ]);
}

describe('GET /healthz', () => {
  it('is ok when nothing needs a person, then degraded with a reason for each thing that does', async () => {
    const healthy = await seedAccount(db, 'healthy@example.com');
    await watchedAccount(healthy, { lastPush: minutesAgo(30), lastHistory: minutesAgo(29) });
    expect(await health()).toMatchObject({ code: 200, body: { status: 'ok', reasons: [] } });

    const revoked = await seedAccount(db, 'revoked@example.com');
    await db.query(`UPDATE accounts SET status = 'needs_reauth' WHERE id = $1`, [revoked]);
    // Mail found by the poll 20 minutes after the last push (the poll interval is 15).
    const silent = await seedAccount(db, 'silent@example.com');
    await watchedAccount(silent, { lastPush: minutesAgo(25), lastHistory: minutesAgo(5) });
    // The same without a live watch (polling only, by choice): nothing to report.
    const unwatched = await seedAccount(db, 'unwatched@example.com');
    await db.query(`UPDATE accounts SET last_history_at = $2 WHERE id = $1`, [unwatched, minutesAgo(1)]);

    const { code, body } = await health();
    expect(code).toBe(200);
    expect(body.status).toBe('degraded');
    expect(body.reasons.map((r) => [r.kind, r.accountId, r.level])).toEqual([
      ['account_needs_reauth', revoked, 'critical'],
      ['push_silent', silent, 'warn'],
    ]);
    expect(body.reasons[0]!.message).toMatch(/^revoked@example.com needs to be reconnected/);
    expect(body.reasons[1]!.message).toMatch(/no Gmail push since .* longer than the poll interval/);

    // Anyone: the same status, the reason codes and how many, and nothing that names an account.
    const anyone = await health('anyone');
    expect(anyone.code).toBe(200);
    expect(anyone.body).toMatchObject({ status: 'degraded', temporal: { ok: true }, postgres: { ok: true } });
    expect(anyone.body.reasons).toEqual([
      { kind: 'account_needs_reauth', level: 'critical', count: 1 },
      { kind: 'push_silent', level: 'warn', count: 1 },
    ]);
    for (const secret of ['revoked@example.com', 'silent@example.com', revoked, silent, 'reconnected']) expect(anyone.text).not.toContain(secret);
    // A wrong token, in the header or the query, is anyone.
    const wrong = await fetch(`${server.url}/healthz?token=not-the-token`, { headers: { authorization: 'Bearer not-the-token' } });
    expect(await wrong.text()).not.toContain('revoked@example.com');
    // The token in the query, as on the approvals page, opens the details too.
    const byQuery = await fetch(`${server.url}/healthz?token=${OPERATOR_TOKEN}`);
    expect(await byQuery.text()).toContain('revoked@example.com needs to be reconnected');

    await db.query(`UPDATE accounts SET status = 'active' WHERE id = $1`, [revoked]);
    await db.query(`UPDATE accounts SET last_push_at = now() WHERE id = $1`, [silent]);
    expect((await health()).body.status).toBe('ok');
  });

  it("lists the current backfill's alerts, not those of an earlier backfill", async () => {
    const account = await seedAccount(db, 'backfilled@example.com');
    const critical = judgeMetadata(900, 1000);
    await journalAlertLevels(db, { accountId: account, backfillId: 'backfill-old/1', judgements: { metadata: critical } });
    await db.query(`INSERT INTO backfill_state (account_id, backfill_id) VALUES ($1, 'backfill-new/2')`, [account]);
    expect((await health()).body.status).toBe('ok');

    await journalAlertLevels(db, { accountId: account, backfillId: 'backfill-new/2', judgements: { metadata: judgeMetadata(600, 1000) } });
    const { body } = await health();
    expect(body.status).toBe('degraded');
    expect(body.reasons).toEqual([
      {
        kind: 'backfill_alert',
        accountId: account,
        level: 'warn',
        message: 'backfilled@example.com: backfill metadata warn: metadata 600 of 1000 bytes, 60.00 % of the budget (warn at 50.00 %)',
      },
    ]);
    // Back under the threshold: the journal's latest level is ok, and so is health.
    await journalAlertLevels(db, { accountId: account, backfillId: 'backfill-new/2', judgements: { metadata: judgeMetadata(100, 1000) } });
    expect((await health()).body.status).toBe('ok');
  });

  it('is down (503) when PostgreSQL does not answer', async () => {
    const missing = unusedDatabaseUrl();
    const broken = createPrismaClient(missing.url);
    const temporal = new Client({ connection });
    const down = await startHttpServer({
      host: '127.0.0.1',
      port: 0,
      routes: { 'GET /healthz': healthRoute({ temporal, prisma: broken, operatorToken: OPERATOR_TOKEN }) },
    });
    try {
      const res = await fetch(`${down.url}/healthz`);
      expect(res.status).toBe(503);
      // Anyone learns which part is down, not the error (it names the database and its host).
      expect(await res.json()).toEqual({ status: 'down', temporal: { ok: true, latencyMs: expect.any(Number) }, postgres: { ok: false }, reasons: [] });
      const operator = await fetch(`${down.url}/healthz`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
      expect(operator.status).toBe(503);
      const { postgres } = (await operator.json()) as { postgres: { ok: boolean; error: string } };
      expect(postgres.ok).toBe(false);
      expect(postgres.error).not.toBe('');
    } finally {
      await down.close();
      await broken.$disconnect();
    }
  });

  it('answers a generic 500 when a route throws, and keeps the error text to the log', async () => {
    const failing = await startHttpServer({
      host: '127.0.0.1',
      port: 0,
      routes: {
        'GET /boom': async () => {
          throw new Error('connect ECONNREFUSED 10.1.2.3:5432 (user alice@example.com)');
        },
      },
    });
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const res = await fetch(`${failing.url}/boom`);
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: 'internal error' });
      expect(logged.mock.calls.map((c) => String(c[0])).join('\n')).toMatch(/GET \/boom failed: Error: connect ECONNREFUSED 10\.1\.2\.3:5432/);
    } finally {
      logged.mockRestore();
      await failing.close();
    }
  });
});
