// The thread workflow's signals and query, shared with the ingest function. accountReconnected
// is the account's (src/accounts/account-access.ts).
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { ActionDecisionEvent } from '../actions/contracts.js';
import type { AgentProposalEvent, DraftGoneEvent, LabelsChangedEvent, MessageAddedEvent, ReclassifyEvent, SentSeenEvent, ThreadStatus, TimerRequestEvent } from './contracts.js';

export const newMessageSignal = defineSignal<[MessageAddedEvent]>('newMessage');
export const labelsChangedSignal = defineSignal<[LabelsChangedEvent]>('labelsChanged');
export const draftGoneSignal = defineSignal<[DraftGoneEvent]>('draftGone');
export const sentSeenSignal = defineSignal<[SentSeenEvent]>('sentSeen');
/** Approve, reject or undo one of the thread's actions (the CLI, the approvals page, Discord's link, `temporal workflow signal`). */
export const actionDecisionSignal = defineSignal<[ActionDecisionEvent]>('actionDecision');
/** Classify the thread again, after a rule changed (`threads reclassify`). */
export const reclassifySignal = defineSignal<[ReclassifyEvent]>('reclassify');
/** Actions a scheduled run's agent proposes for the thread (src/schedules): judged and carried out here. */
export const agentProposalSignal = defineSignal<[AgentProposalEvent]>('agentProposal');
export const threadStatusQuery = defineQuery<ThreadStatus>('status');
/** The thread's timers (`threads snooze|unsnooze|remind|send-later`, Gmail labels): each carries a TimerRequestEvent, zod-checked on arrival (timer-requests.ts). */
export const snoozeSignal = defineSignal<[TimerRequestEvent]>('snooze');
export const unsnoozeSignal = defineSignal<[TimerRequestEvent]>('unsnooze');
export const remindSignal = defineSignal<[TimerRequestEvent]>('remind');
export const sendLaterSignal = defineSignal<[TimerRequestEvent]>('sendLater');
export const cancelTimerSignal = defineSignal<[TimerRequestEvent]>('cancelTimer');

/** The signal of each timer request kind. */
export const TIMER_SIGNALS = {
  snooze: snoozeSignal,
  unsnooze: unsnoozeSignal,
  remind: remindSignal,
  send_later: sendLaterSignal,
  cancel: cancelTimerSignal,
} as const;
