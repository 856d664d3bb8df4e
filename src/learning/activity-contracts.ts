// The learning's activities as types: what its workflow and the thread workflow call. Workflow code
// imports these alone; the implementations (learning-activities.ts, learning-llm-activities.ts,
// notify-activities.ts, weekly-email-activities.ts) satisfy them.

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

/** A label change the sync read from history, as the thread workflow hands it over. */
export interface SeenLabelChange {
  accountId: string;
  threadId: string;
  /** The history change (its idempotency is the correction's key; kept as provenance). */
  changeId: string;
  inboxAdded: boolean;
  /** Names of the user's own labels (not ours, not system ones). */
  labelsAdded: readonly string[];
  labelsRemoved: readonly string[];
}

export type CorrectionSource = 'moved_back' | 'label_removed' | 'label_added';

export interface RecordedCorrection {
  source: CorrectionSource;
  kind: string;
  argument?: string;
}

export interface DerivedLessons {
  /** Lessons this run proposed or whose evidence grew. */
  changed: string[];
  /** Senders whose corrections were looked at. */
  senders: number;
}

export interface EvidenceInput {
  accountId: string;
  threadId: string;
  /** sent: our draft went out (final: what was sent); rework: the user's instructions (final). */
  source: 'sent' | 'rework';
  /** The draft's journal key (actions.key): the sender and subject come from its row. */
  draftKey: string;
  /** One row per key: a retry or a replay records nothing twice. */
  key: string;
  draft: string;
  final: string;
}

export interface WritingLessonsProposed {
  /** Lessons created, or whose evidence grew. */
  changed: string[];
  /** Evidence items the model read. */
  read: number;
  /** Lessons resting on this evidence that took hold without review (the account's auto-accept setting). */
  accepted?: string[];
  /** The account's writing lessons that wait for the user and were not announced yet (to announce; a retried tick finds them too). Absent in runs recorded before. */
  waiting?: string[];
}

export interface LearningLlmActivities {
  /** Proposes the writing lessons the account's evidence teaches, when there is evidence no derivation read yet. */
  proposeWritingLessons(input: { accountId: string }): Promise<WritingLessonsProposed>;
}

export interface LessonNotifyActivities {
  /** Tells the user (Discord, when configured) that a lesson is proposed. Idempotent per lesson. */
  notifyLessonProposed(input: { lessonId: string }): Promise<{ notified: boolean }>;
}

export interface WeeklyEmailResult {
  accountId: string;
  /** The ISO week in the account's zone, e.g. 2026-W48. */
  week: string;
  /** Gmail's id of the week's e-mail; null when there was nothing to report or the account could not take it. */
  gmailMessageId: string | null;
  /** Whether this call inserted it (false: found from an earlier run, or not sent). */
  inserted: boolean;
  note?: string;
}

export interface WeeklyEmailActivities {
  deliverWeeklyReport(input: { accountId: string }): Promise<WeeklyEmailResult>;
}

export interface LearningWorkflowInput {
  /** The LLM task queue (LLM_TASK_QUEUE). */
  llmTaskQueue: string;
  /** The Gmail task queue (GMAIL_TASK_QUEUE), where the notifications and the weekly e-mail run: without it, neither. */
  gmailTaskQueue?: string;
  /** Only these accounts (`memory learn`, tests); absent: every account (the Schedule). */
  accountIds?: string[];
}

export interface LearningWorkflowResult {
  accounts: number;
  proposed: string[];
  /** Accounts skipped this tick, with why (LLM paused, budget spent, output that never fit). */
  skipped: { accountId: string; reason: string }[];
  /** Writing lessons announced on Discord (or found announced already) this tick. */
  announced?: string[];
  /** The weekly e-mail of each account with lessons (found or inserted). */
  weekly?: WeeklyEmailResult[];
}
