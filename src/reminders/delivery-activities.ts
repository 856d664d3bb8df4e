// Delivering one occurrence of a reminder (Gmail worker): an e-mail put into the account's own inbox
// (messages.insert, labelled, threaded per reminder) and, when configured, a Discord webhook post.
//
// Once per occurrence, whatever fails: the e-mail's Message-ID is made of the reminder and the due
// time (the idempotency key), and a retry looks for it (rfc822msgid:) before inserting, so a worker
// killed after Gmail took the message and before anything was journaled does not put a second one
// there. Discord has no such key: the post is marked started on the occurrence's row first, and a
// retry that finds it started without a message id does not post again (the worker died mid-post;
// the e-mail is the record). Each channel's result is journaled before the next is tried.
import { ApplicationFailure } from '@temporalio/common';
import type { MailboxAccess } from '../accounts/mailbox-accounts.js';
import { needsReconnect } from '../accounts/mailbox-failures.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { insertOnce } from '../mail/insert-once.js';
import type { Mailbox } from '../mail/mailbox.js';
import { buildPlainTextMessage, toRaw } from '../gmail/mime.js';
import { executeWebhook } from '../shared/discord-webhook.js';
import { displaySafe } from '../shared/display-text.js';
import type { OccurrenceRef, ReminderDelivery, ReminderDeliveryActivities } from './contracts.js';
import { describeRecurrence } from './recurrence.js';
import {
  addOccurrenceNotes,
  clearDiscordPost,
  loadOccurrence,
  loadReminder,
  openOccurrence,
  saveOccurrenceDiscord,
  saveOccurrenceEmail,
  setReminderThread,
  startDiscordPost,
  type ReminderRow,
} from './reminder-store.js';

/** The header that marks our reminder e-mails (the built-in rule files them as fyi: no actions, no reply). */
export const REMINDER_MARKER_HEADER = 'X-Durable-Inbox-Reminder';

export interface ReminderDeliveryDeps {
  db: SqlExecutor;
  accounts: MailboxAccess;
  /** The label on every reminder e-mail. */
  label: string;
  discordWebhookUrl?: string;
}

/** The e-mail's Message-ID: the idempotency key of the occurrence (our ids only, no user text). */
export function reminderMessageId(reminderId: string, dueAt: Date): string {
  return `<reminder.${reminderId}.${dueAt.getTime()}@durable-inbox.local>`;
}

/** The reminder's thread starts at this Message-ID; every occurrence's e-mail refers to it. */
function threadRootId(reminderId: string): string {
  return `<reminder.${reminderId}@durable-inbox.local>`;
}

export function reminderText(reminder: Pick<ReminderRow, 'id' | 'title' | 'rrule' | 'startLocal'>, localTime: string): string {
  return [
    `Reminder: ${reminder.title}`,
    `Due ${localTime} (${describeRecurrence(reminder)}).`,
    '',
    `Pause: npm run cli -- reminders pause ${reminder.id}`,
    `Remove: npm run cli -- reminders remove ${reminder.id}`,
  ].join('\n');
}

export function createReminderDeliveryActivities(deps: ReminderDeliveryDeps): ReminderDeliveryActivities {
  const { db } = deps;

  async function deliverEmail(reminder: ReminderRow, ref: OccurrenceRef, dueAt: Date): Promise<string> {
    const messageId = reminderMessageId(reminder.id, dueAt);
    return deps.accounts.call(reminder.accountId, async (mailbox, email) => {
      const delivered = await insertOnce(mailbox, messageId, async () => {
        const labelIds = await reminderLabelIds(mailbox, deps.label);
        const rfc2822 = buildPlainTextMessage({
          from: { name: 'durable-inbox reminders', address: email },
          to: [{ address: email }],
          subject: `Reminder: ${reminder.title}`,
          body: reminderText(reminder, ref.localTime),
          date: new Date(),
          messageId,
          // One thread per reminder: Gmail threads by threadId and the references to the same root.
          inReplyTo: threadRootId(reminder.id),
          references: [threadRootId(reminder.id)],
          extraHeaders: { 'Auto-Submitted': 'auto-generated', [REMINDER_MARKER_HEADER]: reminder.id },
        });
        const inserted = await mailbox.insertMessage(toRaw(rfc2822), labelIds, reminder.gmailThreadId ?? undefined);
        if (!reminder.gmailThreadId && inserted.threadId) await setReminderThread(db, reminder.id, inserted.threadId);
        return inserted;
      });
      return delivered.id;
    });
  }

  async function deliverDiscord(webhookUrl: string, reminder: ReminderRow, ref: OccurrenceRef, dueAt: Date): Promise<string | undefined> {
    if (!(await startDiscordPost(db, reminder.id, dueAt))) return undefined;
    const title = displaySafe(reminder.title).slice(0, 200).replace(/[\\`*_~|>#[\]]/g, (c) => `\\${c}`);
    try {
      return await executeWebhook(webhookUrl, { content: `**Reminder:** ${title}\nDue ${ref.localTime}`, allowed_mentions: { parse: [] } });
    } catch (err) {
      // Discord answered (or could not be reached): nothing was posted, so a retry may post.
      await clearDiscordPost(db, reminder.id, dueAt);
      throw err;
    }
  }

  return {
    async deliverReminder(ref): Promise<ReminderDelivery> {
      const dueAt = new Date(ref.dueAt);
      const reminder = await loadReminder(db, ref.reminderId);
      if (!reminder) throw ApplicationFailure.nonRetryable(`no reminder ${ref.reminderId}`, 'ReminderNotFound');
      let occurrence = await openOccurrence(db, { reminderId: ref.reminderId, dueAt, localTime: ref.localTime });
      const notes: string[] = [];

      if (!occurrence.emailMessageId && occurrence.state === 'due') {
        try {
          await saveOccurrenceEmail(db, reminder.id, dueAt, await deliverEmail(reminder, ref, dueAt));
        } catch (err) {
          if (!needsReconnect(err)) throw err;
          notes.push(`email: ${err.message}`);
        }
      }

      occurrence = (await loadOccurrence(db, reminder.id, dueAt))!;
      if (!deps.discordWebhookUrl) notes.push('discord: no webhook configured');
      else if (!occurrence.discordMessageId && occurrence.state === 'due') {
        try {
          const posted = await deliverDiscord(deps.discordWebhookUrl, reminder, ref, dueAt);
          if (posted) await saveOccurrenceDiscord(db, reminder.id, dueAt, posted);
          else notes.push('discord: an earlier attempt stopped mid-post; not posted again');
        } catch (err) {
          if (!(err instanceof ApplicationFailure && err.nonRetryable)) throw err;
          notes.push(`discord: ${err.message}`);
        }
      }

      await addOccurrenceNotes(db, reminder.id, dueAt, notes.filter((n) => !occurrence.notes.includes(n)));
      const done = (await loadOccurrence(db, reminder.id, dueAt))!;
      return {
        ...(done.emailMessageId ? { emailMessageId: done.emailMessageId } : {}),
        ...(done.discordMessageId ? { discordMessageId: done.discordMessageId } : {}),
        notes,
      };
    },
  };
}

async function reminderLabelIds(mailbox: Mailbox, label: string): Promise<string[]> {
  const ids = await mailbox.ensureLabels([label]);
  return ['INBOX', 'UNREAD', ids.get(label)!];
}
