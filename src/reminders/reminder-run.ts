// Workflow code: one run of a reminder workflow and its Temporal plumbing. The activities and their
// queues, the signal that says the row changed, the durable timer, continue-as-new.
// reminder-workflow.ts holds the process that uses it.
import { ActivityFailure } from '@temporalio/common';
import { condition, continueAsNew, proxyActivities, proxyLocalActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import { activityErrorText } from '../temporal/workflow-failures.js';
import {
  reminderChangedSignal,
  type OccurrenceRef,
  type ReminderDeliveryActivities,
  type ReminderStoreActivities, type ReminderPlan, type ReminderWorkflowInput } from './contracts.js';

/** A run hands over to a fresh one after this many occurrences (or when the server suggests it): history stays short. */
export const OCCURRENCES_PER_RUN = 100;

export type DueOccurrence = Extract<ReminderPlan, { kind: 'due' }>;

export class ReminderRun {
  readonly reminderId: string;
  readonly catchUpWindowMs: number;
  private readonly store: ReminderStoreActivities;
  private readonly gmail: ReminderDeliveryActivities;
  /** The row changed since the last plan (paused, resumed, removed, a new zone). */
  private changed = false;
  private lastDueAt: string | undefined;
  private handledThisRun = 0;

  constructor(private readonly input: ReminderWorkflowInput) {
    this.reminderId = input.reminderId;
    this.catchUpWindowMs = input.catchUpWindowMs;
    this.lastDueAt = input.lastDueAt;
    this.store = proxyLocalActivities<ReminderStoreActivities>({
      startToCloseTimeout: '30 seconds',
      retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
    });
    // Delivery is retried until it would be later than the catch-up window; then it is skipped.
    this.gmail = proxyActivities<ReminderDeliveryActivities>({
      taskQueue: input.gmailTaskQueue,
      startToCloseTimeout: input.deliveryTimeoutMs ?? '2 minutes',
      scheduleToCloseTimeout: Math.max(input.catchUpWindowMs, 60_000),
      retry: { initialInterval: '1 second', maximumInterval: '2 minutes', nonRetryableErrorTypes: ['ReminderNotFound'] },
    });
    setHandler(reminderChangedSignal, () => {
      this.changed = true;
    });
  }

  /** What comes next, from the row: an occurrence, a pause, or the end. */
  async plan(): Promise<ReminderPlan> {
    this.changed = false;
    return this.store.planReminder({
      reminderId: this.reminderId,
      ...(this.lastDueAt ? { after: this.lastDueAt } : {}),
      now: new Date(Date.now()).toISOString(),
      catchUpWindowMs: this.catchUpWindowMs,
    });
  }

  /** Sleeps on a durable timer until the occurrence is due; false when the row changed first. */
  async sleepUntil(occurrence: DueOccurrence): Promise<boolean> {
    const waitMs = Date.parse(occurrence.dueAt) - Date.now();
    if (waitMs <= 0) return !this.changed;
    return !(await condition(() => this.changed, waitMs));
  }

  async changeSignalled(): Promise<void> {
    await condition(() => this.changed);
  }

  /** How late the occurrence is now (workflow time: the worker that woke may have been down). */
  lateMs(occurrence: DueOccurrence): number {
    return Date.now() - Date.parse(occurrence.dueAt);
  }

  /** Delivers; an error that outlasts the catch-up window is returned as the reason to skip it. */
  async deliver(occurrence: OccurrenceRef): Promise<{ delivered: true } | { delivered: false; why: string }> {
    try {
      await this.gmail.deliverReminder(occurrence);
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      return { delivered: false, why: `could not deliver: ${activityErrorText(err)}` };
    }
    await this.store.markOccurrenceSent(occurrence);
    return { delivered: true };
  }

  async skip(occurrence: OccurrenceRef, why: string): Promise<void> {
    await this.store.skipOccurrence({ ...occurrence, why });
  }

  handled(occurrence: OccurrenceRef): void {
    this.lastDueAt = occurrence.dueAt;
    this.handledThisRun++;
  }

  get historyIsLong(): boolean {
    return this.handledThisRun >= (this.input.occurrencesPerRun ?? OCCURRENCES_PER_RUN) || workflowInfo().continueAsNewSuggested;
  }

  async continueAsNew(): Promise<never> {
    return continueAsNew<(input: ReminderWorkflowInput) => Promise<unknown>>({
      ...this.input,
      ...(this.lastDueAt ? { lastDueAt: this.lastDueAt } : {}),
    });
  }
}
