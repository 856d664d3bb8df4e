// Every message of our real-world corpus (test/fixtures/real-mail, one oddity per file: bounces, DSNs,
// senders without an address, group syntax, encoded words, 8-bit and very long headers, nested
// forwards, invitations, S/MIME, broken MIME...) delivered raw into the Gmail emulator and through the
// real path: ingest, threadWorkflow on the dev server, the Gmail and LLM workers, Postgres. Each must
// end settled (any state but pending / needs_response / rework_requested; Action Required with its
// reason counts) and no workflow may fail.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { awaitSettled, isSettled, type ThreadOutcome, type TrackedThread } from '../../bench/corpus/settle.js';
import { threadStatusQuery } from '../../src/thread/signals.js';
import type { ThreadStatus } from '../../src/thread/contracts.js';

interface CorpusEntry {
  file: string;
  note: string;
  /** What real Gmail does with such a message when it is not simply delivered. */
  gmail?: string;
  /** Where a reply may go, if one is drafted (lower-cased addresses); [] = no draft at all (nobody to answer). */
  draftTo?: string[];
  /** A known limitation: the draft is not expected in the thread it answers, for this reason. */
  knownIssue?: string;
}

const dir = fileURLToPath(new URL('../fixtures/real-mail/', import.meta.url));
const corpus = JSON.parse(readFileSync(`${dir}index.json`, 'utf8')) as CorpusEntry[];

let h: InboxHarness;
const refused = new Map<string, string>();
const outcomes = new Map<string, ThreadOutcome>();
const statuses = new Map<string, ThreadStatus>();
/** The To header of each thread's draft, by fixture file. */
const draftTo = new Map<string, string>();
/** The Gmail thread each thread's draft landed in. */
const draftThread = new Map<string, string>();

beforeAll(async () => {
  h = await startInboxHarness();
  await h.startWorkers();
  const tracked: TrackedThread[] = [];
  for (const entry of corpus) {
    const raw = readFileSync(`${dir}${entry.file}`);
    try {
      const deliveredAt = Date.now();
      const { threadId } = await deliverAndIngest(h, { from: '', raw: raw.toString('base64url') });
      tracked.push({ label: entry.file, accountId: h.accountId, threadId, deliveredAt });
    } catch (err) {
      refused.set(entry.file, (err as Error).message);
    }
  }
  for (const o of await awaitSettled(h, tracked, { timeoutMs: 150_000 })) outcomes.set(o.label, o);
  // The workflows' own word on the settled ones: the status query (the reason of an Action Required).
  await Promise.all(
    [...outcomes.values()].filter(isSettled).map(async (o) => {
      const status = await h
        .handle(o.threadId)
        .query(threadStatusQuery)
        .catch(async () => (await h.handle(o.threadId).result()) as ThreadStatus);
      statuses.set(o.label, status);
    }),
  );
  const mailbox = await h.gmail.control.getState(h.email, { headers: ['To'] });
  for (const o of outcomes.values()) {
    const draftId = statuses.get(o.label)?.draftId;
    const draft = mailbox.drafts.find((d) => d.id === draftId);
    if (!draft) continue;
    draftThread.set(o.label, draft.threadId);
    draftTo.set(o.label, mailbox.messages.find((m) => m.id === draft.messageId)?.headers?.To ?? '');
  }
  console.log(
    corpus
      .map((e) => {
        const o = outcomes.get(e.file);
        const how = refused.has(e.file)
          ? `refused: ${refused.get(e.file)}`
          : o?.failed
            ? `FAILED ${o.failed}`
            : isSettled(o!)
              ? o!.state
              : `not settled (${o?.state ?? 'no row'}; ${o?.stuck ?? ''})`;
        const detail =
          statuses.get(e.file)?.state === 'action_required'
            ? ` (${statuses.get(e.file)!.decisions.at(-1)?.detail})`
            : draftTo.has(e.file)
              ? ` (draft to ${draftTo.get(e.file)!.slice(0, 80)}${draftThread.get(e.file) === o?.threadId ? '' : ', in another thread'})`
              : '';
        return `${e.file}: ${how}${detail}`;
      })
      .join('\n'),
  );
}, 300_000);

afterAll(async () => {
  await h?.close();
});

/**
 * The addresses of an address-list header, as a mail client reads them: quoted strings and comments are
 * display text, an address is what stands in angle brackets, or a bare addr-spec. Lower-cased, sorted.
 */
function recipients(header: string): string[] {
  const text = header.replace(/"(?:[^"\\]|\\.)*"/g, ' ').replace(/\([^()]*\)/g, ' ');
  const angled = [...text.matchAll(/<([^<>]*)>/g)].map((m) => m[1]!.trim());
  const bare = text
    .replace(/<[^<>]*>/g, ' ')
    .split(/[,;:]/)
    .map((t) => t.trim())
    .filter((t) => /^[^\s@]+@[^\s@]+$/.test(t));
  return [...angled, ...bare]
    .filter((a) => a.includes('@'))
    .map((a) => a.toLowerCase())
    .sort();
}

describe('the real-mail corpus through the real path', () => {
  it.each(corpus)('$file ($note)', async ({ file, knownIssue, draftTo: expectedTo }) => {
    expect(refused.get(file), 'the Gmail emulator refused it').toBeUndefined();
    const outcome = outcomes.get(file)!;
    expect(outcome.failed, 'the thread workflow failed').toBeUndefined();
    expect(isSettled(outcome), `not settled: state ${outcome.state ?? '(no thread row)'}; ${outcome.stuck ?? ''}`).toBe(
      true,
    );
    const status = statuses.get(file)!;
    expect(status.state).toBe(outcome.state);
    expect(status.pendingEvents).toBe(0);
    if (status.state === 'action_required') expect(status.decisions.at(-1)?.detail).toMatch(/\S/);
    if (expectedTo?.length === 0) expect.soft(status.draftId, 'a draft for mail with nobody to answer').toBeUndefined();
    // A reply is drafted only to someone (never none, never <>), in the thread it answers.
    if (status.draftId !== undefined) {
      const to = draftTo.get(file)!;
      expect.soft(recipients(to), `draft To: ${to}`).not.toEqual([]);
      expect.soft(to).not.toMatch(/<\s*>/);
      if (expectedTo && expectedTo.length > 0) expect.soft(recipients(to), `draft To: ${to}`).toEqual(expectedTo);
      if (knownIssue === undefined)
        expect.soft(draftThread.get(file), 'the draft is in the thread it answers').toBe(outcome.threadId);
    }
    // The workflow is still running (waiting on the user) or completed: never failed.
    expect(['RUNNING', 'COMPLETED']).toContain((await h.handle(outcome.threadId).describe()).status.name);
  });
});
