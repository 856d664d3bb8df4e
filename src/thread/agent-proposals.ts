// The boundary of a scheduled run's proposals to a thread (the agentProposal signal): what it may
// carry, checked with zod where it comes in (the workflow's handler and the hand-off activity).
// The policy judges every action again in the thread; this only keeps malformed signals out.
// Workflow-safe: zod and plain data only.
import { z } from 'zod';
import { isGmailSystemLabel } from '../gmail/system-labels.js';
import type { AgentProposalEvent } from './contracts.js';

/** What a scheduled run's agent may propose for a thread: label changes, archive, a reply. */
export const PROPOSABLE_KINDS = ['archive', 'add_label', 'remove_label', 'auto_reply'] as const;

const userLabel = z.string().trim().min(1).max(225).refine((name) => !isGmailSystemLabel(name), 'a Gmail system label');

const proposal = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('archive') }),
  z.object({ kind: z.literal('add_label'), argument: userLabel }),
  z.object({ kind: z.literal('remove_label'), argument: userLabel }),
  z.object({ kind: z.literal('auto_reply'), result: z.object({ body: z.string().min(1).max(20_000), mailboxRead: z.array(z.string().max(500)).max(50).optional() }) }),
]);

export const agentProposalEventSchema = z.object({
  type: z.literal('agent_proposal'),
  requestId: z.string().min(1).max(300),
  messageId: z.string().min(1).max(200),
  sender: z.string().max(320),
  subject: z.string().max(1000),
  actions: z
    .array(
      z.intersection(
        proposal,
        z.object({
          reason: z.object({ source: z.literal('agent'), profile: z.string().min(1).max(100), step: z.number().int().min(0), readsMailbox: z.boolean().optional() }),
        }),
      ),
    )
    .min(1)
    .max(5),
  sendsNeedApproval: z.string().max(500).optional(),
  by: z.string().min(1).max(300),
});

/** The event, when it is one the signal may carry; else why not. */
export function parseAgentProposal(raw: unknown): { event: AgentProposalEvent } | { error: string } {
  const parsed = agentProposalEventSchema.safeParse(raw);
  if (parsed.success) return { event: parsed.data as AgentProposalEvent };
  const issue = parsed.error.issues[0]!;
  return { error: `${issue.path.join('.') || 'input'}: ${issue.message}` };
}
