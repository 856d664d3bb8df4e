// The safety policy: for each proposed action, whether it runs now,
// waits for the user's approval, or is refused, with every reason. It applies to rule, LLM and agent
// decisions alike. Pure: its facts come from the caller (the user's settings, counts from the
// journal), never from the mail itself, so mail content cannot widen what it allows.
import { domainOf } from '../gmail/addresses.js';
import { isGmailSystemLabel } from '../gmail/system-labels.js';
import { DANGEROUS_KINDS, SENDING_KINDS, type ActionKind, type ProposedAction } from './contracts.js';

export type AllowanceScope = 'global' | 'account' | 'domain' | 'sender';

/** The user allows a dangerous kind without approval for a scope (domain: subdomains included). */
export interface Allowance {
  kind: ActionKind;
  scope: AllowanceScope;
  /** The account id, the domain or the sender address; none for global. */
  ref?: string;
}

export interface SafetyPolicy {
  allowances: Allowance[];
  /** LLM (and agent) decisions below this confidence wait for approval. */
  minConfidence: number;
  /** Addresses or domains whose mail is never archived or trashed without the user. */
  protectedSenders: string[];
  /** The only addresses a forward may go to. */
  forwardTo: string[];
  /** Automatic sends (forward, auto-reply) per account per hour; more wait for approval. */
  sendsPerHour: number;
  /** Earned autonomy: auto-reply to a sender only after this many of our drafts to them were sent unedited. */
  earnedAfter: number;
  /** The kill switch: every automatic action waits for approval (drafting goes on). */
  paused: boolean;
  /** A follow-up that falls due drafts a nudge in the thread (a draft: never sent without the user). */
  followUpNudge: boolean;
}

export const DEFAULT_SAFETY_POLICY: SafetyPolicy = {
  allowances: [],
  minConfidence: 0.8,
  protectedSenders: [],
  forwardTo: [],
  sendsPerHour: 10,
  earnedAfter: 5,
  paused: false,
  followUpNudge: false,
};

/** What the policy knows about the thread and the account, gathered by the caller. */
export interface PolicyFacts {
  accountId: string;
  /** The sender of the mail the action is about (lower-case address; '' when it has none). */
  sender: string;
  /**
   * Who an auto-reply goes to (canonical addresses): the From address, or every Reply-To address,
   * or the recipients of the user's own message. Each is judged; the send goes to exactly these.
   */
  recipients: string[];
  /** Automatic sends of this account in the last hour (from the journal). */
  sendsLastHour: number;
  /** Per recipient address: how many of our latest drafts to it the user sent unedited, in a row. */
  draftsSentUnedited: Record<string, number>;
  /** The kill-switch label is on a message in the mailbox (set from a phone, say). */
  pausedByLabel?: boolean;
}

export type PolicyOutcome = 'run' | 'needs_approval' | 'refused';

export interface PolicyVerdict {
  outcome: PolicyOutcome;
  /** Every rule that applied, in order: why it runs, waits or is refused. */
  because: string[];
}

function inDomain(address: string, domain: string): boolean {
  const d = domainOf(address);
  const want = domain.toLowerCase().replace(/^@/, '');
  return d === want || d.endsWith(`.${want}`);
}

function matchesSender(sender: string, entry: string): boolean {
  return entry.includes('@') && !entry.startsWith('@') ? sender.toLowerCase() === entry.toLowerCase() : inDomain(sender, entry);
}

/** The allowance of a kind that covers an address (the sender, or a recipient of a send). */
function allowedFor(policy: SafetyPolicy, kind: ActionKind, accountId: string, address: string): Allowance | undefined {
  return policy.allowances.find((a) => {
    if (a.kind !== kind) return false;
    switch (a.scope) {
      case 'global':
        return true;
      case 'account':
        return a.ref === accountId;
      case 'domain':
        return !!a.ref && address !== '' && inDomain(address, a.ref);
      case 'sender':
        return !!a.ref && address !== '' && address.toLowerCase() === a.ref.toLowerCase();
    }
  });
}

/** Whom the action is judged for: every recipient of an auto-reply, the sender for anything else. */
function judgedAddresses(kind: ActionKind, facts: PolicyFacts): string[] {
  return kind === 'auto_reply' ? facts.recipients : [facts.sender];
}

export function judge(action: ProposedAction, facts: PolicyFacts, policy: SafetyPolicy): PolicyVerdict {
  const refusals: string[] = [];
  const approvals: string[] = [];
  const grants: string[] = [];
  const { kind, reason } = action;

  if (kind === 'forward') {
    const to = action.argument?.toLowerCase() ?? '';
    if (!policy.forwardTo.some((allowed) => allowed.toLowerCase() === to)) {
      refusals.push(`forward to ${to || '(no address)'}: not an address you allowed forwards to`);
    }
  }
  if ((kind === 'add_label' || kind === 'remove_label') && isGmailSystemLabel(action.argument ?? '')) {
    // TRASH, SPAM or taking INBOX off would trash, report or archive past the checks of those kinds.
    refusals.push(`${kind} ${action.argument}: a Gmail system label; trash and archive are actions of their own`);
  }
  if (kind === 'auto_reply' && facts.recipients.length === 0) refusals.push('auto-reply: the mail has no address to reply to');
  // An unsubscribe by mail goes where the sender's header says: elsewhere than the sender's domain
  // it could make the mailbox write to a third party, so the user sees it whoever asked.
  const mailedElsewhere = kind === 'unsubscribe' ? facts.recipients.filter((r) => facts.sender === '' || !inDomain(r, domainOf(facts.sender))) : [];
  if (mailedElsewhere.length > 0) approvals.push(`the unsubscribe mail goes to ${mailedElsewhere.join(', ')}, outside the sender's domain`);
  if (reason.source === 'user') {
    if (refusals.length === 0 && mailedElsewhere.length > 0) return { outcome: 'needs_approval', because: approvals };
    // The user asked for it (a label, the CLI, the approvals page): nothing to approve.
    return refusals.length > 0 ? { outcome: 'refused', because: refusals } : { outcome: 'run', because: ['asked for by you'] };
  }

  // Drafting goes on under the kill switch: a draft changes nothing the user has not seen.
  if (kind !== 'draft' && policy.paused) approvals.push('automatic actions are paused (kill switch)');
  if (kind !== 'draft' && facts.pausedByLabel) approvals.push('automatic actions are paused (the pause label is set in Gmail)');
  if ((kind === 'archive' || kind === 'trash') && facts.sender !== '' && policy.protectedSenders.some((p) => matchesSender(facts.sender, p))) {
    approvals.push(`${facts.sender} is a protected sender: never ${kind === 'archive' ? 'archived' : 'trashed'} without you`);
  }
  if ((reason.source === 'llm' || reason.source === 'agent') && 'confidence' in reason && reason.confidence < policy.minConfidence) {
    approvals.push(`the model's confidence ${reason.confidence.toFixed(2)} is below ${policy.minConfidence.toFixed(2)}`);
  }
  if (kind === 'auto_reply') {
    // A reply that goes elsewhere than the mail came from (Reply-To, a list) is the user's to see.
    const elsewhere = facts.recipients.filter((r) => r !== facts.sender);
    if (elsewhere.length > 0) approvals.push(`the reply goes to ${elsewhere.join(', ')}, not (only) to the sender ${facts.sender || '(none)'}`);
  }
  if (DANGEROUS_KINDS.includes(kind)) {
    // Every address it is for must be allowed (an auto-reply's every recipient).
    for (const address of judgedAddresses(kind, facts)) {
      const allowance = allowedFor(policy, kind, facts.accountId, address);
      const whom = kind === 'auto_reply' ? ` to ${address}` : '';
      if (!allowance) approvals.push(`${kind}${whom} needs your approval unless you allow it (global, account, domain or sender)`);
      else grants.push(`${kind}${whom} allowed for ${allowance.scope}${allowance.ref ? ` ${allowance.ref}` : ''}`);
    }
  }
  if (kind === 'auto_reply') {
    // Earned autonomy is per recipient address: drafts the user sent unedited to that address.
    for (const address of facts.recipients) {
      const unedited = facts.draftsSentUnedited[address] ?? 0;
      if (unedited < policy.earnedAfter) {
        approvals.push(`auto-reply to ${address} is earned after ${policy.earnedAfter} of our drafts sent unedited in a row; so far ${unedited}`);
      } else {
        grants.push(`earned: your last ${unedited} drafts to ${address} went out unedited`);
      }
    }
  }
  if (SENDING_KINDS.includes(kind) && reason.source === 'agent' && reason.readsMailbox) {
    // Mail could steer such an agent into sending the user's other mail to the sender.
    approvals.push(`agent ${reason.profile} can read your other mail and send: what it sends always waits for you`);
  }
  if (SENDING_KINDS.includes(kind) && facts.sendsLastHour >= policy.sendsPerHour) {
    approvals.push(`${facts.sendsLastHour} automatic sends in the last hour: the cap is ${policy.sendsPerHour}`);
  }

  if (refusals.length > 0) return { outcome: 'refused', because: [...refusals, ...approvals] };
  if (approvals.length > 0) return { outcome: 'needs_approval', because: approvals };
  return { outcome: 'run', because: grants.length > 0 ? grants : [`${kind} is not a dangerous action`] };
}
