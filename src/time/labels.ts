// Timer labels a user sets in Gmail, e.g. on a phone: "Snooze/Tomorrow", "Snooze/Next week",
// "Remind/3 days", "Send/Tomorrow 8:00". The prefixes are settings (SNOOZE_LABEL_PREFIX, ...); the
// rest of the name is a "when" text (phrases.ts). Names are compared as strings, never made into a pattern.
import { TimeSpecError } from './local-time.js';
import { parseWhen, type WhenSpec } from './when.js';

export type TimerKind = 'snooze' | 'remind' | 'send_later';

export interface TimerLabelPrefixes {
  snooze: string;
  remind: string;
  sendLater: string;
}

export const DEFAULT_TIMER_LABEL_PREFIXES: TimerLabelPrefixes = {
  snooze: 'Snooze',
  remind: 'Remind',
  sendLater: 'Send',
};

/** Gmail's longest label name; a longer one is not ours to read. */
export const MAX_LABEL_NAME = 225;

export interface TimerFromLabel {
  kind: TimerKind;
  when: WhenSpec;
}

/** A timer label whose time cannot be read: which kind it is, and why (for the user). */
export interface UnreadableTimerLabel {
  kind: TimerKind;
  problem: string;
}

/**
 * What a label means: a timer, a timer label whose time is unreadable, or undefined for any other
 * label (including a bare prefix such as "Snooze", the parent Gmail shows the nested labels under).
 */
export function readTimerLabel(
  name: string,
  prefixes: TimerLabelPrefixes,
): TimerFromLabel | UnreadableTimerLabel | undefined {
  if (typeof name !== 'string' || name.length > MAX_LABEL_NAME) return undefined;
  const lower = name.toLowerCase();
  // Longest prefix first: with prefixes "Later" and "Later/Send", "Later/Send/Tomorrow" is a send.
  const kinds = (
    Object.entries({ snooze: prefixes.snooze, remind: prefixes.remind, send_later: prefixes.sendLater }) as [
      TimerKind,
      string,
    ][]
  )
    .map(([kind, prefix]) => [kind, prefix.trim().replace(/\/+$/, '')] as const)
    .filter(([, prefix]) => prefix.length > 0)
    .sort((a, b) => b[1].length - a[1].length);
  for (const [kind, prefix] of kinds) {
    if (!lower.startsWith(`${prefix.toLowerCase()}/`)) continue;
    const text = name.slice(prefix.length + 1);
    try {
      return { kind, when: parseWhen(text) };
    } catch (err) {
      if (!(err instanceof TimeSpecError)) throw err;
      return { kind, problem: `label ${JSON.stringify(name)}: ${err.message}` };
    }
  }
  return undefined;
}

/** The timer a label asks for, or undefined when it is not a timer label or its time cannot be read. */
export function timerFromLabel(name: string, prefixes: TimerLabelPrefixes): TimerFromLabel | undefined {
  const read = readTimerLabel(name, prefixes);
  return read && 'when' in read ? read : undefined;
}
