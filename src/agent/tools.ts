// The agent's tools as the model sees them (name, description, JSON schema) and the zod schema each
// call's input must pass. The turn's activity checks every call against these before the workflow
// runs it; mail content never widens what a tool can do (no tool takes a recipient or an account).
import { z } from 'zod';
import { isGmailSystemLabel } from '../gmail/system-labels.js';
import type { AgentToolName } from './contracts.js';

// A user label only: Gmail's system labels (TRASH, SPAM, INBOX, ...) would trash, report or archive
// the thread past the policy's checks for those kinds.
const label = z
  .string()
  .trim()
  .min(1)
  .max(225)
  .refine((name) => !isGmailSystemLabel(name), {
    error: (issue) => `${String(issue.input)} is a Gmail system label: label tools take your own labels only (use archive to archive, escalate for the rest)`,
  });

export const TOOL_INPUTS = {
  read_thread: z.object({}).strict(),
  search_mailbox: z.object({ query: z.string().trim().min(1).max(200), max_results: z.number().int().min(1).max(10).optional() }).strict(),
  sender_history: z.object({}).strict(),
  write_draft: z.object({ body: z.string().trim().min(1).max(20_000) }).strict(),
  send_reply: z.object({ body: z.string().trim().min(1).max(20_000) }).strict(),
  add_label: z.object({ label }).strict(),
  remove_label: z.object({ label }).strict(),
  archive: z.object({}).strict(),
  escalate: z.object({ reason: z.string().trim().min(1).max(1000) }).strict(),
} satisfies Record<AgentToolName, z.ZodType>;

const DESCRIPTIONS: Record<AgentToolName, string> = {
  read_thread: "Read the thread you are handling: every message's sender, date, subject and text.",
  search_mailbox: "Search the user's mailbox with a Gmail query (from:, to:, subject:, newer_than:, ...). Returns sender, subject, date and snippet of up to max_results messages.",
  sender_history: 'What the assistant knows about the sender of this thread: earlier threads, decisions and drafts, and whether the user sent them.',
  write_draft: 'Write (or replace) the reply to this thread as a draft the user reviews and sends.',
  send_reply: 'Send a reply to this thread. The safety policy decides whether it goes out (after a short delay) or waits for the user\'s approval; the result says which.',
  add_label: "Add one of the user's own labels to this thread (created when missing). Gmail's system labels (INBOX, TRASH, SPAM, UNREAD, STARRED, IMPORTANT, CATEGORY_...) are refused.",
  remove_label: "Remove one of the user's own labels from this thread. Gmail's system labels are refused.",
  archive: 'Archive this thread (take it out of the inbox).',
  escalate: 'Hand the thread to the user (Action Required) with your reason, when you cannot or should not answer it yourself.',
};

/**
 * Where the agent acts: `thread`, the thread a mail started (the agent route); `mailbox`, a scheduled
 * run, which has none: its thread tools name the thread they act on (`thread_id`, from the facts'
 * links or search_mailbox), and the tools that only make sense inside a thread are not offered.
 */
export type ToolScope = 'thread' | 'mailbox';

/** The tools a scheduled run can use; the thread tools among them take a `thread_id`. */
export const MAILBOX_SCOPE_TOOLS: readonly AgentToolName[] = ['search_mailbox', 'add_label', 'remove_label', 'archive', 'send_reply', 'escalate'];
const NAMES_A_THREAD: readonly AgentToolName[] = ['add_label', 'remove_label', 'archive', 'send_reply'];

const threadId = z
  .string()
  .trim()
  .regex(/^[0-9A-Za-z_-]{1,100}$/, 'expected a Gmail thread id (the #all/<id> of a link in the facts, or a search_mailbox hit\'s thread)');

const MAILBOX_DESCRIPTIONS: Partial<Record<AgentToolName, string>> = {
  send_reply: "Reply in the thread thread_id. The safety policy decides whether it goes out (after a short delay) or waits for the user's approval; the result says which.",
  add_label: "Add one of the user's own labels to the thread thread_id (created when missing). Gmail's system labels are refused.",
  remove_label: "Remove one of the user's own labels from the thread thread_id. Gmail's system labels are refused.",
  archive: 'Archive the thread thread_id (take it out of the inbox). The safety policy decides whether it happens now or waits for the user.',
  escalate: 'Stop and hand the whole run to the user with your reason.',
};

/** The tools the profile may use in this scope. */
export function toolsIn(tools: readonly AgentToolName[], scope: ToolScope): AgentToolName[] {
  return scope === 'mailbox' ? tools.filter((t) => MAILBOX_SCOPE_TOOLS.includes(t)) : [...tools];
}

function inputSchema(name: AgentToolName, scope: ToolScope): z.ZodObject {
  const base = TOOL_INPUTS[name];
  return scope === 'mailbox' && NAMES_A_THREAD.includes(name) ? base.extend({ thread_id: threadId }) : base;
}

export interface ToolDefinition {
  name: AgentToolName;
  description: string;
  input_schema: { type: 'object'; [key: string]: unknown };
}

export function toolDefinitions(tools: readonly AgentToolName[], scope: ToolScope = 'thread'): ToolDefinition[] {
  return toolsIn(tools, scope).map((name) => {
    const { $schema: _ignored, ...schema } = z.toJSONSchema(inputSchema(name, scope)) as Record<string, unknown>;
    const description = (scope === 'mailbox' ? MAILBOX_DESCRIPTIONS[name] : undefined) ?? DESCRIPTIONS[name];
    return { name, description, input_schema: { ...schema, type: 'object' } };
  });
}

/** The call's input, parsed; or why it failed its schema (the model gets this and may try again). */
export function checkToolInput(name: AgentToolName, input: unknown, scope: ToolScope = 'thread'): { ok: true; input: unknown } | { ok: false; message: string } {
  const parsed = inputSchema(name, scope).safeParse(input);
  if (parsed.success) return { ok: true, input: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { ok: false, message: `invalid input for ${name}: ${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}` };
}
