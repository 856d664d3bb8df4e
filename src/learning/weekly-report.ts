// The "what I learned" report of one account's week (docs/learning.md): the proposals waiting for
// the user, and what was accepted and reverted in the last seven days, with the commands to act on
// them. Plain text: `memory weekly` prints it; the weekly e-mail into the inbox is to send it.
import type { SqlExecutor } from '../db/sql-executor.js';
import { displaySafe } from '../shared/display-text.js';
import { listLessons } from './memory.js';

export const WEEK_MS = 7 * 86_400_000;

export interface WeeklyReport {
  subject: string;
  body: string;
  waiting: number;
  accepted: number;
  reverted: number;
}

const DECIDED_SQL = `
SELECT e.event, e.decided_by, e.created_at, l.id, v.text
FROM lesson_events e JOIN lessons l ON l.id = e.lesson_id JOIN lesson_versions v ON v.lesson_id = l.id AND v.version = e.version
WHERE l.account_id = $1 AND e.event IN ('accepted', 'reverted', 'superseded') AND e.created_at >= $2 AND e.created_at < $3
ORDER BY e.id`;

export async function weeklyReport(db: SqlExecutor, input: { accountId: string; now?: Date }): Promise<WeeklyReport> {
  const now = input.now ?? new Date();
  const since = new Date(now.getTime() - WEEK_MS);
  const [waiting, decided] = await Promise.all([
    listLessons(db, { accountId: input.accountId, state: 'proposed' }),
    db.query<{ event: string; decided_by: string; created_at: Date; id: string; text: string }>(DECIDED_SQL, [input.accountId, since, now]),
  ]);
  const line = (id: string, text: string) => `- ${displaySafe(text)}\n  (${id})`;
  const accepted = decided.filter((d) => d.event === 'accepted');
  const reverted = decided.filter((d) => d.event !== 'accepted');
  const sections = [
    `Waiting for you (${waiting.length}):`,
    ...(waiting.length > 0 ? waiting.map((l) => line(l.id, l.current.text)) : ['- nothing']),
    '',
    `Accepted this week (${accepted.length}):`,
    ...(accepted.length > 0 ? accepted.map((d) => line(d.id, `${d.text}  [by ${d.decided_by}]`)) : ['- nothing']),
    '',
    `Reverted this week (${reverted.length}):`,
    ...(reverted.length > 0 ? reverted.map((d) => line(d.id, `${d.text}  [${d.event} by ${d.decided_by}]`)) : ['- nothing']),
    '',
    'What you can do:',
    '  npm run cli -- memory show <lesson id>       its evidence and its effect on your last 30 days of mail',
    '  npm run cli -- memory accept <lesson id>     it takes hold',
    '  npm run cli -- memory reject <lesson id>     it never does',
    '  npm run cli -- memory revert <lesson id>     an accepted one stops taking hold (every version stays)',
  ];
  return {
    subject: `What I learned this week: ${waiting.length} waiting, ${accepted.length} accepted, ${reverted.length} reverted`,
    body: sections.join('\n'),
    waiting: waiting.length,
    accepted: accepted.length,
    reverted: reverted.length,
  };
}
