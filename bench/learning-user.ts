// The simulated user of `npm run bench -- learning` (docs/learning.md): hidden, deterministic habits
// applied through the real path. Each question thread gets our draft (a thread workflow, the
// Anthropic emulator's drafting stand-in); the user edits it in the Gmail emulator per their habits
// and sends it, and the thread workflow records the evidence; mail from one domain is answered in
// German. Newsletters get archived by the category's actions; the user takes the archive back for
// one sender (`actions undo`) and rejects it for a protected sender, whose archive waits for
// approval (`actions reject`). After each
// block the learning workflow proposes writing lessons, the triage derivation proposes rule changes,
// and the user accepts every proposal (acceptLesson, as `memory accept` does).
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { AccountGmail } from '../src/accounts/gmail-accounts.js';
import { listActions, setCategoryActions, updateSafetySettings } from '../src/actions/journal.js';
import { runActionsCli } from '../src/cli/actions.js';
import { learningSettingsFromConfig } from '../src/config/settings.js';
import type { Env } from '../src/config/env.js';
import type { PrismaClient } from '../src/db/client.js';
import { prismaExecutor } from '../src/db/sql-executor.js';
import { acceptLesson, listLessons } from '../src/learning/memory.js';
import { learningWorkflow } from '../src/learning/learning-workflow.js';
import { deriveTriageLessons } from '../src/learning/triage-lessons.js';
import { ingestThreadEvent } from '../src/thread/ingest.js';
import { threadStatusQuery } from '../src/thread/signals.js';
import { threadWorkflowId, type MailboxEvent, type ThreadSettings, type ThreadStatus } from '../src/thread/contracts.js';
import type { EmulatorControlClient } from '../emulators/gmail/control-client.js';
import { inGerman } from '../emulators/anthropic/learning.js';
import { sleep } from './bench-kit.js';

/** What the simulated user works in: one account, its workers running (the inbox harness fits). */
export interface LearningWorld {
  cfg: Env;
  prisma: PrismaClient;
  client: Client;
  gmail: { control: EmulatorControlClient };
  accountId: string;
  email: string;
  settings: ThreadSettings;
  accountGmail(): Promise<AccountGmail>;
}

/** The user's habits, hidden from the product: it learns them only from what the user does. */
export const HABITS = {
  greeting: 'Hey',
  signOff: 'Cheers, Sam',
  cutSentence: 'I have read your request and will come back to you with the details shortly.',
  /** Added only to replies to this domain's mail (a domain-scoped lesson). */
  link: { domain: 'studio.example', line: 'Our rates and calendar: https://sam.example/studio' },
  /** Mail from this domain is answered in German: the user rewrites the body (greeting and sign-off as above). */
  language: { domain: 'berlin.example', language: 'German' },
  /** This sender's newsletters: the user takes the archive back. */
  keepSender: 'letters@news.example',
  /** A protected sender (its archives wait for approval) whose newsletters the user keeps: rejects the archive. */
  protectedSender: 'board@vip.example',
} as const;

/** The reply the user wants, given our draft and whom it answers: applies each habit once. */
export function userReply(draft: string, senderDomain: string): string {
  const lines = draft.replace(/\s+$/, '').split('\n');
  const greeting = /^(\S+) ([^,]+),$/.exec(lines[0] ?? '');
  if (greeting && greeting[1] !== HABITS.greeting) lines[0] = `${HABITS.greeting} ${greeting[2]},`;
  const cut = lines.map((l) => l.replace(` ${HABITS.cutSentence}`, '').replace(HABITS.cutSentence, ''));
  const last = cut.length - 1;
  if (senderDomain === HABITS.link.domain && !cut.includes(HABITS.link.line)) cut.splice(last, 0, HABITS.link.line, '');
  cut[cut.length - 1] = HABITS.signOff;
  // The German is the phrasebook the emulator's drafting stand-in writes with (all the German it
  // knows): once the lesson holds, its draft is what this user sends.
  if (senderDomain === HABITS.language.domain) return cut.map((l, i) => (i > 0 && i < cut.length - 1 ? inGerman(l) : l)).join('\n');
  return cut.join('\n');
}

/** Characters inserted, deleted or substituted to turn `a` into `b` (Levenshtein, two rows). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

export interface BlockFigures {
  block: number;
  drafts: number;
  /** Mean Levenshtein distance (characters) between our draft and what the user sent. */
  meanEditDistance: number;
  /** Share of drafts sent as written. */
  unedited: number;
  newsletters: number;
  /** Triage corrections the user made (archives undone or rejected). */
  corrections: number;
  /** Lessons proposed after the block and accepted. */
  accepted: string[];
  seconds: number;
}

const NAMES = ['Ann', 'Bo', 'Cy', 'Di', 'Eli', 'Fay', 'Gus', 'Hal', 'Ivy', 'Jo', 'Kai', 'Lu', 'Mo', 'Ned', 'Oz', 'Pia', 'Quin', 'Rae', 'Sol', 'Tia'];

/** What thread `i` is: the sequence repeats every 20 threads, so each block of 20 holds the same mix. */
function threadKind(i: number, tag: string): { kind: 'question' | 'newsletter'; from: string; address: string; subject: string } {
  const name = NAMES[i % NAMES.length]!;
  if (i % 20 === 4) return { kind: 'newsletter', from: `News <${HABITS.keepSender}>`, address: HABITS.keepSender, subject: `This week ${i} ${tag}` };
  if (i % 20 === 17) return { kind: 'newsletter', from: `Board <${HABITS.protectedSender}>`, address: HABITS.protectedSender, subject: `Board letter ${i} ${tag}` };
  if (i % 20 === 14) return { kind: 'newsletter', from: `Deals <deals@shop.example>`, address: 'deals@shop.example', subject: `Deals ${i} ${tag}` };
  const domain = i % 20 === 7 ? HABITS.link.domain : i % 20 === 11 ? HABITS.language.domain : `partner${i % 5}.example`;
  const address = `${name.toLowerCase()}.${i}@${domain}`;
  return { kind: 'question', from: `${name} Lee <${address}>`, address, subject: `Project ${i} ${tag}` };
}

async function waitFor<T>(what: string, ready: () => Promise<T | false | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await ready().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`learning: ${what} did not happen within ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}

/** Sets up the account's triage (newsletters labelled and archived), then runs `threads` threads in blocks. */
export async function simulateUser(
  w: LearningWorld,
  opts: { threads: number; block: number; concurrency?: number; onBlock?: (f: BlockFigures) => void },
): Promise<BlockFigures[]> {
  const db = prismaExecutor(w.prisma);
  const tag = randomUUID().slice(0, 6);
  await setCategoryActions(db, w.accountId, 'newsletter', [{ kind: 'add_label', argument: 'Newsletters' }, { kind: 'archive' }]);
  await updateSafetySettings(db, w.accountId, { protectedSenders: [HABITS.protectedSender] });
  const gmail = await w.accountGmail();
  const last = new Map<string, ThreadStatus>();
  const status = async (threadId: string): Promise<ThreadStatus> => {
    const handle = w.client.workflow.getHandle(threadWorkflowId(w.accountId, threadId));
    try {
      return await handle.query(threadStatusQuery);
    } catch (err) {
      // A thread whose work is over (sent, nothing to wait for) has closed: its result is its status.
      if ((await handle.describe()).status.name !== 'COMPLETED') throw err;
      return (await handle.result()) as ThreadStatus;
    }
  };
  const until = (threadId: string, what: string, done: (s: ThreadStatus) => boolean) =>
    waitFor(`${threadId} ${what}`, async () => {
      const s = await status(threadId);
      last.set(threadId, s);
      return done(s);
    }).catch((err: Error) => {
      throw new Error(`${err.message}; last status ${JSON.stringify(last.get(threadId))}`, { cause: err });
    });
  const ingest = (threadId: string, event: MailboxEvent) =>
    ingestThreadEvent(w.client, { accountId: w.accountId, threadId, event, settings: w.settings, taskQueue: w.cfg.TEMPORAL_TASK_QUEUE });
  const journal = (threadId: string) => listActions(db, { accountId: w.accountId, threadId, ascending: true });

  const one = async (i: number): Promise<{ distance?: number; correction?: boolean }> => {
    const t = threadKind(i, tag);
    const headers = t.kind === 'newsletter' ? { 'List-Unsubscribe': `<mailto:unsubscribe@${t.address.split('@')[1]}>` } : undefined;
    const text = t.kind === 'newsletter' ? 'This week in news.' : `Hi,\n\nCould you send me the numbers for ${t.subject}?\n\nThanks`;
    const m = await w.gmail.control.deliver(w.email, { from: t.from, to: [w.email], subject: t.subject, text, ...(headers ? { headers } : {}) });
    await ingest(m.threadId, { type: 'message_added', messageId: m.id, labelIds: m.labelIds });
    if (t.kind === 'newsletter') {
      // The thread's actions are journaled together; the user looks once none is left to run.
      const actions = await waitFor(`${m.threadId} actions settled`, async () => {
        const rows = await journal(m.threadId);
        return rows.length > 0 && rows.every((a) => a.state === 'done' || a.state === 'awaiting_approval') && rows;
      });
      const archive = actions.find((a) => a.kind === 'archive');
      const decision = t.address === HABITS.keepSender ? 'undo' : t.address === HABITS.protectedSender ? 'reject' : undefined;
      if (!decision || !archive) return {};
      const code = await runActionsCli(w.cfg, [decision, archive.id], { out: () => undefined });
      if (code !== 0) throw new Error(`learning: actions ${decision} ${archive.id} exited ${code}`);
      const settled = decision === 'undo' ? 'undone' : 'rejected';
      await waitFor(`${m.threadId} archive ${settled}`, async () => (await journal(m.threadId)).find((a) => a.id === archive.id)?.state === settled);
      return { correction: true };
    }
    await until(m.threadId, 'drafted', (s) => s.state === 'drafted' && s.pendingEvents === 0);
    const draftRef = (await w.gmail.control.getState(w.email, { messageLimit: 0 })).drafts.find((d) => d.threadId === m.threadId)!;
    const ours = (await gmail.gmail.getDraft(draftRef.id))?.body ?? '';
    const wanted = userReply(ours, t.address.split('@')[1]!);
    if (wanted !== ours.replace(/\s+$/, '')) await w.gmail.control.editDraft(w.email, draftRef.id, { text: wanted });
    const current = (await w.gmail.control.getState(w.email, { messageLimit: 0 })).drafts.find((d) => d.id === draftRef.id)!;
    const sent = await w.gmail.control.sendDraft(w.email, draftRef.id);
    await ingest(m.threadId, { type: 'draft_gone', messageId: current.messageId });
    await ingest(m.threadId, { type: 'message_added', messageId: sent.id, labelIds: sent.labelIds });
    await until(m.threadId, 'sent', (s) => s.decisions.some((d) => d.kind === 'sent'));
    return { distance: editDistance(ours.replace(/\s+$/, ''), wanted) };
  };

  const figures: BlockFigures[] = [];
  for (let from = 0, block = 1; from < opts.threads; from += opts.block, block++) {
    const started = Date.now();
    const to = Math.min(opts.threads, from + opts.block);
    const results: { distance?: number; correction?: boolean }[] = [];
    let next = from;
    await Promise.all(Array.from({ length: opts.concurrency ?? 4 }, async () => {
      while (next < to) results.push(await one(next++));
    }));
    const distances = results.flatMap((r) => (r.distance === undefined ? [] : [r.distance]));

    // The learning Schedule's workflow (writing lessons through the LLM), the triage derivation (as
    // `memory learn` runs it), then the user accepts every proposal.
    await w.client.workflow.execute(learningWorkflow, {
      taskQueue: w.cfg.TEMPORAL_TASK_QUEUE,
      workflowId: `learning-bench-${tag}-${block}`,
      args: [{ llmTaskQueue: w.cfg.LLM_TASK_QUEUE, accountIds: [w.accountId] }],
    });
    await deriveTriageLessons(db, { accountId: w.accountId, settings: learningSettingsFromConfig(w.cfg) });
    const accepted: string[] = [];
    for (const lesson of await listLessons(db, { accountId: w.accountId, state: 'proposed' })) {
      await acceptLesson(db, lesson.id, 'cli');
      accepted.push(lesson.current.text);
    }
    const f: BlockFigures = {
      block,
      drafts: distances.length,
      meanEditDistance: distances.length ? distances.reduce((a, b) => a + b, 0) / distances.length : 0,
      unedited: distances.length ? distances.filter((d) => d === 0).length / distances.length : 0,
      newsletters: results.length - distances.length,
      corrections: results.filter((r) => r.correction).length,
      accepted,
      seconds: (Date.now() - started) / 1000,
    };
    figures.push(f);
    opts.onBlock?.(f);
  }
  return figures;
}
