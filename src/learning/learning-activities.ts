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
  accountsWithNewEvidence(input: Record<string, never>): Promise<string[]>;
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
    async accountsWithNewEvidence() {
      return deps.settings.enabled ? accountsWithNewEvidence(deps.db) : [];
    },
  };
}
