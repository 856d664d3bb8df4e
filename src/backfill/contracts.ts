// Inputs, signals and queries of the backfill and archiver workflows (workflow-safe: no Node).
import { defineQuery, defineSignal } from '@temporalio/workflow';
import { GMAIL_TASK_QUEUE, LLM_TASK_QUEUE, WORKFLOW_TASK_QUEUE } from '../shared/task-queues.js';

export interface BackfillTaskQueues {
  /** Workflows and Postgres-only activities (default durable-inbox). */
  workflows?: string;
  /** Gmail activities (default durable-inbox-gmail). */
  gmail?: string;
  /** LLM activities: the hand-over's Message Batch (default durable-inbox-llm). */
  llm?: string;
}

export interface BackfillOptions {
  accountId: string;
  /** 'auto' (default): from the mailbox's size. */
  granularity?: Granularity | 'auto';
  /** Epoch ms; default: the oldest message. */
  rangeStart?: number;
  /** Epoch ms; default: when the backfill starts. */
  rangeEnd?: number;
  /** Ids per batch activity (default 300). */
  batchSize?: number;
  /** Slice children running at once (default 8, at most 200). */
  window?: number;
  /** Batch activities of one slice running at once (default 2). */
  batchParallelism?: number;
  /** Slice queries are widened by this much on each side; duplicates are dropped (default 60 s). */
  overlapMs?: number;
  /** A slice listing more pages of 500 than this splits in two (default 20). */
  maxListPages?: number;
  /** Target messages per slice when choosing the granularity (default 2000). */
  targetPerSlice?: number;
  format?: FetchFormat;
  /**
   * When finished, hand each thread with inbox mail from the last N days (before the range end)
   * to its thread workflow for classification and drafts. Default 0: off.
   */
  handToThreadsDays?: number;
  /**
   * The hand-over's classifications through one Message Batch (half price, docs/llm-cost.md), when the
   * user allows it: the threads are handed over once the batch has ended (most within an hour, at
   * most 24 h), each with the verdict on its newest inbound message. Default false.
   */
  classifyInBatch?: boolean;
  /** How often the batch's status is looked at: first after `firstMs`, then twice as long each time up to `maxMs`. */
  batchPoll?: { firstMs: number; maxMs: number };
  /**
   * The hand-over goes in pages of this many threads (one activity each), and the Message Batch's
   * results are stored in pages of this many (one statement each, the read resuming after the last
   * one stored). Default 500.
   */
  handOverPageSize?: number;
  /** Continue-as-new after this many slices in one run (default: when Temporal suggests it). */
  slicesPerRun?: number;
  /** While the account cannot be used, look again this often (ms) even without a reconnect signal (default 6 hours). */
  reauthRecheckMs?: number;
  taskQueues?: BackfillTaskQueues;
}

/** What BackfillOptions leaves out, and the bounds the backfill keeps. */
export const BACKFILL_DEFAULTS = {
  window: 8,
  maxWindow: 200,
  batchSize: 300,
  batchParallelism: 2,
  overlapMs: 60_000,
  maxListPages: 20,
  targetPerSlice: 2000,
  format: 'full' as FetchFormat,
  handToThreadsDays: 0,
  classifyInBatch: false,
  batchPoll: { firstMs: 30_000, maxMs: 15 * 60_000 },
  handOverPageSize: 500,
  /** A slice that failed this many times fails the backfill. */
  maxSliceAttempts: 5,
  /** A slice shorter than twice this is not split: it lists every page however deep. */
  minSplitMs: 60_000,
  reauthRecheckMs: 6 * 3600_000,
} as const;

/** The options of one backfill with every default filled in (the range and granularity are planned). */
export interface BackfillSettings {
  window: number;
  batchSize: number;
  batchParallelism: number;
  overlapMs: number;
  maxListPages: number;
  targetPerSlice: number;
  format: FetchFormat;
  handToThreadsDays: number;
  classifyInBatch: boolean;
  batchPoll: { firstMs: number; maxMs: number };
  handOverPageSize: number;
  slicesPerRun?: number;
  reauthRecheckMs: number;
  taskQueues: Required<BackfillTaskQueues>;
}

export function backfillSettingsOf(options: BackfillOptions): BackfillSettings {
  const d = BACKFILL_DEFAULTS;
  return {
    window: Math.min(d.maxWindow, Math.max(1, options.window ?? d.window)),
    batchSize: options.batchSize ?? d.batchSize,
    batchParallelism: options.batchParallelism ?? d.batchParallelism,
    overlapMs: options.overlapMs ?? d.overlapMs,
    maxListPages: options.maxListPages ?? d.maxListPages,
    targetPerSlice: options.targetPerSlice ?? d.targetPerSlice,
    format: options.format ?? d.format,
    handToThreadsDays: options.handToThreadsDays ?? d.handToThreadsDays,
    classifyInBatch: options.classifyInBatch ?? d.classifyInBatch,
    batchPoll: options.batchPoll ?? d.batchPoll,
    handOverPageSize: Math.max(1, options.handOverPageSize ?? d.handOverPageSize),
    ...(options.slicesPerRun !== undefined ? { slicesPerRun: options.slicesPerRun } : {}),
    reauthRecheckMs: options.reauthRecheckMs ?? d.reauthRecheckMs,
    taskQueues: {
      workflows: options.taskQueues?.workflows ?? WORKFLOW_TASK_QUEUE,
      gmail: options.taskQueues?.gmail ?? GMAIL_TASK_QUEUE,
      llm: options.taskQueues?.llm ?? LLM_TASK_QUEUE,
    },
  };
}

export interface BackfillCounters {
  /** Threads handed to the thread workflows at the end (handToThreadsDays). */
  handedOff?: number;
  /** Of the hand-over's threads, those whose classification a Message Batch decided (classifyInBatch). */
  classifiedInBatch?: number;
  /** From getProfile when the backfill was planned. */
  messagesTotal: number;
  listed: number;
  /** Upserts (a message fetched twice through slice overlap, or replayed after a crash, counts twice). */
  stored: number;
  /** New rows: messages stored by this backfill. */
  inserted: number;
  bad: number;
  gone: number;
  splits: number;
}

/** An alert that is not ok: its level and what a person reads. */
export interface ActiveAlert {
  level: AlertLevel;
  detail: string;
}

/** What a run carries into the next through continue-as-new. */
export interface BackfillCarried {
  frontier: FrontierState;
  counters: BackfillCounters;
  startedAt: number;
  /** Slice results that arrived but were not processed yet. */
  inbox: SliceReport[];
  /** (processed, bad) per finished slice, newest last, covering the last ≥ 10,000 messages. */
  badWindow: Array<[number, number]>;
  /** (time, bad) per finished slice with bad messages in the last hour, for spikes. */
  badTimes: Array<[number, number]>;
  /** The alerts that are not ok (src/backfill/alerts.ts), as last journaled. */
  alerts: Partial<Record<AlertKind, ActiveAlert>>;
  /** Unused (kept for runs carried from an earlier version). */
  rateSamples: Array<[number, number]>;
  runs: number;
}

export interface BackfillInput extends BackfillOptions {
  carried?: BackfillCarried;
}

export interface SliceInput {
  accountId: string;
  start: number;
  end: number;
  parentWorkflowId: string;
  batchSize: number;
  batchParallelism: number;
  overlapMs: number;
  /** 0: never give up listing (the slice is too short to split). */
  maxListPages: number;
  format: FetchFormat;
  taskQueues: Required<BackfillTaskQueues>;
}

export interface SliceReport {
  start: number;
  end: number;
  outcome: 'done' | 'split' | 'failed';
  listed: number;
  stored: number;
  inserted: number;
  bad: number;
  gone: number;
  error?: string;
  /** The failure's type when an activity failed (e.g. GmailAuthError). */
  errorType?: string;
  /** It failed because the account cannot be used (account-access.ts): the backfill waits for a reconnect. */
  accountUnusable?: boolean;
}

/** What a finished backfill returns. */
export interface BackfillResult {
  accountId: string;
  watermark: number;
  slicesDone: number;
  counters: BackfillCounters;
  runs: number;
}

export interface BackfillProgress {
  accountId: string;
  state: 'planning' | 'running' | 'done' | 'cancelled';
  rangeStart: number | null;
  rangeEnd: number | null;
  granularity: Granularity | null;
  watermark: number | null;
  slicesDone: number;
  slicesTotal: number;
  slicesRunning: number;
  counters: BackfillCounters;
  /** Messages stored per second since the backfill started. */
  rate: number;
  badRate: number;
  /** The worst level of `alerts`. */
  alert: AlertLevel;
  alerts: Partial<Record<AlertKind, ActiveAlert>>;
  startedAt: number;
  runs: number;
  /** While the backfill waits for the account to be reconnected: the step and the failure that stopped it. */
  waitingFor?: string;
}

export const sliceDoneSignal = defineSignal<[SliceReport]>('backfillSliceDone');
export const backfillProgressQuery = defineQuery<BackfillProgress>('backfillProgress');

export interface ArchiverInput {
  /** Default: every active account with a watermark. */
  accountIds?: string[];
  dryRun?: boolean;
  /** Move to Trash instead of only removing INBOX (default false). */
  trash?: boolean;
  /** Ids per batchModify (≤ 1000, default 1000). */
  batchSize?: number;
  /** A dry run lists at most this many ids in its result (default 1000). */
  listLimit?: number;
  taskQueues?: BackfillTaskQueues;
  carried?: { accountIndex: number; afterId: string; results: ArchiverAccountResult[] };
}

/** What ArchiverInput leaves out; a batchModify takes at most 1000 ids. */
export const ARCHIVER_DEFAULTS = { dryRun: false, trash: false, batchSize: 1000, maxBatchSize: 1000, listLimit: 1000 } as const;

export interface ArchiverAccountResult {
  accountId: string;
  archived: number;
  watermark: number | null;
  /** Dry run: the ids it would take out of the inbox (up to listLimit). */
  wouldArchive?: string[];
}

export interface ArchiverResult {
  dryRun: boolean;
  trash: boolean;
  accounts: ArchiverAccountResult[];
}

export function backfillWorkflowId(accountId: string): string {
  return `backfill-${accountId}`;
}

/**
 * A slice's child workflow id: deterministic, so a restarted backfill finds (and adopts) a slice
 * that is still running. A restart after a failure gets its own id (`-a2`, ...): the failed child
 * may not have closed yet when the parent starts the next attempt.
 */
export function sliceWorkflowId(accountId: string, start: number, end: number, attempt = 1): string {
  return `backfill-${accountId}-slice-${start}-${end}${attempt > 1 ? `-a${attempt}` : ''}`;
}

/** Backfill alerts: the metadata budget, the Discord webhook and the email rate limit. */
export interface BackfillAlertSettings {
  metadataBudgetBytes: number;
  discordWebhookUrl?: string;
  emailEveryMs: number;
}

export type AlertLevel = 'ok' | 'warn' | 'critical';

export type AlertKind = 'bad_rate' | 'bad_spike' | 'metadata';

export interface Judgement {
  level: AlertLevel;
  /** What a person reads: the measurement against its threshold. */
  detail: string;
  measured: Record<string, number>;
}

export type FetchFormat = 'full' | 'metadata';

/** A backfill slice's calendar unit (slicing.ts cuts the range into them). */
export type Granularity = 'day' | 'week' | 'month';

export type SliceStatus = 'pending' | 'running' | 'done';

export interface OpenSlice {
  start: number;
  end: number;
  status: SliceStatus;
  /** How many times this slice has been started (restarts after failures). */
  attempts: number;
  /** Of those, how many ended on an account that could not be used (not the slice's fault: not counted against it). */
  accountWaits?: number;
}

export interface FrontierState {
  rangeStart: number;
  rangeEnd: number;
  granularity: Granularity;
  /** Every slice ending at or before this is finished. Starts at rangeStart; never decreases. */
  watermark: number;
  /** Start of the first slice not yet planned. */
  cursor: number;
  /** Planned slices at or above the watermark, sorted by start, contiguous from the watermark to the cursor. */
  open: OpenSlice[];
  slicesDone: number;
}
