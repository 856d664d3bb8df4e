// Gmail history records → thread events, per thread, in history order. Pure: the sync activity
// lists, this decides, the ingest function delivers.
//   - a message added with INBOX (not a draft)     → message_added (starts or signals the thread)
//   - a message added with SENT                     → sent_seen (signals a running thread only)
//   - a message deleted                             → draft_gone (the thread checks it was its draft)
//   - one of our labels added/removed on a message  → labels_changed (keyed by history id)
//   - given the user's own labels: INBOX added, or one of theirs added/removed → labels_changed
//     too, carrying them (what the thread learns from: src/thread/correction-steps.ts)
// Drafts being created or updated (ours, mostly) produce nothing. One of our labels added to several
// messages of a thread (the user labels the conversation: its message and our draft) asks once: within
// the records given, a role added again to the thread before it was seen removed is left out.
import type { HistoryRecord } from '../mail/message.js';
import type { LabelRole, MailboxEvent } from '../thread/contracts.js';

export interface ThreadEvents {
  threadId: string;
  events: MailboxEvent[];
}

/** Gmail label id → our role, for the account's labels. */
export type LabelRoles = ReadonlyMap<string, LabelRole>;

/** Gmail label id → name, for the user's own labels (neither ours nor Gmail's system labels). */
export type UserLabels = ReadonlyMap<string, string>;

export function historyToThreadEvents(records: readonly HistoryRecord[], roles: LabelRoles, userLabels?: UserLabels): ThreadEvents[] {
  const byThread = new Map<string, MailboxEvent[]>();
  const push = (threadId: string, event: MailboxEvent) => {
    let list = byThread.get(threadId);
    if (!list) byThread.set(threadId, (list = []));
    list.push(event);
  };
  const rolesOf = (labelIds: readonly string[]) => {
    const out: LabelRole[] = [];
    for (const id of labelIds) {
      const role = roles.get(id);
      if (role && !out.includes(role)) out.push(role);
    }
    return out;
  };

  /** Per thread, our roles added in these records and not removed since: added again, they ask nothing new. */
  const standing = new Map<string, Set<LabelRole>>();
  const standingOf = (threadId: string) => {
    let set = standing.get(threadId);
    if (!set) standing.set(threadId, (set = new Set()));
    return set;
  };

  for (const record of records) {
    for (const m of record.messagesAdded) {
      if (m.labelIds.includes('DRAFT')) continue;
      if (m.labelIds.includes('INBOX')) push(m.threadId, { type: 'message_added', messageId: m.id, labelIds: [...m.labelIds] });
      if (m.labelIds.includes('SENT')) push(m.threadId, { type: 'sent_seen', messageId: m.id });
    }
    for (const m of record.messagesDeleted) {
      push(m.threadId, { type: 'draft_gone', messageId: m.id });
    }
    // Added and removed labels of one message in one record form one change.
    type Change = { threadId: string; added: LabelRole[]; removed: LabelRole[]; inboxAdded: boolean; userAdded: string[]; userRemoved: string[] };
    const changes = new Map<string, Change>();
    const change = (messageId: string, threadId: string) => {
      let c = changes.get(messageId);
      if (!c) changes.set(messageId, (c = { threadId, added: [], removed: [], inboxAdded: false, userAdded: [], userRemoved: [] }));
      return c;
    };
    const namesOf = (labelIds: readonly string[]) => (userLabels ? labelIds.flatMap((id) => userLabels.get(id) ?? []) : []);
    for (const l of record.labelsAdded) {
      const added = rolesOf(l.labelIds);
      const inbox = userLabels !== undefined && l.labelIds.includes('INBOX');
      const names = namesOf(l.labelIds);
      if (added.length === 0 && !inbox && names.length === 0) continue;
      const c = change(l.message.id, l.message.threadId);
      c.added.push(...added);
      c.inboxAdded ||= inbox;
      c.userAdded.push(...names);
    }
    for (const l of record.labelsRemoved) {
      const removed = rolesOf(l.labelIds);
      const names = namesOf(l.labelIds);
      if (removed.length === 0 && names.length === 0) continue;
      const c = change(l.message.id, l.message.threadId);
      c.removed.push(...removed);
      c.userRemoved.push(...names);
    }
    for (const [messageId, c] of changes) {
      const had = standingOf(c.threadId);
      for (const role of c.removed) had.delete(role);
      const added = c.added.filter((role) => !had.has(role));
      for (const role of added) had.add(role);
      if (added.length === 0 && c.added.length > 0 && c.removed.length === 0 && !c.inboxAdded && c.userAdded.length === 0 && c.userRemoved.length === 0) continue;
      c.added = added;
      push(c.threadId, {
        type: 'labels_changed',
        messageId,
        changeId: `h${record.id}:${messageId}`,
        added: c.added,
        removed: c.removed,
        ...(c.inboxAdded ? { inboxAdded: true } : {}),
        ...(c.userAdded.length > 0 ? { userLabelsAdded: c.userAdded } : {}),
        ...(c.userRemoved.length > 0 ? { userLabelsRemoved: c.userRemoved } : {}),
      });
    }
  }
  return [...byThread].map(([threadId, events]) => ({ threadId, events }));
}

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  });
  await Promise.all(runners);
}

/** A Gmail label the user put on a message that may ask for a timer (`Snooze/Tomorrow`): the sync reads its name. */
export interface TimerLabelAdded {
  threadId: string;
  messageId: string;
  labelId: string;
  /** Unique per change: the timer request's id, so a redelivered page sets the timer once. */
  changeId: string;
}

/** Labels added in these records whose names the caller knows to be timer labels (`timerLabelIds`). */
export function timerLabelsAdded(records: readonly HistoryRecord[], timerLabelIds: ReadonlySet<string>): TimerLabelAdded[] {
  const out: TimerLabelAdded[] = [];
  for (const record of records) {
    for (const l of record.labelsAdded) {
      for (const labelId of l.labelIds) {
        if (timerLabelIds.has(labelId)) out.push({ threadId: l.message.threadId, messageId: l.message.id, labelId, changeId: `label:h${record.id}:${l.message.id}:${labelId}` });
      }
    }
  }
  return out;
}
