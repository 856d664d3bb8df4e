// The learning's activities, for the workflows that will run it (a schedule, the thread's
// corrections in part 2): each idempotent, so a retry proposes nothing twice.
import type { LearningSettings } from '../config.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { deriveTriageLessons, type DerivedLessons } from './triage-lessons.js';

export interface LearningActivities {
  /** Proposes the triage lessons the account's recent corrections teach; returns the lessons proposed or grown. */
  deriveTriageLessons(input: { accountId: string }): Promise<DerivedLessons>;
}

export function createLearningActivities(deps: { db: SqlExecutor; settings: LearningSettings }): LearningActivities {
  return {
    async deriveTriageLessons({ accountId }) {
      return deriveTriageLessons(deps.db, { accountId, settings: deps.settings });
    },
  };
}
