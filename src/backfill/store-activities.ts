// Backfill activities that only touch Postgres (task queue durable-inbox, next to the workflows).
import type { SqlExecutor } from '../quota/sql.js';
import type { BackfillStoreActivities } from './activity-contracts.js';
import { archiverAccountIds, commitWatermark, loadBackfillState, recordBadMessage, saveBackfillRange } from './message-store.js';

export function createBackfillStoreActivities(db: SqlExecutor): BackfillStoreActivities {
  return {
    backfillLoadState: ({ accountId }) => loadBackfillState(db, accountId),
    backfillSaveRange: ({ accountId, rangeStart, rangeEnd, granularity }) => saveBackfillRange(db, accountId, rangeStart, rangeEnd, granularity),
    backfillCommitWatermark: ({ accountId, watermark }) => commitWatermark(db, accountId, watermark),
    backfillRecordBad: ({ accountId, gmailId, reason }) => recordBadMessage(db, accountId, gmailId, reason),
    archiverAccounts: () => archiverAccountIds(db),
  };
}
