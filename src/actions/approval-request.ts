// What an approval request says about an action, the same on the page and in Discord: who proposed
// it in words, the account it acts in, and which decisions its state still allows.
import type { SqlExecutor } from '../db/sql-executor.js';
import { type ActionReason, type Decision, type JournaledAction, reversalOf } from './contracts.js';

export function reasonText(reason: ActionReason): string {
  switch (reason.source) {
    case 'rule':
      return `rule ${reason.ruleId}`;
    case 'llm':
      return `the LLM (confidence ${reason.confidence.toFixed(2)}${reason.model ? `, ${reason.model}` : ''})`;
    case 'user':
      return 'you';
    case 'agent':
      return `agent ${reason.profile}, step ${reason.step}`;
    case 'system':
      return `the thread's lifecycle (${reason.why})`;
  }
}

/** Who an action sends to or is addressed to, as the policy judged them ('' for an action that sends nothing). */
export function recipientsText(action: Pick<JournaledAction, 'kind' | 'argument' | 'recipients'>): string {
  if (action.recipients.length > 0) return action.recipients.join(', ');
  return action.kind === 'forward' ? (action.argument ?? '') : '';
}

/** The first lines of what a send would send: an auto-reply's text, or what a forward carries. */
export function replyPreview(action: Pick<JournaledAction, 'kind' | 'result'>, lines = 4, chars = 300): string {
  if (action.kind === 'forward') return '(the message, forwarded)';
  if (action.kind !== 'auto_reply' || !action.result?.body) return '';
  const head = action.result.body.replace(/\r\n?/g, '\n').trim().split('\n').slice(0, lines).join('\n');
  return head.length > chars ? `${head.slice(0, chars - 1)}…` : head.length < action.result.body.trim().length ? `${head}\n…` : head;
}

export async function accountEmail(db: SqlExecutor, accountId: string): Promise<string | null> {
  const [row] = await db.query<{ email: string }>('SELECT email FROM accounts WHERE id = $1', [accountId]);
  return row?.email ?? null;
}

/** The decisions worth offering for an action in its state (decideAction refuses the others). */
export function openDecisions(action: Pick<JournaledAction, 'kind' | 'argument' | 'state'>): Decision[] {
  switch (action.state) {
    case 'awaiting_approval':
      return ['approve', 'reject'];
    case 'scheduled':
      return ['undo']; // a send waiting out its delay: undo cancels it (reject would too)
    case 'done':
      return reversalOf(action, action.state).kind === 'none' ? [] : ['undo'];
    default:
      return [];
  }
}
