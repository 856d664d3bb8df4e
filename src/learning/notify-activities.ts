// Telling the user a lesson waits for them: a Discord webhook message and a signed link to the lesson
// on the approvals page, never mail content. A triage lesson's text is quoted: the code writes it from
// a sender's address, a category and labels. A writing lesson's text is not: it is learned from lines
// of drafts and of what the user sent (and free text is the model's words), so the message says only
// its kind, aspect, scope and how many corrections, and the page shows the rest.
// Once per lesson: the message id is journaled as the lesson's `notified` event, so a retried
// activity, or evidence that grew later, posts nothing again.
import { ApplicationFailure } from '@temporalio/common';
import { lessonLink, type ApprovalKeys } from '../actions/approval-links.js';
import type { ApprovalsSettings } from '../actions/contracts.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { code, plain, postNoticeOnce } from '../shared/discord-webhook.js';
import { readTypedLesson, WRITING_KINDS, type Lesson } from './contracts.js';
import { lessonAspect } from './auto-accept.js';
import { scopeText } from './describe.js';
import { loadLesson } from './memory.js';
import type { LessonNotifyActivities } from './activity-contracts.js';

export function lessonMessage(lesson: Lesson, link: string): string {
  const from = `from ${lesson.current.evidence.length} correction(s)`;
  const actions = `Accept or reject: <${link}>  (or \`npm run cli -- memory show ${lesson.id}\`)`;
  if (WRITING_KINDS.includes(lesson.kind)) {
    // The aspect the key names is the model's label: said as such, with whether the value was typed data or free text.
    const aspect = readTypedLesson(lesson.current.typed)?.type ?? lessonAspect(lesson);
    const form = lesson.current.typed ? 'typed' : 'free text';
    return [
      `**Writing lesson proposed** (${code(lesson.kind)}${aspect ? `, ${code(aspect)}` : ''}, ${form}, ${plain(scopeText(lesson))}), ${from}. What it says is on the page (it quotes your mail, so not here).`,
      actions,
    ].join('\n');
  }
  return [`**Lesson proposed** (${code(lesson.kind)}, ${plain(scopeText(lesson))}), ${from}:`, `> ${plain(lesson.current.text)}`, actions].join('\n');
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
