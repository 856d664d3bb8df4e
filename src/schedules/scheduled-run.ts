// Workflow code: one scheduled agent run's Temporal plumbing. Its activities (Postgres as local
// activities, Gmail and the LLM on their queues), the time it stands for, and the agent loop's hands
// for a run that has no thread: its model turns, its read-only tools, the record of its steps.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { ActivityFailure, proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { AgentHands } from '../agent/agent-loop.js';
import type { AgentGmailActivities, AgentLlmActivities } from '../agent/activity-contracts.js';
import type { AgentMessage, AgentProfile, AgentStepRecord, AgentToolCall, AgentTurn } from '../agent/contracts.js';
import { GMAIL_TASK_QUEUE, LLM_TASK_QUEUE } from '../shared/task-queues.js';
import { activityErrorText } from '../temporal/workflow-failures.js';
import type { ScheduleGmailActivities, ScheduleStoreActivities } from './activity-contracts.js';
import type { ClaimedRun, ScheduledRunInput } from './contracts.js';

/** The action time the Schedule set on the workflow it started. */
const ScheduledStartTime = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

/** How long a run keeps retrying a Gmail or model step before it reports the failure instead. */
const STEP_GIVE_UP = '30 minutes';

export class ScheduledRun {
  readonly store: ScheduleStoreActivities;
  readonly gmail: ScheduleGmailActivities & AgentGmailActivities;
  readonly llm: AgentLlmActivities;
  /** The time this run stands for: the Schedule's action time, or the trigger's. */
  readonly scheduledAt: string;
  /** Started by `schedules trigger` (or by hand): it stands for itself, not for a time of the schedule. */
  readonly manual: boolean;

  constructor(readonly input: ScheduledRunInput) {
    const q = input.taskQueues;
    this.store = proxyLocalActivities<ScheduleStoreActivities>({
      startToCloseTimeout: '30 seconds',
      retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
    });
    this.gmail = proxyActivities<ScheduleGmailActivities & AgentGmailActivities>({
      taskQueue: q?.gmail ?? GMAIL_TASK_QUEUE,
      startToCloseTimeout: input.activityTimeouts?.gmailMs ?? '2 minutes',
      scheduleToCloseTimeout: STEP_GIVE_UP,
      heartbeatTimeout: '30 seconds',
      retry: { initialInterval: '1 second', maximumInterval: '2 minutes', nonRetryableErrorTypes: ['GmailBadRequestError', 'ScheduleGone'] },
    });
    this.llm = proxyActivities<AgentLlmActivities>({
      taskQueue: q?.llm ?? LLM_TASK_QUEUE,
      startToCloseTimeout: input.activityTimeouts?.llmMs ?? '3 minutes',
      scheduleToCloseTimeout: STEP_GIVE_UP,
      heartbeatTimeout: '30 seconds',
      retry: { initialInterval: '2 seconds', maximumInterval: '2 minutes', nonRetryableErrorTypes: ['LlmRequestRejectedError'] },
    });
    const info = workflowInfo();
    const actionTime = info.typedSearchAttributes.get(ScheduledStartTime);
    this.manual = input.scheduledAt !== undefined || actionTime === undefined;
    this.scheduledAt = input.scheduledAt ?? (actionTime ?? info.startTime).toISOString();
  }

  get workflowId(): string {
    return workflowInfo().workflowId;
  }

  claim() {
    return this.store.claimScheduledRun({ scheduleId: this.input.scheduleId, workflowId: this.workflowId, scheduledAt: this.scheduledAt, manual: this.manual });
  }
}

/** Why an activity failed for good, in a line. */
export function failureText(err: unknown): string {
  if (err instanceof ActivityFailure) return activityErrorText(err) || (err.cause?.message ?? err.message);
  return err instanceof Error ? err.message : String(err);
}

/** The agent loop's hands in a scheduled run: no thread, so only the tools that read. */
export class ScheduleHands implements AgentHands {
  tokensIn = 0;
  tokensOut = 0;
  steps = 0;

  constructor(
    private readonly run: ScheduledRun,
    private readonly claimed: ClaimedRun,
    private readonly profile: AgentProfile,
  ) {}

  async turn(messages: AgentMessage[]): Promise<AgentTurn> {
    const turn = await this.run.llm.agentTurn({ accountId: this.claimed.schedule.accountId, profile: this.profile, messages });
    this.tokensIn += turn.tokensIn;
    this.tokensOut += turn.tokensOut;
    return turn;
  }

  async tool(call: AgentToolCall): Promise<string> {
    const input = call.input as Record<string, unknown>;
    switch (call.name) {
      case 'search_mailbox': {
        const hits = await this.run.gmail.searchMailbox({ accountId: this.claimed.schedule.accountId, query: String(input.query), maxResults: Number(input.max_results ?? 5) });
        return hits.length === 0 ? 'no messages match' : hits.map((h) => `${h.date} | ${h.from} | ${h.subject} | ${h.snippet} | thread ${h.threadId}`).join('\n');
      }
      case 'escalate':
        return 'noted: say it in your report';
      default:
        // The thread tools act on the thread a mail started; a scheduled run has none.
        return `${call.name} acts on a thread: a scheduled run has none, so say what you would do in your report instead`;
    }
  }

  recordSteps(steps: AgentStepRecord[]): Promise<void> {
    this.steps += steps.length;
    const { schedule } = this.claimed;
    return this.run.store.recordScheduledRunSteps({ accountId: schedule.accountId, scheduleId: schedule.id, runKey: this.run.workflowId, profile: this.profile.name, steps });
  }
}
