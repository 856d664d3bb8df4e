// Gmail activities of the thread's timers (task queue durable-inbox-gmail): a snooze takes the
// thread out of the inbox and brings it back, unread and labelled; a timer asked for with a Gmail
// label has that label taken off. Each is a label change Gmail applies idempotently, so a retry
// changes nothing twice.
import { heartbeatWhile } from '../shared/activity-heartbeat.js';
import type { MailboxAccess } from '../accounts/mailbox-accounts.js';
import { toActivityFailure } from '../accounts/mailbox-failures.js';
import { isNotInMailbox } from '../mail/mailbox-errors.js';
import type { Mailbox } from '../mail/mailbox.js';
import { LabelDirectory } from '../gmail/label-directory.js';
import type { TimerGmailActivities } from './activity-contracts.js';

export function createTimerGmailActivities({ accounts }: { accounts: MailboxAccess }): TimerGmailActivities {
  const labels = new LabelDirectory();

  const withGmail = async <T>(accountId: string, fn: (gmail: Mailbox) => Promise<T>): Promise<T> => {
    try {
      return await heartbeatWhile(() => accounts.call(accountId, fn));
    } catch (err) {
      throw toActivityFailure(err);
    }
  };

  /** Runs a change of a thread that may have been deleted meanwhile: false then. */
  const onThread = async (change: () => Promise<void>): Promise<boolean> => {
    try {
      await change();
      return true;
    } catch (err) {
      if (isNotInMailbox(err)) return false;
      throw err;
    }
  };

  return {
    async snoozeThread({ accountId, threadId, requestLabel }) {
      return withGmail(accountId, (gmail) =>
        onThread(async () => {
          const remove = ['INBOX'];
          if (requestLabel) remove.push((await labels.ids(accountId, gmail, [requestLabel])).get(requestLabel)!);
          await gmail.modifyThread(threadId, { remove });
        }),
      );
    },

    async returnFromSnooze({ accountId, threadId, label }) {
      return withGmail(accountId, (gmail) =>
        onThread(() =>
          labels.withIds(accountId, gmail, [label], async (ids) => {
            await gmail.modifyThread(threadId, { add: ['INBOX', ids.get(label)!] });
            const newest = (await gmail.getThread(threadId)).messages.filter((m) => !m.isDraft).at(-1);
            if (newest) await gmail.modifyMessage(newest.id, { add: ['UNREAD'] });
          }),
        ),
      );
    },

    async takeLabel({ accountId, threadId, label }) {
      await withGmail(accountId, (gmail) =>
        onThread(() => labels.withIds(accountId, gmail, [label], (ids) => gmail.modifyThread(threadId, { remove: [ids.get(label)!] }))),
      );
    },
  };
}
