// The agent route's step of the thread workflow: a routing rule hands the thread to an agent
// (src/agent/agent-loop.ts); this gives the loop its hands on this thread. Workflow code.
import { workflowInfo } from '@temporalio/workflow';
import { agentLoop, briefing, type AgentHands } from '../agent/agent-loop.js';
import {
  readsMailboxAndSends,
  type AgentMessage,
  type AgentOutcome,
  type AgentProfile,
  type AgentStepRecord,
  type AgentToolCall,
  type AgentToolName,
  type AgentTurn,
} from '../agent/contracts.js';
import type { ActionReason, ActionSpec } from '../actions/contracts.js';
import { labelOf, proposeAndStart } from './action-steps.js';
import type { PromptMessage, ThreadContent } from './activity-contracts.js';
import { activityErrorText, failureType } from '../temporal/workflow-failures.js';
import { GIVE_UP_TYPES } from './activity-proxies.js';
import { needsTheUser, placeDraftInThread } from './common-steps.js';
import type { ThreadRun } from './thread-run.js';

/**
 * Runs the profile's agent on the new mail (src/agent/agent-loop.ts). Its tools act on this thread
 * only, through the same policy, journal and approvals as every other action.
 */
export async function handToAgent(run: ThreadRun, thread: ThreadContent, email: PromptMessage, profile: AgentProfile): Promise<void> {
  run.logDecision({ kind: 'agent', source: 'system', detail: `handed to agent ${profile.name} (${profile.tools.join(', ')}; at most ${profile.maxSteps} steps)` });
  const hands = new ThreadHands(run, thread, email, profile);
  let outcome: AgentOutcome;
  try {
    outcome = await agentLoop(profile, briefing(email, run.threadId), hands);
  } catch (err) {
    const type = failureType(err);
    if (!type || !GIVE_UP_TYPES.includes(type)) throw err;
    return needsTheUser(run, `agent ${profile.name} stopped: ${activityErrorText(err)}`);
  }
  const usage = { model: hands.model ?? profile.model, tokensIn: hands.tokensIn, tokensOut: hands.tokensOut };
  switch (outcome.kind) {
    case 'escalated':
      run.logDecision({ kind: 'agent', source: 'llm', detail: `agent ${profile.name} escalated: ${outcome.reason}`, ...usage });
      return needsTheUser(run, `agent ${profile.name}: ${outcome.reason}`);
    case 'step_limit':
      run.logDecision({ kind: 'agent', source: 'llm', detail: `agent ${profile.name} reached its step limit (${outcome.steps})`, ...usage });
      return needsTheUser(run, `agent ${profile.name} reached its step limit (${outcome.steps}) without finishing`);
    case 'ended':
      run.logDecision({ kind: 'agent', source: 'llm', detail: `agent ${profile.name} finished: ${outcome.text.slice(0, 300)}`, ...usage });
      // A tool that failed for good: the model worked around it, but the user looks at what it did.
      if (outcome.failedTools.length > 0) return needsTheUser(run, `agent ${profile.name} finished, but a tool failed: ${outcome.failedTools.join('; ')}`);
      if (run.record.state === 'pending') run.transition('skipped');
  }
}

/** The agent loop's hands on this thread: its model turns, its tools, the record of its steps. */
class ThreadHands implements AgentHands {
  tokensIn = 0;
  tokensOut = 0;
  /** The model that answered the last turn (the decision log records it). */
  model: string | undefined;
  /** What the run read of the mailbox beyond this thread: shown with a send's approval, as what it may quote. */
  private readonly mailboxRead: string[] = [];
  private readonly runKey: string;
  /** A profile that reads other mail and sends: the policy holds its sends for the user (see judge()). */
  private readonly readsMailbox: boolean;

  constructor(
    private readonly run: ThreadRun,
    private readonly thread: ThreadContent,
    private readonly email: PromptMessage,
    private readonly profile: AgentProfile,
  ) {
    this.runKey = `${workflowInfo().runId}:${email.messageId}`;
    this.readsMailbox = readsMailboxAndSends(profile);
  }

  async turn(messages: AgentMessage[]): Promise<AgentTurn> {
    const turn = await this.run.llm.agentTurn({ accountId: this.run.accountId, profile: this.profile, messages });
    this.tokensIn += turn.tokensIn;
    this.tokensOut += turn.tokensOut;
    this.model = turn.model;
    return turn;
  }

  async tool(call: AgentToolCall, step: number): Promise<string> {
    const { run, email } = this;
    const input = call.input as Record<string, unknown>;
    switch (call.name as AgentToolName) {
      case 'read_thread':
        return this.thread.messages.map((m) => `From: ${m.from}\nDate: ${m.date}\nSubject: ${m.subject}\n\n${m.body}`).join('\n\n---\n\n');
      case 'search_mailbox': {
        const hits = await run.gmail.searchMailbox({ accountId: run.accountId, query: String(input.query), maxResults: Number(input.max_results ?? 5) });
        for (const h of hits) this.mailboxRead.push(`search ${JSON.stringify(String(input.query))}: "${h.subject}" from ${h.from}, ${h.date}${h.threadId === run.threadId ? ' (this thread)' : ''}`);
        return hits.length === 0 ? 'no messages match' : hits.map((h) => `${h.date} | ${h.from} | ${h.subject} | ${h.snippet}`).join('\n');
      }
      case 'sender_history': {
        const history = await run.store.senderHistory({ accountId: run.accountId, sender: email.sender });
        this.mailboxRead.push(`sender history of ${email.sender}: ${history.split('\n')[0]}`);
        return history;
      }
      case 'write_draft': {
        const draftId = await placeDraftInThread(run, email, String(input.body), this.reasonAt(step));
        return `draft ${draftId} is in the thread for the user to review`;
      }
      case 'send_reply':
        return this.act({ kind: 'auto_reply', body: String(input.body) }, step);
      case 'add_label':
      case 'remove_label':
        return this.act({ kind: call.name as 'add_label' | 'remove_label', argument: String(input.label) }, step);
      case 'archive':
        return this.act({ kind: 'archive' }, step);
      case 'escalate':
        return 'the user will take it from here';
    }
  }

  recordSteps(steps: AgentStepRecord[]): Promise<void> {
    return this.run.store.recordAgentSteps({ ...this.run.ids, runKey: this.runKey, profile: this.profile.name, steps });
  }

  private reasonAt(step: number): ActionReason {
    return { source: 'agent', profile: this.profile.name, step, ...(this.readsMailbox ? { readsMailbox: true } : {}) };
  }

  /** Proposes the action under the policy (journaled like every other) and tells the model what became of it. */
  private async act(spec: ActionSpec & { body?: string }, step: number): Promise<string> {
    const { run, profile, mailboxRead } = this;
    const { body, ...action } = spec;
    const approval = profile.sendsNeedApproval ? `agent ${profile.name}'s sends need your approval` : undefined;
    const result = body ? { body, ...(mailboxRead.length > 0 ? { mailboxRead: [...mailboxRead] } : {}) } : undefined;
    const [journaled] = await proposeAndStart(run, this.email, [{ ...action, reason: this.reasonAt(step), ...(result ? { result } : {}) }], approval);
    const now = journaled ? ((await run.store.readAction({ id: journaled.id })) ?? journaled) : undefined;
    if (!now) return 'nothing was done';
    switch (now.state) {
      case 'done':
        return `${labelOf(now)}: done`;
      case 'scheduled':
        return `${labelOf(now)}: goes out at ${now.scheduledFor ?? 'soon'} unless the user undoes it`;
      case 'awaiting_approval':
        return `${labelOf(now)}: waits for the user's approval (${now.because.join('; ')})`;
      case 'refused':
        return `${labelOf(now)}: refused by the safety policy (${now.because.join('; ')})`;
      default:
        return `${labelOf(now)}: ${now.state}${now.note ? ` (${now.note})` : ''}`;
    }
  }
}
