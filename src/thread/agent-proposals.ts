// The boundary of a scheduled run's proposals to a thread (the agentProposal signal): what it may
// carry, checked where it comes in (the workflow's handler and the hand-off activity). The policy
// judges every action again in the thread; this only keeps malformed signals out. Workflow-safe:
// plain checks (src/shared/plain-checks.ts), no schema library in workflow code.
import { isGmailSystemLabel } from '../gmail/system-labels.js';
import {
  checkArray,
  checkBoolean,
  checked,
  checkInteger,
  checkLiteral,
  checkObject,
  checkOneOf,
  checkString,
  CheckFailure,
  optionalField,
  type CheckPath,
} from '../shared/plain-checks.js';
import type { AgentProposalEvent } from './contracts.js';

/** What a scheduled run's agent may propose for a thread: label changes, archive, a reply. */
export const PROPOSABLE_KINDS = ['archive', 'add_label', 'remove_label', 'auto_reply'] as const;

type ProposedByAgent = AgentProposalEvent['actions'][number];

function userLabel(value: unknown, path: CheckPath): string {
  const name = checkString(value, path, { min: 1, max: 225, trim: true });
  if (isGmailSystemLabel(name)) throw new CheckFailure(path, 'a Gmail system label');
  return name;
}

/** One proposed action, with only the fields its kind has, then its reason. */
function checkProposal(value: unknown, path: CheckPath): ProposedByAgent {
  const o = checkObject(value, path);
  const kind = checkOneOf(o['kind'], PROPOSABLE_KINDS, [...path, 'kind']);
  const action =
    kind === 'archive'
      ? { kind }
      : kind === 'auto_reply'
        ? { kind, result: checkReply(o['result'], [...path, 'result']) }
        : { kind, argument: userLabel(o['argument'], [...path, 'argument']) };
  const r = checkObject(o['reason'], [...path, 'reason']);
  const reason = {
    source: checkLiteral(r['source'], 'agent', [...path, 'reason', 'source']),
    profile: checkString(r['profile'], [...path, 'reason', 'profile'], { min: 1, max: 100 }),
    step: checkInteger(r['step'], [...path, 'reason', 'step'], { min: 0 }),
    ...optionalField(r, 'readsMailbox', [...path, 'reason'], checkBoolean),
  };
  return { ...action, reason };
}

function checkReply(value: unknown, path: CheckPath): { body: string; mailboxRead?: string[] } {
  const o = checkObject(value, path);
  return {
    body: checkString(o['body'], [...path, 'body'], { min: 1, max: 20_000 }),
    ...optionalField(o, 'mailboxRead', path, (v, p) => checkArray(v, p, { max: 50 }, (item, ip) => checkString(item, ip, { max: 500 }))),
  };
}

function checkAgentProposalEvent(value: unknown): AgentProposalEvent {
  const o = checkObject(value, []);
  return {
    type: checkLiteral(o['type'], 'agent_proposal', ['type']),
    requestId: checkString(o['requestId'], ['requestId'], { min: 1, max: 300 }),
    messageId: checkString(o['messageId'], ['messageId'], { min: 1, max: 200 }),
    sender: checkString(o['sender'], ['sender'], { max: 320 }),
    subject: checkString(o['subject'], ['subject'], { max: 1000 }),
    actions: checkArray(o['actions'], ['actions'], { min: 1, max: 5 }, checkProposal),
    ...optionalField(o, 'sendsNeedApproval', [], (v, p) => checkString(v, p, { max: 500 })),
    by: checkString(o['by'], ['by'], { min: 1, max: 300 }),
  };
}

/** The event, when it is one the signal may carry; else why not. */
export function parseAgentProposal(raw: unknown): { event: AgentProposalEvent } | { error: string } {
  const result = checked(() => checkAgentProposalEvent(raw));
  return 'value' in result ? { event: result.value } : result;
}
