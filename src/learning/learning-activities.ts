// The learning's activities (main task queue; the thread workflow runs them as local activities):
// each idempotent, so a retry records and proposes nothing twice.
import type { LearningSettings } from '../config.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { recordCorrections, type RecordedCorrection, type SeenLabelChange } from './corrections.js';
import { deriveTriageLessons, type DerivedLessons } from './triage-lessons.js';

export interface LearningActivities {
  /** Proposes the triage lessons the account's recent corrections teach; returns the lessons proposed or grown. */
  deriveTriageLessons(input: { accountId: string }): Promise<DerivedLessons>;
  /** Records the corrections of triage a label change shows (none twice); returns the new ones. */
  recordCorrections(input: SeenLabelChange): Promise<RecordedCorrection[]>;
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
  };
}
