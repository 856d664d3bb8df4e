// The thread workflow's signals and query, shared with the ingest function. accountReconnected
// is the account's (src/accounts/account-access.ts).
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { DraftGoneEvent, LabelsChangedEvent, MessageAddedEvent, SentSeenEvent, ThreadStatus } from './contracts.js';

export const newMessageSignal = defineSignal<[MessageAddedEvent]>('newMessage');
export const labelsChangedSignal = defineSignal<[LabelsChangedEvent]>('labelsChanged');
export const draftGoneSignal = defineSignal<[DraftGoneEvent]>('draftGone');
export const sentSeenSignal = defineSignal<[SentSeenEvent]>('sentSeen');
export const threadStatusQuery = defineQuery<ThreadStatus>('status');
