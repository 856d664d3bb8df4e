// The demo's lessons waiting for the user (docs/learning.md): two newsletters from one shop that
// "you moved back to the inbox" (two corrections, seeded as the thread workflow records them), from
// which the learning proposes "mail from news@shop.example: do not archive". Seeded once per demo
// mailbox; the derivation is the real one, so the proposal, its evidence and its dry run are real.
import type { RunningGmailEmulator } from '../../emulators/gmail/index.js';
import type { LearningSettings } from '../config.js';
import type { PrismaClient } from '../db/client.js';
import { prismaExecutor } from '../db/sql-executor.js';
import { deriveTriageLessons } from '../learning/triage-lessons.js';

export const DEMO_NEWS_SENDER = 'news@shop.example';
const SUBJECTS = ['This week at the shop', 'Our autumn offers'];

/** Two newsletters from the demo shop into the demo mailbox (seedDemoMailbox). */
export async function deliverDemoNewsletters(gmail: RunningGmailEmulator, email: string): Promise<void> {
  for (const subject of SUBJECTS) {
    await gmail.control.deliver(email, {
      from: { name: 'The Shop', email: DEMO_NEWS_SENDER },
      to: [email],
      subject,
      text: 'New arrivals, and what our readers liked this week.',
      headers: { 'List-Unsubscribe': `<mailto:unsubscribe@shop.example>` },
    });
  }
}

/**
 * Two moved-back corrections for the demo shop's newsletters, then the derivation: one triage lesson
 * waits. Idempotent (the corrections' keys; the lesson's key), and nothing when the demo mailbox has
 * no such newsletters (a demo restored from before them).
 */
export async function ensureDemoTriageLesson(gmail: RunningGmailEmulator, prisma: PrismaClient, accountId: string, email: string, settings: LearningSettings): Promise<string[]> {
  const state = await gmail.control.getState(email);
  const threads = new Map<string, string>();
  for (const m of state.messages) if (m.from.includes(DEMO_NEWS_SENDER) && SUBJECTS.includes(m.subject)) threads.set(m.threadId, m.subject);
  if (threads.size < 2) return [];
  const db = prismaExecutor(prisma);
  for (const [threadId, subject] of threads) {
    await db.query(
      `INSERT INTO learning_corrections (account_id, gmail_thread_id, key, change_id, source, kind, sender, subject, category)
       VALUES ($1, $2, $3, 'demo', 'moved_back', 'archive', $4, $5, 'newsletter') ON CONFLICT (account_id, key) DO NOTHING`,
      [accountId, threadId, `demo:moved_back:${threadId}`, DEMO_NEWS_SENDER, subject],
    );
  }
  return (await deriveTriageLessons(db, { accountId, settings })).changed;
}
