// The simulated user of `npm run bench -- learning` (docs/learning.md): hidden, deterministic habits of
// its own, applied through the real path. Each question thread gets our draft (a thread workflow, the
// Anthropic emulator's drafting stand-in); the user rewrites it the way it writes (its greeting, its
// sign-off, a sentence it never keeps, a line for one domain's mail, its own German for another
// domain's: nothing here comes from the emulator's phrasebook) in the Gmail emulator and sends it;
// the sync reads new mail and sends from the mailbox's history and hands them to the threads, and the
// thread workflow records the evidence. Newsletters get labelled and archived by the
// category's actions; the user corrects them in Gmail (moves one sender's back to the inbox, takes
// our label off another's), and the sync reads the mailbox's history and hands the changes to the
// threads. After each block the user reviews what was proposed through the CLI (`memory learn` runs
// the learning workflow and the triage derivation, `memory list`, then `memory accept` / `reject`, judged by
// its own habits); with auto-accept on, typed lessons take hold alone. A scope check counts drafts
// to senders outside a scoped lesson's scope that were written with it or show its habit.
import type { MailboxAccounts } from '../src/accounts/mailbox-accounts.js';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { AccountGmail } from '../src/accounts/gmail-accounts.js';
import type { GmailAccounts } from '../src/accounts/gmail-accounts.js';
import { listActions, setCategoryActions } from '../src/actions/journal.js';
import { runMemoryCli } from '../src/cli/memory.js';
import type { Env } from '../src/config/env.js';
import type { PrismaClient } from '../src/db/client.js';
import { prismaExecutor } from '../src/db/sql-executor.js';
import type { Lesson } from '../src/learning/contracts.js';
import { loadLesson } from '../src/learning/memory.js';
import { createSyncActivities } from '../src/sync/sync-activities.js';
import { threadStatusQuery } from '../src/thread/signals.js';
import { threadWorkflowId, type ThreadSettings, type ThreadStatus } from '../src/thread/contracts.js';
import type { EmulatorControlClient } from '../emulators/gmail/control-client.js';
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
  /** What the sync's activities read the mailbox with. */
  gmailAccounts(): GmailAccounts;
  /** Both providers' access, as the workers have it (the sync's). */
  mailboxAccounts(): MailboxAccounts;
}

/** The user's habits, hidden from the product: it learns them only from what the user does. */
export const HABITS = {
  greeting: 'Hey',
  signOff: 'Cheers, Sam',
  cutSentence: 'I have read your request and will come back to you with the details shortly.',
  /** Added only to replies to this domain's mail (a domain-scoped lesson). */
  link: { domain: 'studio.example', line: 'Our rates and calendar: https://sam.example/studio' },
  /** Mail from this domain is answered in German, the user's own (greeting and sign-off as above). */
  language: { domain: 'berlin.example', language: 'German' },
  /** This sender's newsletters: the user moves them back to the inbox in Gmail. */
  keepSender: 'letters@news.example',
  /** This sender's newsletters: the user takes our label off them in Gmail. */
  unlabelSender: 'board@vip.example',
} as const;

/**
 * How this user says things in German: its own sentences, not the drafting stand-in's phrasebook, so
 * a German draft the stand-in writes once the lesson holds still differs from what the user sends
 * (the figures keep that difference). A sentence it has no German for, it leaves as it is.
 */
const USER_GERMAN: [RegExp, string][] = [
  [/^Thank you for your email about "(.*)"\.$/, 'Danke für Ihre Nachricht zu "$1".'],
  [/^Thanks for letting me know\.$/, 'Danke für den Hinweis.'],
  [/^Revised as asked: (.*)$/, 'Geändert wie gewünscht: $1'],
];
const germanOf = (line: string) =>
  line
    .split(/(?<=[.!?])\s+/)
    .map((s) => USER_GERMAN.reduce((t, [re, de]) => (re.test(t) ? t.replace(re, de) : t), s))
    .join(' ');

/** The reply the user wants, given our draft and whom it answers: applies each habit once. */
export function userReply(draft: string, senderDomain: string): string {
  const lines = draft.replace(/\s+$/, '').split('\n');
  const greeting = /^(\S+) ([^,]+),$/.exec(lines[0] ?? '');
  if (greeting && greeting[1] !== HABITS.greeting) lines[0] = `${HABITS.greeting} ${greeting[2]},`;
  const cut = lines.map((l) => l.replace(` ${HABITS.cutSentence}`, '').replace(HABITS.cutSentence, ''));
  const last = cut.length - 1;
  if (senderDomain === HABITS.link.domain && !cut.includes(HABITS.link.line)) cut.splice(last, 0, HABITS.link.line, '');
  cut[cut.length - 1] = HABITS.signOff;
  if (senderDomain === HABITS.language.domain) return cut.map((l, i) => (i > 0 && i < cut.length - 1 ? germanOf(l) : l)).join('\n');
  return cut.join('\n');
}

/**
 * What the user says to a proposal it reads in `memory list`: yes when it is about one of its own
 * habits (it quotes the greeting, the sign-off, the old sign-off it always replaces, the sentence it
 * cuts, the line it adds, the language, or a sender whose mail it corrects), else no.
 */
export function judge(text: string): 'accept' | 'reject' {
  const mine = [`"${HABITS.greeting}"`, HABITS.signOff, 'Best regards', HABITS.cutSentence, HABITS.link.line, HABITS.language.language, HABITS.keepSender, HABITS.unlabelSender];
  return mine.some((m) => text.includes(m)) ? 'accept' : 'reject';
}

/** Whether a line reads as German (three common German words): the scope check's test for the language habit leaking. */
const looksGerman = (line: string) =>
  new Set(line.toLowerCase().match(/(?<![\p{L}])(und|für|ihre|ihr|ihnen|mit|zu|die|der|das|den|dem|ich|habe|dank|danke|nachricht)(?![\p{L}])/gu) ?? []).size >= 3;

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
  /** Triage corrections the user made in Gmail (moved back to the inbox, our label removed), as the threads recorded them. */
  corrections: number;
  /**
   * Drafts to a sender outside a scoped lesson's scope (its sender or domain) that were written with
   * that lesson (the decision log's lessons) or show its habit (the link line, German): the goal is 0.
   */
  scopeLeaks: number;
  /** Drafts the scope check looked at: to senders outside every scoped lesson's scope. */
  outOfScopeDrafts: number;
  /** Lessons the user accepted through the CLI after the block. */
  accepted: string[];
  /** Lessons the user rejected through the CLI after the block. */
  rejected: string[];
  /** Lessons that took hold alone (auto-accept) during the block's learning. */
  alone: string[];
  seconds: number;
}

const NAMES = ['Ann', 'Bo', 'Cy', 'Di', 'Eli', 'Fay', 'Gus', 'Hal', 'Ivy', 'Jo', 'Kai', 'Lu', 'Mo', 'Ned', 'Oz', 'Pia', 'Quin', 'Rae', 'Sol', 'Tia'];

/** What thread `i` is: the sequence repeats every 20 threads, so each block of 20 holds the same mix. */
function threadKind(i: number, tag: string): { kind: 'question' | 'newsletter'; from: string; address: string; subject: string } {
  const name = NAMES[i % NAMES.length]!;
  if (i % 20 === 4) return { kind: 'newsletter', from: `News <${HABITS.keepSender}>`, address: HABITS.keepSender, subject: `This week ${i} ${tag}` };
  if (i % 20 === 17) return { kind: 'newsletter', from: `Board <${HABITS.unlabelSender}>`, address: HABITS.unlabelSender, subject: `Board letter ${i} ${tag}` };
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

/** A row of `memory list`: the lesson's id and its text (the table's first and last columns). */
const LIST_ROW = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\s+\S+\s+.*?\s+(proposed|accepted|rejected|reverted)\s+\d+\s+\d+\s+(.*)$/;

/** Sets up the account's triage (newsletters labelled and archived), then runs `threads` threads in blocks. */
export async function simulateUser(
  w: LearningWorld,
  opts: { threads: number; block: number; concurrency?: number; autoAcceptAfter?: number | null; onBlock?: (f: BlockFigures) => void },
): Promise<BlockFigures[]> {
  const db = prismaExecutor(w.prisma);
  const tag = randomUUID().slice(0, 6);
  await setCategoryActions(db, w.accountId, 'newsletter', [{ kind: 'add_label', argument: 'Newsletters' }, { kind: 'archive' }]);
  const memory = async (...argv: string[]): Promise<string[]> => {
    const lines: string[] = [];
    const code = await runMemoryCli(w.cfg, argv, { out: (l) => lines.push(l) });
    if (code !== 0) throw new Error(`learning: memory ${argv.join(' ')} exited ${code}: ${lines.join(' | ')}`);
    return lines;
  };
  await memory('auto-accept', '--account', w.email, '--after', opts.autoAcceptAfter ? String(opts.autoAcceptAfter) : 'off');
  const listed = async (state: string) => (await memory('list', '--account', w.email, '--state', state)).flatMap((l) => {
    const m = LIST_ROW.exec(l);
    return m ? [{ id: m[1]!, text: m[3]!.trim() }] : [];
  });

  // The sync's activities, as the account's sync workflow runs them: the mailbox's history since the
  // cursor, label changes included, handed to the threads. One reader at a time (one cursor).
  const sync = createSyncActivities({ prisma: w.prisma, accounts: w.mailboxAccounts(), client: w.client, threadSettings: w.settings, threadTaskQueue: w.cfg.TEMPORAL_TASK_QUEUE, learnFromLabels: true });
  let cursor = await sync.loadCursor({ accountId: w.accountId });
  let reading = Promise.resolve();
  const syncNow = () =>
    (reading = reading.then(async () => {
      for (;;) {
        const page = await sync.syncHistoryPage({ accountId: w.accountId, startHistoryId: cursor, pageSize: 100 });
        if (page.kind !== 'page') throw new Error(`learning: sync ${page.kind}`);
        cursor = page.cursor;
        if (!page.more) return;
      }
    }));

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
  const journal = (threadId: string) => listActions(db, { accountId: w.accountId, threadId, ascending: true });
  const lessons = new Map<string, Lesson | null>();
  const lessonOf = async (id: string) => {
    if (!lessons.has(id)) lessons.set(id, await loadLesson(db, id));
    return lessons.get(id) ?? null;
  };
  const covers = (l: Lesson, sender: string) => {
    const domain = sender.split('@')[1] ?? '';
    const ref = (l.scopeRef ?? '').toLowerCase();
    return l.scope === 'sender' ? ref === sender : l.scope === 'domain' ? domain === ref || domain.endsWith(`.${ref}`) : true;
  };

  /** Whether a draft to `sender` (outside the scoped habits' domains) was changed by a scoped lesson. */
  const leaked = async (threadId: string, sender: string, body: string): Promise<boolean> => {
    const decision = await w.prisma.decision.findFirst({ where: { accountId: w.accountId, kind: 'draft', thread: { gmailThreadId: threadId } }, orderBy: { id: 'desc' } });
    const used = ((decision?.detail as { lessons?: string[] } | null)?.lessons ?? []).map((ref) => ref.split('@')[0]!);
    for (const id of used) {
      const lesson = await lessonOf(id);
      if (lesson && !covers(lesson, sender)) return true;
    }
    return body.includes(HABITS.link.line) || body.split('\n').some(looksGerman);
  };

  const one = async (i: number): Promise<{ distance?: number; correction?: boolean; outOfScope?: boolean; leak?: boolean }> => {
    const t = threadKind(i, tag);
    const headers = t.kind === 'newsletter' ? { 'List-Unsubscribe': `<mailto:unsubscribe@${t.address.split('@')[1]}>` } : undefined;
    const text = t.kind === 'newsletter' ? 'This week in news.' : `Hi,\n\nCould you send me the numbers for ${t.subject}?\n\nThanks`;
    const m = await w.gmail.control.deliver(w.email, { from: t.from, to: [w.email], subject: t.subject, text, ...(headers ? { headers } : {}) });
    await syncNow(); // the sync reads the new mail from the mailbox's history and starts its thread
    if (t.kind === 'newsletter') {
      // The thread's actions are journaled together; the user looks once none is left to run.
      const actions = await waitFor(`${m.threadId} actions settled`, async () => {
        const rows = await journal(m.threadId);
        return rows.length > 0 && rows.every((a) => a.state === 'done') && rows;
      });
      // The user corrects in Gmail what it does not want done: the archive of one sender, our label on another's.
      const change =
        t.address === HABITS.keepSender && actions.some((a) => a.kind === 'archive')
          ? { add: ['INBOX'] }
          : t.address === HABITS.unlabelSender && actions.some((a) => a.kind === 'add_label' && a.argument === 'Newsletters')
            ? { remove: ['Newsletters'] }
            : undefined;
      if (!change) return {};
      await w.gmail.control.modifyLabels(w.email, { threadId: m.threadId, ...change });
      await syncNow();
      await waitFor(`${m.threadId} correction recorded`, async () => (await w.prisma.learningCorrection.count({ where: { accountId: w.accountId, gmailThreadId: m.threadId } })) > 0);
      return { correction: true };
    }
    await until(m.threadId, 'drafted', (s) => s.state === 'drafted' && s.pendingEvents === 0);
    const draftRef = (await w.gmail.control.getState(w.email, { messageLimit: 0 })).drafts.find((d) => d.threadId === m.threadId)!;
    const ours = (await gmail.gmail.getDraft(draftRef.id))?.body ?? '';
    const domain = t.address.split('@')[1]!;
    const outOfScope = domain !== HABITS.link.domain && domain !== HABITS.language.domain;
    const leak = outOfScope ? await leaked(m.threadId, t.address, ours) : false;
    const wanted = userReply(ours, domain);
    if (wanted !== ours.replace(/\s+$/, '')) await w.gmail.control.editDraft(w.email, draftRef.id, { text: wanted });
    await w.gmail.control.sendDraft(w.email, draftRef.id);
    await syncNow(); // the sync reads the send (the draft gone, the message sent) and hands it to the thread
    await until(m.threadId, 'sent', (s) => s.decisions.some((d) => d.kind === 'sent'));
    return { distance: editDistance(ours.replace(/\s+$/, ''), wanted), outOfScope, leak };
  };

  const figures: BlockFigures[] = [];
  const held = new Set((await listed('accepted')).map((l) => l.id));
  for (let from = 0, block = 1; from < opts.threads; from += opts.block, block++) {
    const started = Date.now();
    const to = Math.min(opts.threads, from + opts.block);
    const results: { distance?: number; correction?: boolean; outOfScope?: boolean; leak?: boolean }[] = [];
    let next = from;
    await Promise.all(Array.from({ length: opts.concurrency ?? 4 }, async () => {
      while (next < to) results.push(await one(next++));
    }));
    const distances = results.flatMap((r) => (r.distance === undefined ? [] : [r.distance]));

    // The user's review, through the CLI: `memory learn` runs the learning workflow (writing lessons
    // through the LLM; typed ones may take hold alone) and the triage derivation; `memory list` shows
    // what waits.
    await memory('learn', '--account', w.email);
    const accepted: string[] = [];
    const rejected: string[] = [];
    for (const lesson of await listed('proposed')) {
      const verdict = judge(lesson.text);
      await memory(verdict, lesson.id);
      (verdict === 'accept' ? accepted : rejected).push(lesson.text);
      if (verdict === 'accept') held.add(lesson.id);
    }
    const alone = (await listed('accepted')).filter((l) => !held.has(l.id));
    for (const l of alone) held.add(l.id);
    const f: BlockFigures = {
      block,
      drafts: distances.length,
      meanEditDistance: distances.length ? distances.reduce((a, b) => a + b, 0) / distances.length : 0,
      unedited: distances.length ? distances.filter((d) => d === 0).length / distances.length : 0,
      newsletters: results.length - distances.length,
      corrections: results.filter((r) => r.correction).length,
      scopeLeaks: results.filter((r) => r.leak).length,
      outOfScopeDrafts: results.filter((r) => r.outOfScope).length,
      accepted,
      rejected,
      alone: alone.map((l) => l.text),
      seconds: (Date.now() - started) / 1000,
    };
    figures.push(f);
    opts.onBlock?.(f);
  }
  return figures;
}
