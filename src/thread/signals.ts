// The thread workflow's signals and query, shared with the ingest function. accountReconnected
// is the account's (src/accounts/account-access.ts).
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { ActionDecisionEvent } from '../actions/contracts.js';
import type { DraftGoneEvent, LabelsChangedEvent, MessageAddedEvent, ReclassifyEvent, SentSeenEvent, ThreadStatus } from './contracts.js';

export const newMessageSignal = defineSignal<[MessageAddedEvent]>('newMessage');
export const labelsChangedSignal = defineSignal<[LabelsChangedEvent]>('labelsChanged');
export const draftGoneSignal = defineSignal<[DraftGoneEvent]>('draftGone');
export const sentSeenSignal = defineSignal<[SentSeenEvent]>('sentSeen');
/** Approve, reject or undo one of the thread's actions (the CLI, the approvals page, Discord's link, `temporal workflow signal`). */
export const actionDecisionSignal = defineSignal<[ActionDecisionEvent]>('actionDecision');
/** Classify the thread again, after a rule changed (`threads reclassify`). */
export const reclassifySignal = defineSignal<[ReclassifyEvent]>('reclassify');
export const threadStatusQuery = defineQuery<ThreadStatus>('status');
