// The cold-email gate end to end (docs/cleanup.md): real thread workflows on the Temporal dev server
// read mail from the Gmail emulator through googleapis, classify it (the gate in readThread, then
// the Anthropic emulator through @anthropic-ai/sdk when the rules do not decide), and label it under
// the safety policy, journaled. A sender with an earlier thread, or on the allowlist (the CLI), is not
// gated; the user taking a gated thread back (label removed, moved back to the inbox) is a correction
// the learning memory derives a triage lesson from.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listActions, setCategoryActions } from '../../src/actions/journal.js';
import { runCleanupCli } from '../../src/cli/cleanup.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { listLessons } from '../../src/learning/memory.js';
import { COLD_EMAIL_RULE_ID } from '../../src/rules/contracts.js';
import { deliver, deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { recordHistory } from '../helpers/histories.js';
import { newsletterCorrections, type NewsletterCorrections } from '../helpers/newsletter-corrections.js';
import { cliRunner } from '../helpers/run-cli.js';
import { waitUntil } from '../helpers/wait-until.js';

const tag = randomUUID().slice(0, 8);
const at = (local: string, domain = `vendor-${tag}.example`) => `${local}@${domain}`;
let h: InboxHarness;
let world: NewsletterCorrections;
const cli = cliRunner(runCleanupCli);

const db = () => prismaExecutor(h.prisma);
const journal = (threadId: string) => listActions(db(), { accountId: h.accountId, threadId, ascending: true });

/** Two outreach phrases: the rules decide, whoever the sender is (unless not a first contact). */
const PITCH = {
  subject: 'Book a demo this week',
  text: 'Hi! Teams like yours book a demo with us and save hours. Do you have 15 minutes on Thursday?',
};

async function threadLabels(threadId: string): Promise<string[]> {
  const state = await h.gmail.control.getState(h.email);
  const names = new Map(state.labels.map((l) => [l.id, l.name]));
  const ids = new Set(state.messages.filter((m) => m.threadId === threadId && !m.labelIds.includes('DRAFT')).flatMap((m) => m.labelIds));
  return [...ids].map((id) => names.get(id) ?? id);
}

/** Delivers, hands the mail to its thread, and waits until the thread has nothing left to do. */
async function handled(message: { from: string; subject: string; text: string; headers?: Record<string, string> }) {
  const { threadId } = await deliverAndIngest(h, message);
  const status = await h.waitFor(threadId, (s) => s.category !== undefined && s.pendingEvents === 0 && (s.openActions ?? []).length === 0, 30_000);
  return { threadId, status };
}

beforeAll(async () => {
  h = await startInboxHarness();
  await h.startWorkers();
  world = await newsletterCorrections(h, `news-${tag}.example`);
});

afterAll(async () => {
  await world?.cleanUp();
  await h?.close();
});

describe('the cold-email gate', () => {
  it('labels first-contact outreach by rules, without the model, and leaves it in the inbox', async () => {
    const before = h.anthropic.metrics().requests;
    const { threadId, status } = await handled({ from: `Sam Seller <${at('sam')}>`, ...PITCH });
    expect(status).toMatchObject({ category: 'cold_outreach', confidence: 1, state: 'skipped' });
    expect(status.decisions[0]).toMatchObject({ kind: 'classify', source: 'rules', ruleId: COLD_EMAIL_RULE_ID });
    expect(status.decisions[0]!.detail).toBe(`cold_outreach: rule ${COLD_EMAIL_RULE_ID}: first contact, "book a demo", "15 minutes"`);
    expect(h.anthropic.metrics().requests).toBe(before);
    const labelled = await waitUntil('labelled', async () => (await journal(threadId)).find((a) => a.kind === 'add_label' && a.state === 'done'), { timeoutMs: 30_000 });
    expect(labelled).toMatchObject({ argument: 'Cold Email', sender: at('sam'), reason: { source: 'rule', ruleId: COLD_EMAIL_RULE_ID } });
    expect(await threadLabels(threadId)).toEqual(expect.arrayContaining(['Cold Email', 'INBOX']));
    await recordHistory(h, threadId, 'thread-cold-email-rules');
  });

  it('wording from a bulk sender decides too; one signal alone goes to the model, told it is a first contact', async () => {
    const bulk = await handled({
      from: at('growth'),
      subject: 'Your pipeline',
      text: 'We help teams grow your pipeline with warm intros.',
      headers: { 'X-Mailer': 'lemlist' },
    });
    expect(bulk.status.decisions[0]!.detail).toContain('"grow your pipeline", header x-mailer');
    expect(bulk.status.category).toBe('cold_outreach');

    const before = h.anthropic.metrics().requests;
    const { threadId, status } = await handled({
      from: `Riley <${at('riley')}>`,
      subject: 'Hiring at your company',
      text: 'Hi, do you have time for a quick call next week about how you hire engineers?',
    });
    expect(h.anthropic.metrics().requests).toBeGreaterThan(before);
    expect(JSON.stringify(h.anthropic.lastRequest()?.body)).toContain('Cold-email check: the user has never exchanged mail with this sender');
    expect(status.category).toBe('cold_outreach');
    expect(status.decisions.map((d) => [d.kind, d.source])).toEqual(expect.arrayContaining([['classify', 'rules'], ['classify', 'llm']]));
    expect(status.decisions.find((d) => d.source === 'rules')!.detail).toBe('cold-email check: first contact, "quick call"; the model decides');
    await waitUntil('labelled by the model', async () => (await journal(threadId)).some((a) => a.kind === 'add_label' && a.argument === 'Cold Email' && a.state === 'done' && a.reason.source === 'llm'), {
      timeoutMs: 30_000,
    });
  });

  it('does not gate a sender the user has a thread with, in either direction', async () => {
    // An earlier message from them, and (for another sender) one the user sent them.
    await deliver(h, { from: at('known'), subject: 'Lunch', text: 'Good to see you yesterday.' });
    await h.gmail.control.deliver(h.email, { from: h.email, to: [at('written-to')], subject: 'Intro', text: 'Nice to meet you.', exactLabelIds: ['SENT'] });
    for (const sender of [at('known'), at('written-to')]) {
      const { threadId, status } = await handled({ from: sender, ...PITCH });
      // The model (which calls "book a demo" cold outreach) is asked; the gate does not let it hold.
      expect(status.category).toBe('fyi');
      expect(status.decisions.at(-1)).toMatchObject({ kind: 'skip' });
      expect(status.decisions.map((d) => d.detail)).toContain('fyi: not cold outreach, an earlier thread with the sender');
      expect((await journal(threadId)).filter((a) => a.argument === 'Cold Email')).toEqual([]);
      expect(await threadLabels(threadId)).not.toContain('Cold Email');
      if (sender === at('known')) await recordHistory(h, threadId, 'thread-cold-email-exempt'); // the gate-exempt marker
    }
  });

  it('does not gate an allowlisted sender or domain (managed from the CLI)', async () => {
    const partnerDomain = `partner-${tag}.example`;
    expect(await cli('cold-allow', '--account', h.email, '--sender', `Ada@${`Friends-${tag}.example`}`)).toEqual({ code: 0, out: `sender Ada@Friends-${tag}.example: allowed, never held back as cold email` });
    expect((await cli('cold-allow', '--account', h.email, '--domain', partnerDomain)).code).toBe(0);
    expect((await cli('cold-allow', '--account', h.email, '--domain', 'not a domain')).code).not.toBe(0);
    const listed = await cli('cold-allowlist', '--account', h.email);
    expect(listed.out).toContain(`sender  ada@friends-${tag}.example`);
    expect(listed.out).toContain(`domain  ${partnerDomain}`);

    for (const [sender, entry] of [
      [`ada@friends-${tag}.example`, `sender ada@friends-${tag}.example`],
      [`sales@eu.${partnerDomain}`, `domain ${partnerDomain}`],
    ] as const) {
      const { threadId, status } = await handled({ from: sender, ...PITCH });
      expect(status.category).toBe('fyi');
      expect(status.decisions.map((d) => d.detail)).toContain(`fyi: not cold outreach, allowlisted (${entry})`);
      expect(await threadLabels(threadId)).not.toContain('Cold Email');
    }

    // Taken off the list, the domain's first-contact outreach is gated again.
    expect((await cli('cold-unallow', '--account', h.email, '--domain', partnerDomain)).out).toBe(`domain ${partnerDomain}: removed`);
    const again = await handled({ from: at('sales', `new.${partnerDomain}`), ...PITCH });
    expect(again.status.category).toBe('cold_outreach');
  });

  it('archives only when the user says so; moving gated mail back, or removing the label, teaches the memory', async () => {
    await setCategoryActions(db(), h.accountId, 'cold_outreach', [{ kind: 'add_label', argument: 'Cold Email' }, { kind: 'archive' }]);
    try {
      const sender = at('pat', `agency-${tag}.example`);
      const threads: string[] = [];
      for (const n of [1, 2]) {
        const { threadId } = await handled({ from: sender, subject: `${PITCH.subject} ${n}`, text: PITCH.text });
        await waitUntil(`pitch ${n}: labelled and archived`, async () => (await journal(threadId)).filter((a) => a.state === 'done').length === 2, { timeoutMs: 30_000 });
        expect(await threadLabels(threadId)).not.toContain('INBOX');
        threads.push(threadId);
      }
      await world.syncNow(); // our own label and archive come back through the history: nothing to learn
      for (const threadId of threads) await h.gmail.control.modifyLabels(h.email, { threadId, add: ['INBOX'] });
      await world.syncNow();
      const lesson = await waitUntil('lesson proposed', async () => (await listLessons(db(), { accountId: h.accountId })).find((l) => l.scopeRef === sender), {
        timeoutMs: 30_000,
      });
      expect(lesson).toMatchObject({ kind: 'triage', scope: 'sender', state: 'proposed' });
      expect(lesson.current.text).toBe(`mail from ${sender}: do not archive (still cold_outreach; then: add_label:Cold Email)`);
      expect(lesson.current.evidence.map((e) => [e.source, e.kind]).sort()).toEqual([
        ['moved_back', 'archive'],
        ['moved_back', 'archive'],
      ]);

      // The label taken off is a correction of its own.
      await h.gmail.control.modifyLabels(h.email, { threadId: threads[0]!, remove: ['Cold Email'] });
      await world.syncNow();
      const recorded = await waitUntil('label correction', async () => {
        const rows = await h.prisma.learningCorrection.findMany({ where: { accountId: h.accountId, gmailThreadId: threads[0]!, source: 'label_removed' } });
        return rows.length > 0 && rows;
      }, { timeoutMs: 30_000 });
      expect(recorded.map((r) => [r.kind, r.argument, r.sender, r.category])).toEqual([['add_label', 'Cold Email', sender, 'cold_outreach']]);
    } finally {
      await h.prisma.categoryActions.deleteMany({ where: { scopeRef: h.accountId, category: 'cold_outreach' } });
    }
  });
});
