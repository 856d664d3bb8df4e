// GET /healthz on a scratch database and the real Temporal dev server: ok; degraded (200) with a
// reason per account that needs reauth, per account whose push went silent while mail arrived, and
// per alert of the current backfill; down (503) when PostgreSQL does not answer.
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { journalAlertLevels } from '../../src/backfill/alert-journal.js';
import { judgeMetadata } from '../../src/backfill/alerts.js';
import { createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { healthRoute } from '../../src/http/health.js';
import { defaultReasonSources } from '../../src/http/health-reasons.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { prismaExecutor, type SqlExecutor } from '../../src/quota/sql.js';
import { seedAccount } from '../helpers/approvals.js';
import { createScratchDatabase, unusedDatabaseUrl } from '../helpers/scratch-database.js';

const POLL_MS = 15 * 60_000;

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
    routes: { 'GET /healthz': healthRoute({ temporal, prisma, reasons: defaultReasonSources({ pushSilentAfterMs: POLL_MS }) }) },
  });
});

afterAll(async () => {
  await server?.close();
  await connection?.close();
  await prisma?.$disconnect();
  await database?.drop();
});

async function health(): Promise<{ code: number; body: { status: string; reasons: Array<{ kind: string; accountId?: string; level?: string; message: string }> } }> {
  const res = await fetch(`${server.url}/healthz`);
  return { code: res.status, body: (await res.json()) as never };
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
    const down = await startHttpServer({ host: '127.0.0.1', port: 0, routes: { 'GET /healthz': healthRoute({ temporal, prisma: broken }) } });
    try {
      const res = await fetch(`${down.url}/healthz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ status: 'down', temporal: { ok: true }, postgres: { ok: false } });
    } finally {
      await down.close();
      await broken.$disconnect();
    }
  });
});
