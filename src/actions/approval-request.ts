// What an approval request says about an action, the same on the page and in Discord: who proposed
// it in words, the account it acts in, and which decisions its state still allows.
import type { SqlExecutor } from '../quota/sql.js';
import { reversalOf, type ActionReason, type JournaledAction } from './contracts.js';
import type { Decision } from './decide.js';

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
