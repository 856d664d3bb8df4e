// The learning's activities on the main task queue: the triage derivation, the corrections and the
// writing evidence the thread workflow records (local activities) and the accounts the learning
// Schedule looks at. Each idempotent, so a retry proposes or records nothing twice.
import type { LearningSettings } from '../config.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { recordCorrections, type RecordedCorrection, type SeenLabelChange } from './corrections.js';
import { deriveTriageLessons, type DerivedLessons } from './triage-lessons.js';
import { accountsWithNewEvidence, recordEvidence, type EvidenceInput } from './writing-evidence.js';

export interface LearningActivities {
  /** Proposes the triage lessons the account's recent corrections teach; returns the lessons proposed or grown. */
  deriveTriageLessons(input: { accountId: string }): Promise<DerivedLessons>;
  /** Records the corrections of triage a label change shows (none twice); returns the new ones. */
  recordCorrections(input: SeenLabelChange): Promise<RecordedCorrection[]>;
  /** Keeps our draft beside what the user sent, or the rework instructions they typed (by key: once). */
  recordWritingEvidence(input: EvidenceInput): Promise<boolean>;
  /** Accounts with edits no derivation of writing lessons has read yet (none while learning is off). */
  accountsWithNewEvidence(input: AccountFilter): Promise<string[]>;
  /** Active accounts with lessons of their own: the ones the weekly e-mail may have something for (none while learning is off). */
  accountsWithLessons(input: AccountFilter): Promise<string[]>;
}

/** Which accounts a learning run looks at: all of them, or only `accountIds` (`memory learn`, tests). */
export interface AccountFilter {
  accountIds?: string[];
}

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
