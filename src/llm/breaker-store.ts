// The LLM breakers in Postgres (llm_breakers, one row per account that ever failed). Transitions
// (breaker.ts) run under a row lock, so concurrent LLM activities of one account count every failure
// and only one of them takes the probe.
import type { PrismaClient } from '../db/client.js';
import { prismaExecutor, type SqlExecutor } from '../db/sql-executor.js';
import { CLOSED, type BreakerState, type LlmPauseReason } from './breaker.js';

export type BreakerRow = {
  state: string;
  reason: string | null;
  failures: number;
  opened_at: Date | null;
  next_probe_at: Date | null;
  last_error: string | null;
};

export function breakerStateOf(row: BreakerRow | undefined): BreakerState {
  if (!row) return CLOSED;
  return {
    state: row.state === 'open' ? 'open' : 'closed',
    reason: (row.reason as LlmPauseReason | null) ?? null,
    failures: row.failures,
    openedAt: row.opened_at,
    nextProbeAt: row.next_probe_at,
    lastError: row.last_error,
  };
}

export const BREAKER_COLUMNS = 'state, reason, failures, opened_at, next_probe_at, last_error';

export interface BreakerStore {
  read(accountId: string): Promise<BreakerState>;
  /** Applies `change` to the account's breaker under a row lock; returns the state before and after. */
  update(accountId: string, change: (b: BreakerState) => BreakerState): Promise<{ before: BreakerState; after: BreakerState }>;
  /** Every open breaker, with its account's email. */
  listOpen(): Promise<(BreakerState & { accountId: string; email: string })[]>;
}

export function createBreakerStore(prisma: PrismaClient): BreakerStore {
  return {
    async read(accountId) {
      const rows = await prisma.$queryRawUnsafe<BreakerRow[]>(`SELECT ${BREAKER_COLUMNS} FROM llm_breakers WHERE account_id = $1`, accountId);
      return breakerStateOf(rows[0]);
    },

    async update(accountId, change) {
      return prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe('INSERT INTO llm_breakers (account_id) VALUES ($1) ON CONFLICT (account_id) DO NOTHING', accountId);
        const rows = await tx.$queryRawUnsafe<BreakerRow[]>(`SELECT ${BREAKER_COLUMNS} FROM llm_breakers WHERE account_id = $1 FOR UPDATE`, accountId);
        const before = breakerStateOf(rows[0]);
        const after = change(before);
        await tx.$executeRawUnsafe(
          `UPDATE llm_breakers SET state = $2, reason = $3, failures = $4, opened_at = $5, next_probe_at = $6, last_error = $7, updated_at = now()
           WHERE account_id = $1`,
          accountId,
          after.state,
          after.reason,
          after.failures,
          after.openedAt,
          after.nextProbeAt,
          after.lastError,
        );
        return { before, after };
      });
    },

    listOpen: () => listBreakers(prismaExecutor(prisma), { openOnly: true }),
  };
}

/** The accounts' breakers with their emails (every row, or the open ones): the CLI, health and metrics read these. */
export async function listBreakers(db: SqlExecutor, { openOnly }: { openOnly: boolean }): Promise<(BreakerState & { accountId: string; email: string })[]> {
  const rows = await db.query<BreakerRow & { account_id: string; email: string }>(
    `SELECT b.account_id, a.email, ${BREAKER_COLUMNS.split(', ').map((c) => `b.${c}`).join(', ')}
     FROM llm_breakers b JOIN accounts a ON a.id = b.account_id ${openOnly ? "WHERE b.state = 'open'" : ''} ORDER BY a.email`,
    [],
  );
  return rows.map((r) => ({ ...breakerStateOf(r), accountId: r.account_id, email: r.email }));
}
