// The agent's activities as types: the agent loop (workflow code) imports only these.
import type { AgentMessage, AgentProfile, AgentStepRecord, AgentTurn } from './contracts.js';

export interface AgentLlmActivities {
  /**
   * One model turn (Messages API with the profile's tools) within the daily token budget; each
   * tool call comes back checked: not allowed by the profile, or input that fails its schema.
   */
  agentTurn(input: {
    accountId: string;
    profile: AgentProfile;
    messages: AgentMessage[];
    /** `mailbox`: a scheduled run's turn (tools that name their thread; see tools.ts). Default `thread`. */
    scope?: 'thread' | 'mailbox';
  }): Promise<AgentTurn>;
}

export interface MailboxHit {
  messageId: string;
  threadId: string;
  from: string;
  subject: string;
  date: string;
  snippet: string;
}

export interface AgentGmailActivities {
  /** A Gmail search in the account the thread belongs to (never another's). */
  searchMailbox(input: { accountId: string; query: string; maxResults: number }): Promise<MailboxHit[]>;
}

export interface AgentStoreActivities {
  /** What Postgres knows of a sender for this account: earlier threads, drafts and their fates. */
  senderHistory(input: { accountId: string; sender: string }): Promise<string>;
  /** Writes a run's steps (idempotent by run key and step number). */
  recordAgentSteps(input: { accountId: string; threadId: string; runKey: string; profile: string; steps: AgentStepRecord[] }): Promise<void>;
}
