// The scheduled run's activities as types: the workflow imports only these.
import type { AgentStepRecord } from '../agent/contracts.js';
import type { RunClaim, ScheduleFacts, ScheduledRunStatus } from './contracts.js';

export interface ScheduleStoreActivities {
  /**
   * Claims the run for its local date and time (a repeated wall-clock time runs once): the schedule,
   * its account and zone, and since when it reports. `gone` when the schedule was removed.
   */
  claimScheduledRun(input: { scheduleId: string; workflowId: string; scheduledAt: string; manual: boolean }): Promise<RunClaim>;
  /** Writes a run's steps (idempotent by run key and step number). */
  recordScheduledRunSteps(input: { accountId: string; scheduleId: string; runKey: string; profile: string; steps: AgentStepRecord[] }): Promise<void>;
  /** The run's end: its status, report, usage and note (idempotent). */
  finishScheduledRun(input: {
    workflowId: string;
    status: Exclude<ScheduledRunStatus, 'duplicate' | 'gone'>;
    output?: string;
    steps: number;
    tokensIn: number;
    tokensOut: number;
    note?: string;
  }): Promise<void>;
}

export interface ScheduleGmailActivities {
  /** What a brief or a digest is written from: Postgres' records and the threads' subjects from Gmail. */
  gatherScheduleFacts(input: { accountId: string; profile: string; since: string; now: string }): Promise<ScheduleFacts>;
  /**
   * The report as an email into the user's own inbox (one Gmail thread per schedule, labelled) and to
   * the Discord webhook when configured. Each channel at most once per run (journaled on the run's row).
   */
  deliverScheduledReport(input: { workflowId: string; scheduleId: string; subject: string; body: string }): Promise<{ gmailMessageId: string | null; discordMessageId: string | null; notes: string[] }>;
}
