// What crosses the activity boundary for backfill and archiving: plain JSON, type-only, so
// workflow code can import it. Ids and counts only; message content never enters history.
import type { AlertKind, FetchFormat, Granularity, Judgement } from './contracts.js';

export interface PlanInput {
  accountId: string;
  /** Epoch ms; default: found by probing the mailbox for its oldest message. */
  rangeStart?: number;
  /** Epoch ms; default: now. */
  rangeEnd?: number;
}

export interface PlanResult {
  messagesTotal: number;
  rangeStart: number;
  rangeEnd: number;
}

export interface ListSliceInput {
  accountId: string;
  start: number;
  end: number;
  overlapMs: number;
  /** Give up (tooDeep) after this many pages of 500; 0 = never. */
  maxPages: number;
}

export type ListSliceResult = { tooDeep: false; ids: string[] } | { tooDeep: true; pages: number };

export interface StoreBatchInput {
  accountId: string;
  ids: string[];
  format: FetchFormat;
}

export interface StoreBatchResult {
  /** Messages fetched and upserted by this activity (all attempts). */
  stored: number;
  /** Of those, rows that did not exist before. */
  inserted: number;
  /** Listed but deleted before we fetched them (404). */
  gone: number;
}

/** What a batch did store (all attempts) before it failed. */
export interface BatchStoredCounts {
  stored: number;
  inserted: number;
  gone: number;
}

/**
 * ApplicationFailure details of a batch that still has failing ids after its attempt. A batch the
 * account stopped (its failure is the account's: GmailAuthError, AccountNotConnectedError) carries
 * only the counts.
 */
export interface BatchFailureDetails extends BatchStoredCounts {
  remaining: string[];
  reasons: Record<string, string>;
}

export const BATCH_FAILED_TYPE = 'BackfillBatchFailed';

export interface BackfillStoredState {
  watermark: number | null;
  rangeStart: number | null;
  rangeEnd: number | null;
  granularity: Granularity | null;
}

export interface ArchiveBatchInput {
  accountId: string;
  /** Only gmail ids greater than this (paging). */
  afterId: string;
  limit: number;
  dryRun: boolean;
  trash: boolean;
}

export interface ArchiveBatchResult {
  /** Ids archived (or, in a dry run, that would be). */
  ids: string[];
  watermark: number | null;
}

export interface BackfillStoreActivities {
  backfillLoadState(input: { accountId: string }): Promise<BackfillStoredState>;
  /** Also makes `backfillId` the account's current backfill (whose alerts count). */
  backfillSaveRange(input: { accountId: string; backfillId: string; rangeStart: number; rangeEnd: number; granularity: Granularity }): Promise<void>;
  /** Moves the persisted watermark forward (never back); returns the persisted value. */
  backfillCommitWatermark(input: { accountId: string; watermark: number }): Promise<number>;
  backfillRecordBad(input: { accountId: string; gmailId: string; reason: string }): Promise<void>;
  /** Judges the metadata budget, journals every level change, and names the alerts still to deliver. */
  backfillRecordAlerts(input: RecordAlertsInput): Promise<RecordAlertsResult>;
  archiverAccounts(): Promise<string[]>;
}

export interface RecordAlertsInput {
  accountId: string;
  /** The backfill's workflow id and first run id: alerts and their rate limit are per backfill. */
  backfillId: string;
  /** What the workflow judged (bad-message rate, spike). */
  judgements: Partial<Record<AlertKind, Judgement>>;
  /** Estimated bytes of the progress the workflow carries (its continue-as-new state). */
  progressBytes: number;
}

export interface RecordAlertsResult {
  /** The metadata budget as measured now. */
  metadata: Judgement;
  /** Alert ids whose delivery is still due, oldest first. */
  undelivered: string[];
}

/** Delivering an alert where a person sees it (task queue durable-inbox-gmail: Discord and the account's inbox). */
export interface BackfillAlertDeliveryActivities {
  backfillDeliverAlert(input: { alertId: string }): Promise<{ discord: boolean; email: boolean }>;
}

export interface BackfillMailActivities {
  backfillPlan(input: PlanInput): Promise<PlanResult>;
  backfillListSlice(input: ListSliceInput): Promise<ListSliceResult>;
  backfillStoreBatch(input: StoreBatchInput): Promise<StoreBatchResult>;
  archiveBatch(input: ArchiveBatchInput): Promise<ArchiveBatchResult>;
}

/** Where a page of the hand-over ends: its last thread (threads go oldest first, by their newest inbox message). */
export interface HandoffCursor {
  /** Epoch ms: the internal date of the thread's newest inbox message. */
  atMs: number;
  threadId: string;
}

export interface HandoffInput {
  accountId: string;
  /** Epoch ms: inbox mail from this time on goes to the thread workflows. */
  sinceMs: number;
  /** The hand-over's Message Batch: each thread it classified gets its verdict with the event. */
  batchKey?: string;
  /** One page: the threads after this one (absent: from the first). */
  after?: HandoffCursor;
  /** At most this many threads (absent: all of them, in one call). */
  limit?: number;
}

export interface HandoffResult {
  /** Threads handed over by this call (one page). */
  threads: number;
  /** Of those, the threads handed over with a verdict of the batch. */
  classified?: number;
  /** The last thread of this page when more threads follow: the next page starts after it. */
  next?: HandoffCursor;
}

// ---- the hand-over's classification through a Message Batch (batch-classification.ts) ----------

export interface BatchPrepareInput {
  accountId: string;
  /** The batch's key (llm_batches): the backfill's id and what the batch is for. */
  batchKey: string;
  /** Epoch ms: the threads the hand-over will hand over (their inbox mail from this time on). */
  sinceMs: number;
}

export interface BatchPrepareResult {
  threads: number;
  /** Threads whose newest inbound message the LLM must classify (no rule decides it): one request each. */
  requests: number;
}

/** Reading the threads to classify (mail queue: the mailbox and the rules). */
export interface BackfillBatchMailActivities {
  batchPrepareClassification(input: BatchPrepareInput): Promise<BatchPrepareResult>;
}

export interface BatchSubmitResult {
  /** The API's batch id; null when nothing was submitted (no request, or the account's LLM may not be used now: `skipped`). */
  batchId: string | null;
  requests: number;
  skipped?: string;
}

export interface BatchRequestCounts {
  processing: number;
  succeeded: number;
  errored: number;
  canceled: number;
  expired: number;
}

export interface BatchCollectResult extends BatchRequestCounts {
  /** Succeeded requests whose answer holds a usable classification (the others go the normal path). */
  decided: number;
  /** Pages of results stored (all attempts): each page's rows and tokens written in one statement. */
  pages: number;
}

export interface BatchCollectInput {
  accountId: string;
  batchKey: string;
  batchId: string;
  /** Results stored per page (statement), and between heartbeats. */
  pageSize: number;
}

/** The batch at the API (LLM queue). Each is idempotent: a retried submit finds the batch it made. */
export interface BackfillBatchLlmActivities {
  batchSubmit(input: { accountId: string; batchKey: string }): Promise<BatchSubmitResult>;
  batchStatus(input: { batchId: string }): Promise<{ ended: boolean; counts: BatchRequestCounts }>;
  /**
   * Reads the results file page by page into llm_batch_requests, each page's tokens counted against the
   * account's budget with it, once; a retried read resumes after the lines already stored (llm_batches.collected_lines).
   * Only counts come back: the verdicts stay in Postgres.
   */
  batchCollect(input: BatchCollectInput): Promise<BatchCollectResult>;
  batchCancel(input: { batchId: string }): Promise<void>;
}

export interface BackfillHandoffActivities {
  /** Hands one page of threads (or all of them, without `limit`) to their thread workflows. */
  backfillHandToThreads(input: HandoffInput): Promise<HandoffResult>;
  /** Deletes the batch's request rows once every thread has its verdict (the decision log keeps it); answers how many. */
  backfillForgetBatchRequests(input: { batchKey: string }): Promise<number>;
}
