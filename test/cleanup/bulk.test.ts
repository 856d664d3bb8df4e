// Bulk archive, trash and label, end to end: the real dev server, Postgres, the Gmail emulator through
// googleapis, the workers with their quota limiter (the bulk lane). A dry run counts, a run moves
// batches journaled with their ids, undo restores exactly those, and a run whose worker processes
// are SIGKILLed mid-batch finishes when new ones come, every message moved once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAction } from '../../src/actions/journal.js';
import { bulkProgress, startBulk, undoBulk } from '../../src/cleanup/bulk.js';
import type { BulkOperation, BulkSelection } from '../../src/cleanup/contracts.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import type { DecideDeps } from '../../src/thread/decide.js';
import { recordWorkflowHistory } from '../helpers/histories.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';
import { cliRunner } from '../helpers/run-cli.js';
import { killWorker, spawnWorker } from '../helpers/worker-process.js';
import type { ChildProcess } from 'node:child_process';
import { runCleanupCli } from '../../src/cli/cleanup.js';

let h: InboxHarness;
let deps: DecideDeps;
/** The Gmail worker (the batches' activities) is its own OS process, for the test that SIGKILLs it. */
let gmailWorker: ChildProcess | undefined;
const db = () => prismaExecutor(h.prisma);

beforeAll(async () => {
  h = await startInboxHarness();
  await h.startWorkers({ gmail: false, llm: false });
  gmailWorker = spawnWorker(h, 'gmail-worker');
  deps = { client: h.client, db: db(), taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE };
});

afterAll(async () => {
  if (gmailWorker) await killWorker(gmailWorker);
  await h?.close();
});

async function deliver(from: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await h.gmail.control.deliver(h.email, { from, to: [h.email], subject: `Offer ${i}`, text: 'Buy.' })).id);
  return ids;
}

async function labelsOf(): Promise<Map<string, string[]>> {
  const state = await h.gmail.control.getState(h.email, { messageLimit: 5000 });
  return new Map(state.messages.map((m) => [m.id, m.labelIds]));
}

function start(selection: BulkSelection, operation: BulkOperation, dryRun: boolean, batchSize: number) {
  return startBulk(h.client, { accountId: h.accountId, selection, operation, dryRun, batchSize, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE });
}

describe('bulk archive', () => {
  it('a dry run counts, the run moves batches of the size asked, journaled with their ids, and undo restores exactly them', async () => {
    const mass = [...(await deliver('Deals <deals@mass.example>', 9)), ...(await deliver('Offers <offers@mass.example>', 6))];
    // A subdomain is another domain here (the providers match "@mass.example" in From).
    const kept = [...(await deliver('Friend <friend@other.example>', 2)), ...(await deliver('More <more@news.mass.example>', 1))];

    const dry = await (await start({ kind: 'domain', value: 'mass.example' }, 'archive', true, 1000)).result();
    expect(dry).toMatchObject({ state: 'dry_run', messages: 15, threads: 15, batches: 0 });
    expect([...(await labelsOf()).values()].filter((l) => l.includes('INBOX'))).toHaveLength(18);

    const handle = await start({ kind: 'domain', value: 'mass.example' }, 'archive', false, 6);
    const done = await handle.result();
    expect(done).toMatchObject({ state: 'done', messages: 15, batches: 3 });
    const labels = await labelsOf();
    for (const id of mass) expect(labels.get(id), id).not.toContain('INBOX');
    for (const id of kept) expect(labels.get(id), id).toContain('INBOX');

    const batches = await Promise.all(done.actionIds.map((id) => loadAction(db(), id)));
    expect(batches.map((b) => [b!.kind, b!.state, b!.result!.messageIds!.length])).toEqual([['archive', 'done', 6], ['archive', 'done', 6], ['archive', 'done', 3]]);
    expect(new Set(batches.flatMap((b) => b!.result!.messageIds!))).toEqual(new Set(mass));
    expect(await bulkProgress(handle)).toMatchObject({ state: 'done', messages: 15 });
    await recordWorkflowHistory(handle, 'cleanup-bulk-archive');

    const undone = await undoBulk({ ...deps, db: db() }, handle.workflowId, 'test');
    expect(undone.map((o) => o.ok)).toEqual([true, true, true]);
    const after = await labelsOf();
    for (const id of [...mass, ...kept]) expect(after.get(id), id).toContain('INBOX');
  });

  it('a search in Gmail syntax selects the mail: only what it finds is archived, and it says so in the journal', async () => {
    const weekly = await deliver('Digest <digest@query.example>', 3);
    const receipts = [(await h.gmail.control.deliver(h.email, { from: 'Digest <digest@query.example>', to: [h.email], subject: 'Your receipt', text: 'Paid.' })).id];
    const query = 'from:digest@query.example -subject:receipt';
    expect(await (await start({ kind: 'query', value: query }, 'archive', true, 1000)).result()).toMatchObject({ state: 'dry_run', messages: 3 });
    const done = await (await start({ kind: 'query', value: query }, 'archive', false, 1000)).result();
    expect(done).toMatchObject({ state: 'done', messages: 3, batches: 1 });
    const labels = await labelsOf();
    for (const id of weekly) expect(labels.get(id), id).not.toContain('INBOX');
    expect(labels.get(receipts[0]!)).toContain('INBOX');
    expect((await loadAction(db(), done.actionIds[0]!))!.subject).toBe(`archive of the mail found by ${JSON.stringify(query)}: batch 1`);
  });

  it("trash of a sender's mail, undone exactly: each message back where it was, inbox or archive", async () => {
    const spam = await deliver('Spam <spam@trashme.example>', 4);
    await h.gmail.control.modifyLabels(h.email, { messageIds: [spam[0]!], remove: ['INBOX'] }); // archived before
    const done = await (await start({ kind: 'sender', value: 'SPAM@trashme.example' }, 'trash', false, 1000)).result();
    expect(done).toMatchObject({ state: 'done', messages: 4, batches: 1 });
    const labels = await labelsOf();
    for (const id of spam) expect(labels.get(id)).toContain('TRASH');
    expect((await loadAction(db(), done.actionIds[0]!))!.result).toMatchObject({ notInInbox: [spam[0]] });
    const { workflowId } = (await h.prisma.action.findUniqueOrThrow({ where: { id: done.actionIds[0]! } }));
    expect((await undoBulk({ ...deps, db: db() }, workflowId, 'test')).every((o) => o.ok)).toBe(true);
    const back = await labelsOf();
    for (const id of spam) {
      expect(back.get(id)).not.toContain('TRASH');
      if (id === spam[0]) expect(back.get(id)).not.toContain('INBOX');
      else expect(back.get(id)).toContain('INBOX');
    }
  });

  it('label: only the mail that lacks the label, in batches journaled with their ids; a repeat touches nothing; undo takes off exactly the label it added', async () => {
    const tagged = await deliver('Tag <tag@tagme.example>', 7);
    const labelId = (await (await h.accountGmail()).gmail.ensureLabels(['Bulk Tag'])).get('Bulk Tag')!;
    const before = tagged.slice(0, 2); // the user had labelled these already
    await h.gmail.control.modifyLabels(h.email, { messageIds: before, add: [labelId] });
    // One more of them archived: a label reaches the archived mail too.
    await h.gmail.control.modifyLabels(h.email, { messageIds: [tagged[6]!], remove: ['INBOX'] });
    const sender = { kind: 'sender', value: 'tag@tagme.example' } as const;
    const label = (dryRun: boolean) => startBulk(h.client, { accountId: h.accountId, selection: sender, operation: 'label', label: 'Bulk Tag', dryRun, batchSize: 2, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE });

    expect(await (await label(true)).result()).toMatchObject({ state: 'dry_run', messages: 5, threads: 5 });
    const handle = await label(false);
    const done = await handle.result();
    expect(done).toMatchObject({ state: 'done', messages: 5, batches: 3 });
    const labels = await labelsOf();
    for (const id of tagged) expect(labels.get(id), id).toContain(labelId);
    expect(labels.get(tagged[6]!)).not.toContain('INBOX');
    const batches = await Promise.all(done.actionIds.map((id) => loadAction(db(), id)));
    expect(batches.map((b) => [b!.kind, b!.argument, b!.state, b!.result!.labelId, b!.result!.messageIds!.length])).toEqual([
      ['add_label', 'Bulk Tag', 'done', labelId, 2],
      ['add_label', 'Bulk Tag', 'done', labelId, 2],
      ['add_label', 'Bulk Tag', 'done', labelId, 1],
    ]);
    expect(new Set(batches.flatMap((b) => b!.result!.messageIds!))).toEqual(new Set(tagged.slice(2)));
    expect(batches[0]!.subject).toBe('label "Bulk Tag" of the mail of sender tag@tagme.example: batch 1');
    await recordWorkflowHistory(handle, 'cleanup-bulk-label');

    // Asked again: nothing lacks the label, nothing is counted or journaled.
    expect(await (await label(true)).result()).toMatchObject({ state: 'dry_run', messages: 0 });
    expect(await (await label(false)).result()).toMatchObject({ state: 'done', messages: 0, batches: 0, actionIds: [] });

    const undone = await undoBulk({ ...deps, db: db() }, handle.workflowId, 'test');
    expect(undone.map((o) => o.ok)).toEqual([true, true, true]);
    const after = await labelsOf();
    for (const id of before) expect(after.get(id), id).toContain(labelId);
    for (const id of tagged.slice(2)) expect(after.get(id), id).not.toContain(labelId);
  });

  // The Gmail worker's process is SIGKILLed while Gmail holds a batch's batchModify (journaled queued,
  // not yet done); a new one takes the batch's activity up after its heartbeat timeout (3 s here).
  it('resumes after its worker is SIGKILLed mid-batch: every message moved once, no batch lost or doubled, undo exact', { timeout: 120_000 }, async () => {
    const many = await deliver('Flood <flood@flood.example>', 60);
    const archivedBefore = (await deliver('Flood <flood@flood.example>', 1))[0]!;
    await h.gmail.control.modifyLabels(h.email, { messageIds: [archivedBefore], remove: ['INBOX'] });
    try {
      const handle = await startBulk(h.client, {
        accountId: h.accountId,
        selection: { kind: 'sender', value: 'flood@flood.example' },
        operation: 'archive',
        dryRun: false,
        batchSize: 4,
        taskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
        gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE,
        heartbeatTimeoutMs: 3_000,
      });
      await waitUntil('a few batches done', async () => (await bulkProgress(handle)).batches >= 3, { timeoutMs: 60_000 });
      await h.gmail.control.setFaults({ latency: [{ method: 'messages.batchModify', distribution: { type: 'fixed', ms: 5_000 } }] });
      await waitUntil('a batchModify in flight at Gmail', async () => (await h.gmail.control.metrics()).inFlight['messages.batchModify'] === 1, { timeoutMs: 60_000, everyMs: 50 });
      await killWorker(gmailWorker!);
      const rows = () => h.prisma.action.findMany({ where: { workflowId: handle.workflowId }, orderBy: { messageId: 'asc' } });
      const atKill = await rows();
      expect(atKill.filter((r) => r.state === 'queued')).toHaveLength(1); // the batch the kill cut off
      expect(atKill.length).toBeLessThan(15);
      await h.gmail.control.setFaults({ latency: [] });

      gmailWorker = spawnWorker(h, 'gmail-worker');
      const done = await handle.result();
      expect(done).toMatchObject({ state: 'done', messages: 60, batches: 15 });
      const journal = await rows();
      expect(journal.map((r) => [r.kind, r.state])).toEqual(Array(15).fill(['archive', 'done']));
      expect(new Set(journal.map((r) => r.messageId)).size).toBe(15);
      expect(journal.map((r) => r.id).sort()).toEqual([...done.actionIds].sort());
      const moved = journal.flatMap((r) => (r.result as { messageIds: string[] }).messageIds);
      expect(moved).toHaveLength(60); // in exactly one batch each
      expect(new Set(moved)).toEqual(new Set(many));
      const labels = await labelsOf();
      for (const id of many) expect(labels.get(id)).not.toContain('INBOX');

      const undone = await undoBulk({ ...deps, db: db() }, handle.workflowId, 'test');
      expect(undone.filter((o) => o.ok)).toHaveLength(15);
      const after = await labelsOf();
      for (const id of many) expect(after.get(id), id).toContain('INBOX');
      expect(after.get(archivedBefore)).not.toContain('INBOX'); // not moved by the run: not brought back
    } finally {
      await h.gmail.control.setFaults({ latency: [] });
    }
  });

  it('the CLI: a dry run says what it would touch, a run with --watch says what it moved, bulk-undo takes it back', async () => {
    await deliver('Cli <cli@cli.example>', 3);
    const run = cliRunner(runCleanupCli, h.env);
    const dry = await run('bulk', '--account', h.email, '--domain', 'cli.example', '--archive', '--dry-run');
    expect(dry.code, dry.out).toBe(0);
    expect(dry.out).toContain('dry run: it would touch 3 messages in 3 threads');
    const moved = await run('bulk', '--account', h.email, '--sender', 'cli@cli.example', '--archive', '--watch');
    expect(moved.out).toMatch(/done: 3 messages moved in 1 batches/);
    const id = /started: (bulk\/\S+)/.exec(moved.out)![1]!;
    expect((await run('bulk-status', id)).out).toMatch(/^done: 3 messages moved in 1 batches/);
    const undo = await run('bulk-undo', id);
    expect(undo.code, undo.out).toBe(0);
    expect(undo.out).toMatch(/^undone {5}undone: archive on thread bulk/);
    const labelled = await run('bulk', '--account', h.email, '--sender', 'cli@cli.example', '--label', 'Cli Seen', '--watch');
    expect(labelled.code, labelled.out).toBe(0);
    expect(labelled.out).toContain('bulk label "Cli Seen" started: bulk/');
    expect(labelled.out).toMatch(/done: 3 messages labelled in 1 batches/);
    for (const system of ['INBOX', 'trash', 'say "hi"']) {
      const refused = await run('bulk', '--account', h.email, '--sender', 'cli@cli.example', '--label', system);
      expect(refused.code, system).toBe(2);
    }
    const bad = await run('bulk', '--account', h.email, '--sender', 'x@y.example', '--archive', '--batch', '5000');
    expect(bad.code).toBe(2);
    expect(bad.out).toContain('--batch: 1 to 1000');
  });
});
