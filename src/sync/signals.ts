// The sync workflow's signals and query (workflow code; callers import them from here or from
// sync-workflow.ts).
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { FullScanRequest, SyncNotification, SyncStatus } from './contracts.js';

export const syncNotifySignal = defineSignal<[SyncNotification]>('syncNotify');
export const syncFullScanSignal = defineSignal<[FullScanRequest]>('syncFullScan');
export const syncStatusQuery = defineQuery<SyncStatus>('syncStatus');
