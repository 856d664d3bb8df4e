// Telling the user a lesson waits for them: a Discord webhook message with the lesson's text (a
// sender's address and labels, never mail content) and a signed link to it on the approvals page.
// Once per lesson: the message id is journaled as the lesson's `notified` event, so a retried
// activity, or evidence that grew later, posts nothing again.
import { ApplicationFailure } from '@temporalio/common';
import { lessonLink, type ApprovalKeys } from '../actions/approval-links.js';
import type { ApprovalsSettings } from '../actions/contracts.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { code, plain, postNoticeOnce } from '../shared/discord-webhook.js';
import type { Lesson } from './contracts.js';
import { scopeText } from './describe.js';
import { loadLesson } from './memory.js';
import type { LessonNotifyActivities } from './activity-contracts.js';

export function lessonMessage(lesson: Lesson, link: string): string {
  return [
    `**Lesson proposed** (${code(lesson.kind)}, ${plain(scopeText(lesson))}), from ${lesson.current.evidence.length} correction(s):`,
    `> ${plain(lesson.current.text)}`,
    `Accept or reject: <${link}>  (or \`npm run cli -- memory show ${lesson.id}\`)`,
  ].join('\n');
}

export function createLessonNotifyActivities(deps: {
  db: SqlExecutor;
  keys(): Promise<ApprovalKeys>;
  settings: Pick<ApprovalsSettings, 'discordWebhookUrl' | 'publicBaseUrl' | 'linkTtlMs'>;
  now?: () => number;
}): LessonNotifyActivities {
  const now = deps.now ?? Date.now;
  return {
    async notifyLessonProposed({ lessonId }) {
      if (!deps.settings.discordWebhookUrl) return { notified: false };
      const lesson = await loadLesson(deps.db, lessonId);
      if (!lesson) throw ApplicationFailure.nonRetryable(`no lesson ${lessonId}`, 'LessonNotFound');
      // The message id is journaled as the lesson's `notified` event.
      const notified = await postNoticeOnce(deps.settings.discordWebhookUrl, {
        posted: async () => (await deps.db.query(`SELECT id FROM lesson_events WHERE lesson_id = $1 AND event = 'notified' LIMIT 1`, [lessonId])).length > 0,
        content: async () => {
          if (lesson.state !== 'proposed') return null; // decided meanwhile
          return lessonMessage(lesson, lessonLink(await deps.keys(), deps.settings.publicBaseUrl, lesson.id, deps.settings.linkTtlMs, now()));
        },
        record: async (messageId) => {
          await deps.db.query(
            `INSERT INTO lesson_events (lesson_id, event, from_state, to_state, version, decided_by, note) VALUES ($1, 'notified', $2, $2, $3, 'learning', $4)`,
            [lesson.id, lesson.state, lesson.version, `discord message ${messageId}`],
          );
        },
      });
      return { notified };
    },
  };
}
