// The thread workflow's signals and query: shared by every version of its code and by the ingest.
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { DraftGoneEvent, LabelsChangedEvent, MessageAddedEvent, SentSeenEvent, ThreadStatus } from './contracts.js';

export const newMessageSignal = defineSignal<[MessageAddedEvent]>('newMessage');
export const labelsChangedSignal = defineSignal<[LabelsChangedEvent]>('labelsChanged');
export const draftGoneSignal = defineSignal<[DraftGoneEvent]>('draftGone');
export const sentSeenSignal = defineSignal<[SentSeenEvent]>('sentSeen');
export const accountReconnectedSignal = defineSignal('accountReconnected');
export const threadStatusQuery = defineQuery<ThreadStatus>('status');
