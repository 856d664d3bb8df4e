// User schedules' boundary, as plain data (workflow-safe): when a schedule runs, what a run gets and
// returns, and the facts a brief or a digest is written from. zod at the edges (CLI, rows).
import { z } from 'zod';
import type { AgentProfile } from '../agent/contracts.js';

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** When a schedule runs, in its time zone: a time of day on some weekdays, or a cron expression. */
export const scheduleTiming = z.union([
  z.object({
    at: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM (24-hour)'),
    days: z.array(z.enum(WEEKDAYS)).min(1).default([...WEEKDAYS]),
  }).strict(),
  z.object({
    cron: z.string().trim().regex(/^\S+(\s+\S+){4}$/, 'expected five cron fields: minute hour day-of-month month day-of-week'),
  }).strict(),
]);
export type ScheduleTiming = z.infer<typeof scheduleTiming>;

/** A schedule as stored (table agent_schedules). */
export interface AgentScheduleRow {
  id: string;
  accountId: string;
  name: string;
  profile: string;
  prompt: string;
  timing: ScheduleTiming;
  /** Null: the account's zone. */
  timeZone: string | null;
  label: string;
  discord: boolean;
  deliveryThreadId: string | null;
}

/** The Temporal Schedule of a user schedule, and the id prefix of its runs' workflows. */
export const scheduleIdOf = (id: string): string => `schedule-${id}`;

/** Policies every user schedule gets (docs/time.md). */
export interface SchedulePolicies {
  /** A run missed while the cluster was down runs once when it is back within this long; later, never. */
  catchupWindowMs: number;
  /** Each run starts up to this long after its time, spread by schedule (many accounts share 07:30). */
  jitterMs: number;
}

export interface ScheduledRunInput {
  scheduleId: string;
  /** Tests and benches: their own task queues. */
  taskQueues?: { workflow: string; gmail: string; llm: string };
  /** A manual run (CLI trigger): the time it stands for; a Schedule's own run reads its action time. */
  scheduledAt?: string;
  /** Activity timeouts (tests). */
  activityTimeouts?: { gmailMs?: number; llmMs?: number };
}

export type ScheduledRunStatus = 'delivered' | 'failed' | 'duplicate' | 'gone';

export interface ScheduledRunResult {
  status: ScheduledRunStatus;
  /** The local date and time the run stands for (yyyy-MM-dd HH:mm in the schedule's zone). */
  localSlot?: string;
  gmailMessageId?: string;
  note?: string;
}

/** One thread a report mentions: what it is and where to open it. */
export interface FactItem {
  threadId: string;
  subject: string;
  from: string;
  /** Why it is listed, e.g. "expires 2026-11-27 09:00". */
  detail: string;
  link: string;
}

/** The sections of a brief or a digest, gathered before the model writes. */
export interface ScheduleFacts {
  kind: 'brief' | 'digest' | 'other';
  since: string;
  sections: { title: string; items: FactItem[]; note?: string }[];
  /** What the assistant did since the last run: counts by action kind. */
  done: Record<string, number>;
}

/** What a claimed run needs: the schedule, its profile's name, since when it reports. */
export interface ClaimedRun {
  kind: 'claimed';
  schedule: AgentScheduleRow;
  /** Null when the profile was removed since: the run reports that instead. */
  profile: AgentProfile | null;
  email: string;
  zone: string;
  localSlot: string;
  /** The previous delivered run's start, else a day before this one. */
  since: string;
}

export type RunClaim = ClaimedRun | { kind: 'duplicate'; localSlot: string; by: string } | { kind: 'gone' };
