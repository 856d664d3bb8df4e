// The scheduled run's activities as types: the workflow imports only these.
import type { ActionKind, ActionState } from '../actions/contracts.js';
import type { AgentStepRecord } from '../agent/contracts.js';
import type { AgentProposalEvent } from '../thread/contracts.js';
import type { RunClaim, ScheduleFacts, ScheduledRunStatus } from './contracts.js';

export interface ScheduleStoreActivities {
  /**
   * Claims the run (its Temporal run id: a Schedule's two triggers in one second share a workflow id)
   * for its local date and time (a repeated wall-clock time runs once): the schedule,
   * its account and zone, and since when it reports. `gone` when the schedule was removed.
   */
  claimScheduledRun(input: { scheduleId: string; workflowId: string; runId: string; scheduledAt: string; manual: boolean }): Promise<RunClaim>;
  /** Writes a run's steps (idempotent by run key and step number). */
  recordScheduledRunSteps(input: { accountId: string; scheduleId: string; runKey: string; profile: string; steps: AgentStepRecord[] }): Promise<void>;
  /** The run's end: its status, report, usage and note (idempotent). */
  finishScheduledRun(input: {
    runId: string;
    status: Exclude<ScheduledRunStatus, 'duplicate' | 'gone'>;
    output?: string;
    steps: number;
    tokensIn: number;
    tokensOut: number;
    note?: string;
  }): Promise<void>;
  /** The actions a run proposed, as the journal has them now (for its report). */
  readProposedActions(input: { proposed: ProposedThreadAction[] }): Promise<ProposedThreadAction[]>;
}

export interface ScheduleGmailActivities {
  /** The thread a tool names, when the account has it: the message its actions are about. Null: no such thread. */
  threadToAct(input: { accountId: string; threadId: string }): Promise<ThreadToAct | null>;
  /** What a brief or a digest is written from: Postgres' records and the threads' subjects from Gmail. */
  gatherScheduleFacts(input: { accountId: string; profile: string; since: string; now: string }): Promise<ScheduleFacts>;
  /**
   * The report as an email into the user's own inbox (one Gmail thread per schedule, labelled) and to
   * the Discord webhook when configured. Each channel at most once per run (journaled on the run's row).
   */
  deliverScheduledReport(input: { runId: string; scheduleId: string; subject: string; body: string }): Promise<{ gmailMessageId: string | null; discordMessageId: string | null; notes: string[] }>;
}

/** A thread a scheduled run's tool acts on: the message its actions are about (the newest from the other side). */
export interface ThreadToAct {
  messageId: string;
  sender: string;
  subject: string;
}

/** What became of an action a scheduled run proposed to a thread, as the journal has it. */
export interface ProposedThreadAction {
  threadId: string;
  subject: string;
  kind: ActionKind;
  argument?: string;
  /** Its journal key (actionKey): how the run finds the row the thread writes. */
  key: string;
  /** The journal row; absent while the thread has not taken the proposal up yet. */
  actionId?: string;
  state: ActionState | 'handed_over';
  because: string[];
  note?: string;
}

export interface ScheduleHandoffActivities {
  /**
   * Hands the proposal to the thread's workflow (signal, or a new run) and waits, up to `waitMs`, for
   * the thread to journal each action past queued: done, awaiting approval, scheduled, refused. A
   * retry signals again (taken once by its request id) and reads the same journal rows.
   */
  proposeToThread(input: { accountId: string; threadId: string; event: AgentProposalEvent; waitMs?: number }): Promise<ProposedThreadAction[]>;
}
