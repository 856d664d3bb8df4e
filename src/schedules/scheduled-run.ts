// Workflow code: one scheduled agent run's Temporal plumbing. Its activities (Postgres as local
// activities, Gmail and the LLM on their queues), the time it stands for, and the agent loop's hands
// for a run that has no thread: its model turns, its read-only tools, the record of its steps.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { ActivityFailure, proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { AgentHands } from '../agent/agent-loop.js';
import type { AgentGmailActivities, AgentLlmActivities } from '../agent/activity-contracts.js';
import type { ActionSpec } from '../actions/contracts.js';
import type { AgentMessage, AgentProfile, AgentStepRecord, AgentToolCall, AgentTurn } from '../agent/contracts.js';
import type { AgentProposalEvent } from '../thread/contracts.js';
import { GMAIL_TASK_QUEUE, LLM_TASK_QUEUE } from '../shared/task-queues.js';
import { activityErrorText } from '../temporal/workflow-failures.js';
import type { ProposedThreadAction, ScheduleGmailActivities, ScheduleHandoffActivities, ScheduleStoreActivities } from './activity-contracts.js';
import type { ClaimedRun, ScheduledRunInput } from './contracts.js';

/** The action time the Schedule set on the workflow it started. */
const ScheduledStartTime = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

/** How long a run keeps retrying a Gmail or model step before it reports the failure instead. */
const STEP_GIVE_UP = '30 minutes';

export class ScheduledRun {
  readonly store: ScheduleStoreActivities;
  readonly gmail: ScheduleGmailActivities & AgentGmailActivities;
  readonly llm: AgentLlmActivities;
  /** Hands proposed actions to their threads (on the workflow's own task queue, where the thread workflows are). */
  readonly handoff: ScheduleHandoffActivities;
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
    this.handoff = proxyActivities<ScheduleHandoffActivities>({
      startToCloseTimeout: '3 minutes',
      scheduleToCloseTimeout: STEP_GIVE_UP,
      heartbeatTimeout: '30 seconds',
      retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
    });
    const info = workflowInfo();
    const actionTime = info.typedSearchAttributes.get(ScheduledStartTime);
    this.manual = input.scheduledAt !== undefined || actionTime === undefined;
    this.scheduledAt = input.scheduledAt ?? (actionTime ?? info.startTime).toISOString();
  }

  get workflowId(): string {
    return workflowInfo().workflowId;
  }

  get runId(): string {
    return workflowInfo().runId;
  }

  claim() {
    return this.store.claimScheduledRun({ scheduleId: this.input.scheduleId, workflowId: this.workflowId, runId: this.runId, scheduledAt: this.scheduledAt, manual: this.manual });
  }
}

/** Why an activity failed for good, in a line. */
export function failureText(err: unknown): string {
  if (err instanceof ActivityFailure) return activityErrorText(err) || (err.cause?.message ?? err.message);
  return err instanceof Error ? err.message : String(err);
}

/**
 * The agent loop's hands in a scheduled run. It has no thread of its own: it reads the mailbox, and
 * what it wants changed in a thread it names (archive, labels, a reply) is handed to that thread's
 * workflow as a proposal, judged by the safety policy there like the thread's own actions.
 */
export class ScheduleHands implements AgentHands {
  tokensIn = 0;
  tokensOut = 0;
  steps = 0;
  /** The actions it proposed, as last read from the journal. */
  proposed: ProposedThreadAction[] = [];

  constructor(
    private readonly run: ScheduledRun,
    private readonly claimed: ClaimedRun,
    private readonly profile: AgentProfile,
  ) {}

  async turn(messages: AgentMessage[]): Promise<AgentTurn> {
    const turn = await this.run.llm.agentTurn({ accountId: this.claimed.schedule.accountId, profile: this.profile, messages, scope: 'mailbox' });
    this.tokensIn += turn.tokensIn;
    this.tokensOut += turn.tokensOut;
    return turn;
  }

  async tool(call: AgentToolCall, step: number): Promise<string> {
    const input = call.input as Record<string, unknown>;
    switch (call.name) {
      case 'search_mailbox': {
        const hits = await this.run.gmail.searchMailbox({ accountId: this.claimed.schedule.accountId, query: String(input.query), maxResults: Number(input.max_results ?? 5) });
        return hits.length === 0 ? 'no messages match' : hits.map((h) => `${h.date} | ${h.from} | ${h.subject} | ${h.snippet} | thread ${h.threadId}`).join('\n');
      }
      case 'archive':
        return this.propose(call, step, { kind: 'archive' });
      case 'add_label':
      case 'remove_label':
        return this.propose(call, step, { kind: call.name, argument: String(input.label) });
      case 'send_reply':
        return this.propose(call, step, { kind: 'auto_reply' }, String(input.body));
      case 'escalate':
        return 'noted: say it in your report';
      default:
        // Not offered in a scheduled run (tools.ts MAILBOX_SCOPE_TOOLS): the turn's check refuses it first.
        return `${call.name} is not available in a scheduled run`;
    }
  }

  recordSteps(steps: AgentStepRecord[]): Promise<void> {
    this.steps += steps.length;
    const { schedule } = this.claimed;
    return this.run.store.recordScheduledRunSteps({ accountId: schedule.accountId, scheduleId: schedule.id, runKey: this.run.workflowId, profile: this.profile.name, steps });
  }

  /** Hands the action to the thread it names; tells the model what the policy made of it. */
  private async propose(call: AgentToolCall, step: number, spec: ActionSpec, body?: string): Promise<string> {
    const { schedule } = this.claimed;
    const threadId = String((call.input as { thread_id: string }).thread_id);
    const about = await this.run.gmail.threadToAct({ accountId: schedule.accountId, threadId });
    if (!about) return `there is no thread ${threadId} in the mailbox: nothing was done`;
    const event: AgentProposalEvent = {
      type: 'agent_proposal',
      requestId: `${this.run.workflowId}:${step}:${call.id}`,
      ...about,
      // Its first message holds other threads' subjects and senders: mail could steer it into
      // sending them out, so its sends always wait for the user (the policy's readsMailbox rule).
      actions: [{ ...spec, reason: { source: 'agent', profile: this.profile.name, step, readsMailbox: true }, ...(body ? { result: { body } } : {}) }],
      ...(this.profile.sendsNeedApproval ? { sendsNeedApproval: `agent ${this.profile.name}'s sends need your approval` } : {}),
      by: `schedule ${schedule.name}`,
    };
    const outcomes = await this.run.handoff.proposeToThread({ accountId: schedule.accountId, threadId, event });
    this.proposed.push(...outcomes);
    return outcomes.map(describeProposed).join('\n');
  }
}

/** One proposed action and what became of it, in a line (the model's tool result, the report). */
export function describeProposed(p: ProposedThreadAction): string {
  const what = `${p.argument ? `${p.kind} ${p.argument}` : p.kind} on thread ${p.threadId}`;
  switch (p.state) {
    case 'done':
      return `${what}: done`;
    case 'scheduled':
      return `${what}: goes out shortly unless the user undoes it`;
    case 'awaiting_approval':
      return `${what}: waits for the user's approval (${p.because.join('; ')})`;
    case 'refused':
      return `${what}: refused by the safety policy (${p.because.join('; ')})`;
    case 'handed_over':
      return `${what}: handed to the thread, not taken up yet`;
    default:
      return `${what}: ${p.state}${p.note ? ` (${p.note})` : ''}`;
  }
}
