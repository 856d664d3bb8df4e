// What the reminder workflow, its activities and its clients share: the workflow's input, its
// signal, the activities as types (workflow code imports only these), and the workflow id.
import { defineSignal } from '@temporalio/workflow';

export function reminderWorkflowId(reminderId: string): string {
  return `reminder/${reminderId}`;
}

export interface ReminderWorkflowInput {
  reminderId: string;
  /** The task queue of the delivery activity (the Gmail worker's). */
  gmailTaskQueue: string;
  /** An occurrence this much later than its time (the cluster or the workers were down) is skipped, not delivered. */
  catchUpWindowMs: number;
  /** Carried over continue-as-new: the last occurrence handled (delivered or skipped), ISO. */
  lastDueAt?: string;
  /** How long one delivery attempt may take before it is tried again (a worker that died mid-call); default 2 minutes. */
  deliveryTimeoutMs?: number;
  /** A run continues as new after this many occurrences (default OCCURRENCES_PER_RUN). */
  occurrencesPerRun?: number;
}

/** Why a missed occurrence was skipped, in words: "missed: 3 h 5 min late, past the catch-up window of 1 h". */
export function missedWhy(lateMs: number, windowMs: number): string {
  return `missed: ${duration(lateMs)} late, past the catch-up window of ${duration(windowMs)}`;
}

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 120) return `${min} min`;
  const h = Math.floor(min / 60);
  return min % 60 === 0 ? `${h} h` : `${h} h ${min % 60} min`;
}

/**
 * The reminder's row changed (paused, resumed, removed, a new rule or zone, the account's zone
 * moved): the workflow plans again from Postgres, which is the truth.
 */
export const reminderChangedSignal = defineSignal<[]>('reminderChanged');

export type ReminderPlan =
  | { kind: 'due'; dueAt: string; localTime: string; /** occurrences recorded as skipped on the way (later than the catch-up window) */ skipped: number }
  | { kind: 'paused'; skipped: number }
  | { kind: 'ended'; why: 'removed' | 'finished' | 'missing'; skipped: number };

export interface OccurrenceRef {
  reminderId: string;
  dueAt: string;
  localTime: string;
}

/** Postgres steps, local activities of the workflow worker. */
export interface ReminderStoreActivities {
  /**
   * The next occurrence after `after` (and after the row's not_before) that is not later than the
   * catch-up window at `now`; older ones are recorded as skipped. Paused, removed or finished say so.
   */
  planReminder(input: { reminderId: string; after?: string; now: string; catchUpWindowMs: number }): Promise<ReminderPlan>;
  /** The occurrence was delivered: state sent (once; a skipped one stays skipped). */
  markOccurrenceSent(input: OccurrenceRef): Promise<void>;
  /** The occurrence came later than the catch-up window: recorded as skipped with why. */
  skipOccurrence(input: OccurrenceRef & { why: string }): Promise<void>;
}

export interface ReminderDelivery {
  /** Gmail message id of the e-mail in the inbox, when one was put there. */
  emailMessageId?: string;
  discordMessageId?: string;
  /** What a channel could not do (not configured, refused, an earlier attempt cut short). */
  notes: string[];
}

/** The Gmail worker's step. */
export interface ReminderDeliveryActivities {
  /**
   * Puts the reminder into the inbox (messages.insert, labelled, in the reminder's thread) and posts
   * it to the Discord webhook when configured. Idempotent per occurrence: the e-mail carries a
   * Message-ID made of the reminder and the due time, looked for before inserting, and each
   * channel's result is journaled on the occurrence's row before the next is tried.
   */
  deliverReminder(input: OccurrenceRef): Promise<ReminderDelivery>;
}

/** Reminders: where their e-mails are labelled, the catch-up window, the Discord webhook. */
export interface ReminderSettings {
  label: string;
  catchUpWindowMs: number;
  /** One delivery attempt's limit: GMAIL_ACTIVITY_TIMEOUT when set. */
  deliveryTimeoutMs?: number;
  discordWebhookUrl?: string;
}
