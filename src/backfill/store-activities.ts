// Backfill activities that only touch Postgres (task queue durable-inbox, next to the workflows).
import { backfillAlertsRaised, backfillMessages, badMessages } from '../metrics/metrics.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import type { BackfillStoreActivities } from './activity-contracts.js';
import { journalAlertLevels, storedMetadataBytes, undeliveredAlerts } from './alert-journal.js';
import { judgeMetadata } from './alerts.js';
import { archiverAccountIds, commitWatermark, loadBackfillState, recordBadMessage, saveBackfillRange } from './message-store.js';

export interface BackfillAlertOptions {
  /** Bytes of backfill metadata (bad-message and progress records) per account the alerts measure against. */
  metadataBudgetBytes: number;
}

export const DEFAULT_METADATA_BUDGET_BYTES = 16 * 1024 * 1024;

export function createBackfillStoreActivities({ db, alerts = {} }: { db: SqlExecutor; alerts?: Partial<BackfillAlertOptions> }): BackfillStoreActivities {
  const budget = alerts.metadataBudgetBytes ?? DEFAULT_METADATA_BUDGET_BYTES;
  return {
    backfillLoadState: ({ accountId }) => loadBackfillState(db, accountId),
    backfillSaveRange: ({ accountId, backfillId, rangeStart, rangeEnd, granularity }) =>
      saveBackfillRange(db, accountId, backfillId, rangeStart, rangeEnd, granularity),
    backfillCommitWatermark: ({ accountId, watermark }) => commitWatermark(db, accountId, watermark),
    async backfillRecordBad({ accountId, gmailId, reason }) {
      await recordBadMessage(db, accountId, gmailId, reason);
      badMessages.inc({});
      backfillMessages.inc({ result: 'bad' });
    },
    async backfillRecordAlerts({ accountId, backfillId, judgements, progressBytes }) {
      const metadata = judgeMetadata((await storedMetadataBytes(db, accountId)) + progressBytes, budget);
      const raised = await journalAlertLevels(db, { accountId, backfillId, judgements: { ...judgements, metadata } });
      for (const a of raised) backfillAlertsRaised.inc({ kind: a.kind, level: a.level });
      return { metadata, undelivered: (await undeliveredAlerts(db, accountId, backfillId)).map((a) => a.id) };
    },
    archiverAccounts: () => archiverAccountIds(db),
  };
}
