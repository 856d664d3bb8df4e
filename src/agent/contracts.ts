// The agent route's boundary, as plain data (workflow-safe): profiles, the tools an agent may use,
// the conversation the workflow holds, one model turn, and the record of each step.

export const AGENT_TOOLS = [
  'read_thread',
  'search_mailbox',
  'sender_history',
  'write_draft',
  'send_reply',
  'add_label',
  'remove_label',
  'archive',
  'escalate',
] as const;
export type AgentToolName = (typeof AGENT_TOOLS)[number];

/** Tools that read the user's mail beyond the thread at hand. */
export const MAILBOX_TOOLS: readonly AgentToolName[] = ['search_mailbox', 'sender_history'];

/**
 * Whether a profile can both read the user's other mail and send: mail could steer it into sending
 * that mail to the sender, so its sends always wait for approval, whatever the policy allows.
 */
export function readsMailboxAndSends(profile: Pick<AgentProfile, 'tools'>): boolean {
  return profile.tools.includes('send_reply') && profile.tools.some((t) => MAILBOX_TOOLS.includes(t));
}

export interface AgentProfile {
  name: string;
  description: string;
  instructions: string;
  /** The tools it may use; a call to any other is refused and the model told. */
  tools: AgentToolName[];
  /** Model turns it may take before it escalates. */
  maxSteps: number;
  /** Undefined: the configured model. */
  model?: string;
  /** Its sends wait for approval whatever the policy would allow. */
  sendsNeedApproval: boolean;
}

/** Content blocks as the Messages API has them (the subset an agent conversation uses). */
export type AgentBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };

export interface AgentMessage {
  role: 'user' | 'assistant';
  content: string | AgentBlock[];
}

/** A tool call of a turn, checked by the turn's activity: `problem` says why it cannot run. */
export interface AgentToolCall {
  id: string;
  name: string;
  input: unknown;
  problem?: { kind: 'not_allowed' | 'invalid_input'; message: string };
}

export interface AgentTurn {
  content: AgentBlock[];
  stopReason: string;
  toolCalls: AgentToolCall[];
  text: string;
  model: string;
  tokensIn: number;
  tokensOut: number;
}

export type AgentStepStatus = 'ok' | 'error' | 'refused' | 'invalid';

/** One step of a run: a model turn, or one tool call. */
export interface AgentStepRecord {
  seq: number;
  /** `model`, or the tool's name. */
  name: string;
  input?: unknown;
  result?: unknown;
  status: AgentStepStatus;
  tokensIn?: number;
  tokensOut?: number;
  startedAt: string;
  finishedAt: string;
}

/** How a run ended. */
export type AgentOutcome =
  /** `failedTools`: tool calls that failed for good on the way (the model was told; the user is too). */
  | { kind: 'ended'; text: string; failedTools: string[] }
  | { kind: 'escalated'; reason: string }
  | { kind: 'step_limit'; steps: number };

/** Tool results longer than this are cut before they go back to the model (and into history). */
export const TOOL_RESULT_CHARS = 4000;
