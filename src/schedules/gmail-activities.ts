// A scheduled run's Gmail activities (task queue durable-inbox-gmail): the facts its report is written
// from, and the report's delivery into the user's own inbox (messages.insert, one thread per
// schedule, labelled) and to Discord. What was delivered is written on the run's row before the next
// channel, so a retried activity delivers each at most once; an inbox message inserted just before a
// crash is found again by its Message-ID.
import { ApplicationFailure } from '@temporalio/common';
import type { MailboxAccess } from '../accounts/mailbox-accounts.js';
import { needsReconnect, toActivityFailure } from '../accounts/mailbox-failures.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { canonicalAddress } from '../gmail/addresses.js';
import { GmailBadRequestError } from '../gmail/errors.js';
import { isNotInMailbox } from '../mail/mailbox-errors.js';
import { insertOnce } from '../mail/insert-once.js';
import { LabelDirectory } from '../gmail/label-directory.js';
import { latestInboundMessage } from '../gmail/thread-queries.js';
import { buildPlainTextMessage, toRaw } from '../gmail/mime.js';
import { heartbeatWhile } from '../shared/activity-heartbeat.js';
import { executeWebhook } from '../shared/discord-webhook.js';
import type { ScheduleGmailActivities } from './activity-contracts.js';
import type { FactItem, ScheduleFacts } from './contracts.js';
import { accountTimeZone } from '../accounts/time-settings.js';
import { briefSections, digestSections, doneSince, type FactSection } from './facts.js';
import { gmailThreadLink } from './report.js';
import { loadAgentSchedule } from './schedule-store.js';

/** Marks our reports: the rules leave them in the inbox as mail to read (builtin:scheduled-report). */
export const SCHEDULE_REPORT_HEADER = 'X-Durable-Inbox-Schedule';

export interface ScheduleGmailDeps {
  db: SqlExecutor;
  accounts: MailboxAccess;
  discordWebhookUrl?: string;
  /** The zone of an account without one (DEFAULT_TIME_ZONE): a brief's "today" is the account's. */
  defaultZone?: string;
}

const reportMessageId = (runId: string) => `<run-${runId.replace(/[^A-Za-z0-9._-]/g, '_')}@durable-inbox.local>`;
const threadRootId = (scheduleId: string) => `<schedule-${scheduleId}@durable-inbox.local>`;

export function createScheduleGmailActivities(deps: ScheduleGmailDeps): ScheduleGmailActivities {
  const labels = new LabelDirectory();
  return {
    async threadToAct({ accountId, threadId }) {
      try {
        return await deps.accounts.call(accountId, async (mailbox, userEmail) => {
          const snapshot = await mailbox.getThread(threadId);
          // What the thread's own actions are about (readThread's latestInbound), else its newest message.
          const about = latestInboundMessage(snapshot, userEmail) ?? snapshot.messages.filter((m) => !m.isDraft).at(-1);
          if (!about) return null;
          return { messageId: about.id, sender: about.from ? canonicalAddress(about.from.address) : '', subject: about.subject };
        });
      } catch (err) {
        // Gmail answers an id that is not one of its thread ids with 400 "Invalid id value".
        if (isNotInMailbox(err) || err instanceof GmailBadRequestError) return null;
        throw toActivityFailure(err);
      }
    },

    async gatherScheduleFacts({ accountId, profile, since, now }) {
      const kind = profile === 'brief' || profile === 'digest' ? profile : 'other';
      const sinceAt = new Date(since);
      const sections: FactSection[] =
        kind === 'brief' ? await briefSections(deps.db, accountId, new Date(now), await accountTimeZone(deps.db, accountId, deps.defaultZone)) : kind === 'digest' ? await digestSections(deps.db, accountId, sinceAt) : [];
      const done = await doneSince(deps.db, accountId, sinceAt);
      const [account] = await deps.db.query<{ email: string }>(`SELECT email FROM accounts WHERE id = $1`, [accountId]);
      const email = account?.email ?? '';
      try {
        const filled = await heartbeatWhile(() => deps.accounts.call(accountId, async (mailbox) => {
          const out: ScheduleFacts['sections'] = [];
          for (const s of sections) {
            const items: FactItem[] = [];
            for (const ref of s.refs) {
              // The journal has subject and sender of the approvals and archives; the rest come from Gmail.
              const summary = ref.subject !== undefined && kind !== 'digest' ? undefined : await mailbox.getThreadSummary(ref.threadId).catch(() => undefined);
              items.push({
                threadId: ref.threadId,
                subject: ref.subject ?? summary?.subject ?? '',
                from: ref.from ?? summary?.from ?? '',
                detail: kind === 'digest' && summary?.snippet ? `${ref.detail}: ${summary.snippet}` : ref.detail,
                // A Gmail thread opens in Gmail; an IMAP thread has no web address: the CLI shows it.
                link: mailbox.capabilities.provider === 'gmail' ? gmailThreadLink(email, ref.threadId) : `npm run cli -- threads show ${ref.threadId}`,
              });
            }
            out.push({ title: s.title, items, ...(s.note ? { note: s.note } : {}) });
          }
          return out;
        }));
        return { kind, since, sections: filled, done };
      } catch (err) {
        throw toActivityFailure(err);
      }
    },

    async deliverScheduledReport({ runId, scheduleId, subject, body }) {
      const schedule = await loadAgentSchedule(deps.db, scheduleId);
      if (!schedule) throw ApplicationFailure.nonRetryable(`schedule ${scheduleId} was removed`, 'ScheduleGone');
      const [account] = await deps.db.query<{ email: string }>(`SELECT email FROM accounts WHERE id = $1`, [schedule.accountId]);
      const email = account?.email ?? '';
      const delivered = async () =>
        (await deps.db.query<{ gmail_message_id: string | null; discord_message_id: string | null }>(
          `SELECT gmail_message_id, discord_message_id FROM schedule_runs WHERE run_id = $1`,
          [runId],
        ))[0];
      const notes: string[] = [];
      let row = await delivered();

      if (!row?.gmail_message_id) {
        try {
          const messageId = reportMessageId(runId);
          const inserted = await heartbeatWhile(() => deps.accounts.call(schedule.accountId, async (mailbox) => {
            return insertOnce(mailbox, messageId, () => {
              const rfc2822 = buildPlainTextMessage({
                from: { name: 'durable-inbox', address: email },
                to: [{ address: email }],
                // One subject per schedule: Gmail threads the reports by it (and by References).
                subject: `[durable-inbox] ${subject}`,
                body,
                date: new Date(),
                messageId,
                references: [threadRootId(scheduleId)],
                inReplyTo: threadRootId(scheduleId),
                extraHeaders: { [SCHEDULE_REPORT_HEADER]: scheduleId },
              });
              return labels.withIds(schedule.accountId, mailbox, [schedule.label], (ids) =>
                mailbox.insertMessage(toRaw(rfc2822), ['INBOX', 'UNREAD', ids.get(schedule.label)!], schedule.deliveryThreadId ?? undefined),
              );
            });
          }));
          await deps.db.query(`UPDATE schedule_runs SET gmail_message_id = $2 WHERE run_id = $1`, [runId, inserted.id]);
          if (!schedule.deliveryThreadId) {
            await deps.db.query(`UPDATE agent_schedules SET delivery_thread_id = $2 WHERE id = $1 AND delivery_thread_id IS NULL`, [scheduleId, inserted.threadId]);
          }
        } catch (err) {
          if (!needsReconnect(err)) throw toActivityFailure(err);
          notes.push(`email: ${err.message}`);
        }
      }

      row = await delivered();
      if (schedule.discord && deps.discordWebhookUrl && !row?.discord_message_id) {
        try {
          const content = `**${subject}** for \`${email}\`\n${body}`.slice(0, 2000);
          const id = await executeWebhook(deps.discordWebhookUrl, { content, allowed_mentions: { parse: [] } });
          await deps.db.query(`UPDATE schedule_runs SET discord_message_id = $2 WHERE run_id = $1`, [runId, id]);
        } catch (err) {
          if (!(err instanceof ApplicationFailure && err.nonRetryable)) throw err;
          notes.push(`discord: ${err.message}`);
        }
      }
      row = await delivered();
      return { gmailMessageId: row?.gmail_message_id ?? null, discordMessageId: row?.discord_message_id ?? null, notes };
    },
  };
}
