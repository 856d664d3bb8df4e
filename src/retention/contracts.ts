// The retention workflow's activities, as types: the workflow imports these alone;
// retention-activities.ts implements them.
export interface RetentionActivities {
  /** Deletes decision-log entries written before the cutoff. Idempotent. */
  pruneDecisionLog(input: { before: string }): Promise<number>;
  /** Deletes thread rows closed before the cutoff; open threads are never touched. Idempotent. */
  pruneClosedThreads(input: { closedBefore: string }): Promise<number>;
  /** Deletes writing evidence (docs/learning.md) recorded before the cutoff; lessons keep its id as provenance. Idempotent. */
  purgeWritingEvidence(input: { before: string }): Promise<number>;
  /** Deletes the corrections of triage (senders, subjects) recorded before the cutoff; lessons keep their copy as provenance. Idempotent. */
  purgeCorrections(input: { before: string }): Promise<number>;
  /**
   * Deletes the request rows of Message Batches created before the cutoff: those a backfill left when
   * it stopped before its hand-over (a hand-over deletes its batch's rows itself). Idempotent.
   */
  pruneBatchRequests(input: { createdBefore: string }): Promise<number>;
}
