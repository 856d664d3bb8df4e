// Which step each event leads to in each state of a thread: the thread workflow's rules, as data.
// Pure (no Temporal, no I/O): the workflow asks nextStep() for every event it takes off its queue,
// and test/thread/transitions.test.ts checks every (state, event) pair.
import {
  CLOSED_STATES,
  type ActionDecisionEvent,
  type ActionDueEvent,
  type AgentProposalEvent,
  type DraftGoneEvent,
  type LabelsChangedEvent,
  type MessageAddedEvent,
  type OpenAction,
  type SentSeenEvent,
  type ThreadEvent,
  type ThreadState,
  type TimerRequestEvent,
  type Wake,
  type WakeEvent,
} from './contracts.js';

/** An event as the rules see it: the signal, read against what the thread knows. */
export type EventKind =
  /** A message from someone else, not classified yet. */
  | 'inbound_mail'
  /** A message this thread classified before (a redelivery). */
  | 'redelivered_mail'
  /** A draft message appeared (ours, or the user's own): drafts are not mail. */
  | 'draft_message'
  /** The user sent a message and we have no draft in the thread: they answered on their own. */
  | 'user_replied'
  /** The user sent a message while our draft is in the thread: perhaps it was ours. */
  | 'draft_maybe_sent'
  /** Our current draft message was deleted: sent, discarded, or replaced by an edit. */
  | 'draft_gone'
  /** A draft message that is not our current one was deleted (an older version of it). */
  | 'stale_draft_gone'
  | 'done_label'
  | 'rework_label'
  | 'needs_response_label'
  /** Label changes without a step (removals). */
  | 'other_labels'
  /** Request labels a gap repair found on the thread: look which are still there. */
  | 'labels_to_recheck'
  /** A message one of our own sends produced (an auto-reply, a forward). */
  | 'own_send'
  /** The user sent a message while an auto-reply waits for approval as a draft: perhaps that draft. */
  | 'approval_draft_maybe_sent'
  /** The draft of an auto-reply waiting for approval was deleted: sent or thrown away. */
  | 'approval_draft_gone'
  /** The user approved, rejected or undid an action (CLI, page, Discord link, signal). */
  | 'action_decision'
  /** An open action's time came: its approval expired, or its send delay is over. */
  | 'action_due'
  /** The user asked for the thread to be classified again. */
  | 'reclassify_request'
  /** The user asked for a timer: snooze, remind, send later. */
  | 'timer_request'
  /** The user asked for a snooze to end, or timers to be cancelled. */
  | 'timer_cancel'
  /** A message from the other side while the thread waits for their answer. */
  | 'reply_arrived'
  /** New mail in a snoozed thread: it comes back early. */
  | 'mail_while_snoozed'
  /** A timer's time came: the follow-up, the snooze's return, the reminder, the scheduled send. */
  | 'follow_up_due'
  | 'snooze_due'
  | 'remind_due'
  | 'send_later_due'
  /** A wake the run no longer holds (cancelled meanwhile). */
  | 'stale_wake'
  /** A scheduled run's agent proposes actions for the thread. */
  | 'agent_proposal';

export type Step =
  /** Read the thread, classify it (rules, then the LLM), draft when it needs a reply. */
  | 'classify'
  /** Needs Response: draft a reply to this thread. */
  | 'draft_on_request'
  /** Needs Response on a thread that has our draft: the draft answers it; the label comes off. */
  | 'clear_needs_response'
  /** Rewrite our draft with the instructions the user typed into it. */
  | 'rework'
  /** Rework with no draft of ours to rewrite: recorded, nothing changes. */
  | 'refuse_rework'
  /** Done: archive the thread; the workflow closes. */
  | 'archive'
  /** Read our draft: still there (edited) or gone (then sent or discarded). */
  | 'check_draft'
  /** The user answered without our draft: the thread is closed as sent. */
  | 'mark_replied'
  /** Read the thread's labels, then take the request labels still on it as a label change. */
  | 'recheck_labels'
  /** Read the approval draft: sent (approved in Gmail) or deleted (rejected in Gmail). */
  | 'check_approval_draft'
  /** Carry out the user's decision about an action. */
  | 'decide_action'
  /** Expire the approval, or send. */
  | 'action_due'
  /** Classify the latest inbound message again; act on the new verdict when it differs. */
  | 'reclassify'
  /** Set the timer the user asked for (journaled; a snooze archives the thread now). */
  | 'set_timer'
  /** End a snooze now, or cancel timers (journaled). */
  | 'cancel_timer'
  /** The answer came: the follow-up is cancelled, the new mail classified. */
  | 'end_wait_and_classify'
  /** The snooze ends early: the thread comes back, the new mail is classified. */
  | 'unsnooze_and_classify'
  /** No answer in time: Follow Up label, the user notified, a nudge drafted if the account allows it. */
  | 'follow_up'
  /** Back to the inbox, unread, labelled. */
  | 'return_from_snooze'
  /** Notify the user; the thread stays where it is. */
  | 'remind'
  /** Send the thread's draft as it is now, through the journaled send path. */
  | 'send_later'
  /** Judge, journal and carry out (or open for approval) what a scheduled run's agent proposes. */
  | 'propose_actions'
  | 'ignore';

/** What the rules need to know of the thread besides its state. */
export interface ThreadFacts {
  state: ThreadState;
  draftId?: string;
  draftMessageId?: string;
  handledMessageIds: readonly string[];
  openActions: readonly OpenAction[];
  sentByUs: readonly string[];
  wakes?: readonly Wake[];
}

type Row = Partial<Record<ThreadState, Step>>;

const inEveryOpenState = (step: Step): Row => ({
  pending: step,
  skipped: step,
  needs_response: step,
  drafted: step,
  rework_requested: step,
  awaiting_reply: step,
  action_required: step,
});

/**
 * The table: for each kind of event, the step in each state; a state left out ignores the event
 * (closed states ignore everything: their workflow has ended).
 */
export const TRANSITIONS: Record<EventKind, Row> = {
  inbound_mail: { pending: 'classify', skipped: 'classify', drafted: 'classify', action_required: 'classify' },
  reply_arrived: { awaiting_reply: 'end_wait_and_classify' },
  mail_while_snoozed: { pending: 'unsnooze_and_classify', skipped: 'unsnooze_and_classify', drafted: 'unsnooze_and_classify', action_required: 'unsnooze_and_classify', awaiting_reply: 'unsnooze_and_classify' },
  redelivered_mail: {},
  draft_message: {},
  user_replied: { pending: 'mark_replied', skipped: 'mark_replied', action_required: 'mark_replied', awaiting_reply: 'mark_replied' },
  draft_maybe_sent: inEveryOpenState('check_draft'),
  draft_gone: inEveryOpenState('check_draft'),
  stale_draft_gone: {},
  done_label: inEveryOpenState('archive'),
  rework_label: { ...inEveryOpenState('refuse_rework'), drafted: 'rework' },
  needs_response_label: { ...inEveryOpenState('draft_on_request'), drafted: 'clear_needs_response' },
  other_labels: {},
  labels_to_recheck: inEveryOpenState('recheck_labels'),
  own_send: {},
  approval_draft_maybe_sent: inEveryOpenState('check_approval_draft'),
  approval_draft_gone: inEveryOpenState('check_approval_draft'),
  action_decision: inEveryOpenState('decide_action'),
  action_due: inEveryOpenState('action_due'),
  reclassify_request: inEveryOpenState('reclassify'),
  timer_request: inEveryOpenState('set_timer'),
  timer_cancel: inEveryOpenState('cancel_timer'),
  follow_up_due: { awaiting_reply: 'follow_up' },
  snooze_due: inEveryOpenState('return_from_snooze'),
  remind_due: inEveryOpenState('remind'),
  send_later_due: inEveryOpenState('send_later'),
  stale_wake: {},
  agent_proposal: inEveryOpenState('propose_actions'),
};

export function stepFor(state: ThreadState, kind: EventKind): Step {
  if (CLOSED_STATES.includes(state)) return 'ignore';
  return TRANSITIONS[kind][state] ?? 'ignore';
}

/** What an event means for this thread (several request labels at once: Done, then Rework, then Needs Response). */
export function kindOf(event: ThreadEvent, facts: ThreadFacts): EventKind {
  const waiting = facts.openActions.filter((a) => a.state === 'awaiting_approval' && a.draftId !== undefined);
  const approvalDraft = waiting.length > 0;
  const sentKind = (messageId: string): EventKind => {
    if (facts.sentByUs.includes(messageId)) return 'own_send';
    if (approvalDraft) return 'approval_draft_maybe_sent';
    return facts.draftId ? 'draft_maybe_sent' : 'user_replied';
  };
  switch (event.type) {
    case 'message_added':
      if (event.labelIds.includes('DRAFT')) return 'draft_message';
      if (event.labelIds.includes('SENT')) return sentKind(event.messageId);
      if (facts.handledMessageIds.includes(event.messageId)) return 'redelivered_mail';
      if (facts.wakes?.some((w) => w.kind === 'snooze')) return 'mail_while_snoozed';
      return facts.state === 'awaiting_reply' ? 'reply_arrived' : 'inbound_mail';
    case 'sent_seen':
      return sentKind(event.messageId);
    case 'draft_gone':
      if (waiting.some((a) => a.draftMessageId === event.messageId)) return 'approval_draft_gone';
      return facts.draftId && event.messageId === facts.draftMessageId ? 'draft_gone' : 'stale_draft_gone';
    case 'action_decision':
      return 'action_decision';
    case 'action_due':
      return 'action_due';
    case 'reclassify':
      return 'reclassify_request';
    case 'agent_proposal':
      return 'agent_proposal';
    case 'timer_request':
      return event.request.kind === 'unsnooze' || event.request.kind === 'cancel' ? 'timer_cancel' : 'timer_request';
    case 'wake': {
      const wake = facts.wakes?.find((w) => w.actionId === event.actionId);
      return wake ? (`${wake.kind}_due` as const) : 'stale_wake';
    }
    case 'labels_changed':
      if (event.reconcile) return 'labels_to_recheck';
      if (event.added.includes('done')) return 'done_label';
      if (event.added.includes('rework')) return 'rework_label';
      if (event.added.includes('needsResponse')) return 'needs_response_label';
      return 'other_labels';
  }
}

/** The steps that read their event, and the event's type each reads; the others read none. */
interface StepEvents {
  decide_action: ActionDecisionEvent;
  action_due: ActionDueEvent;
  recheck_labels: LabelsChangedEvent;
  check_draft: MessageAddedEvent | SentSeenEvent | DraftGoneEvent;
  mark_replied: MessageAddedEvent | SentSeenEvent | DraftGoneEvent;
  set_timer: TimerRequestEvent;
  cancel_timer: TimerRequestEvent;
  follow_up: WakeEvent;
  return_from_snooze: WakeEvent;
  remind: WakeEvent;
  send_later: WakeEvent;
  propose_actions: AgentProposalEvent;
}

/** Each step as it is taken: with its event, narrowed, when it reads one. */
export type StepInput = { [S in Step]: S extends keyof StepEvents ? { step: S; event: StepEvents[S] } : { step: S } };

export type NextStep = StepInput[Step];

/** The step the event leads to in the thread's state, with the event as that step reads it. */
export function nextStep(facts: ThreadFacts, event: ThreadEvent): NextStep {
  const step = stepFor(facts.state, kindOf(event, facts));
  // kindOf gives each of these steps' kinds only for these event types; the checks narrow the type.
  switch (step) {
    case 'decide_action':
      return event.type === 'action_decision' ? { step, event } : { step: 'ignore' };
    case 'action_due':
      return event.type === 'action_due' ? { step, event } : { step: 'ignore' };
    case 'recheck_labels':
      return event.type === 'labels_changed' ? { step, event } : { step: 'ignore' };
    case 'set_timer':
    case 'cancel_timer':
      return event.type === 'timer_request' ? { step, event } : { step: 'ignore' };
    case 'follow_up':
    case 'return_from_snooze':
    case 'remind':
    case 'send_later':
      return event.type === 'wake' ? { step, event } : { step: 'ignore' };
    case 'propose_actions':
      return event.type === 'agent_proposal' ? { step, event } : { step: 'ignore' };
    case 'check_draft':
    case 'mark_replied':
      return event.type === 'message_added' || event.type === 'sent_seen' || event.type === 'draft_gone' ? { step, event } : { step: 'ignore' };
    default:
      return { step };
  }
}
