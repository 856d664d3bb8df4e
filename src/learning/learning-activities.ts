// The learning's activities on the main task queue: the triage derivation, the corrections and the
// writing evidence the thread workflow records (local activities) and the accounts the learning
// Schedule looks at. Each idempotent, so a retry proposes or records nothing twice.
import type { LearningSettings } from './contracts.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { recordCorrections } from './corrections.js';
import { deriveTriageLessons } from './triage-lessons.js';
import { accountsWithNewEvidence, recordEvidence } from './writing-evidence.js';
import type { LearningActivities } from './activity-contracts.js';

export function createLearningActivities(deps: { db: SqlExecutor; settings: LearningSettings }): LearningActivities {
  return {
    async deriveTriageLessons({ accountId }) {
      return deriveTriageLessons(deps.db, { accountId, settings: deps.settings });
    },
    async recordCorrections(change) {
      if (!deps.settings.enabled) return [];
      return recordCorrections(deps.db, change);
    },
    async recordWritingEvidence(input) {
      return recordEvidence(deps.db, input);
    },
    async accountsWithNewEvidence({ accountIds }) {
      return deps.settings.enabled ? accountsWithNewEvidence(deps.db, accountIds) : [];
    },
    async accountsWithLessons({ accountIds }) {
      if (!deps.settings.enabled) return [];
      const rows = await deps.db.query<{ id: string }>(
        `SELECT a.id FROM accounts a
          WHERE a.status = 'active' AND ($1::text[] IS NULL OR a.id = ANY($1::text[]))
            AND EXISTS (SELECT 1 FROM lessons l WHERE l.account_id = a.id) ORDER BY a.id`,
        [accountIds ?? null],
      );
      return rows.map((r) => r.id);
    },
  };
}
