// An approval nobody gives expires: the action is marked expired, its draft goes, the thread gets
// Action Required. Real dev server, Postgres and emulators; a 2-second expiry.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listActions } from '../../src/actions/journal.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';

let h: InboxHarness;

beforeAll(async () => {
  h = await startInboxHarness({
    settings: { actions: { sendDelayMs: 1000, approvalExpiryMs: 2000, pauseLabel: 'Assistant Paused', awaitingApprovalLabel: 'Awaiting Approval' } },
  });
  await h.startWorkers();
});

afterAll(async () => {
  await h?.prisma.rule.deleteMany({ where: { scopeRef: 'expiry.example' } });
  await h?.close();
});

it('expires an approval after its time: expired in the journal, its draft deleted, the thread in Action Required', async () => {
  await h.prisma.rule.create({
    data: { scope: 'domain', scopeRef: 'expiry.example', kind: 'deterministic', action: 'needs_response', actions: [{ kind: 'auto_reply' }] },
  });
  const { threadId } = await deliverAndIngest(h, { from: 'Max <max@expiry.example>', subject: 'Quick one', text: 'Can we move the call?' });
  const status = await h.waitFor(threadId, (s) => s.state === 'action_required' && s.pendingEvents === 0, 30_000);
  expect(status.decisions.at(-1)!.detail).toBe('approval of auto_reply expired');
  expect(status.openActions).toBeUndefined();

  const journal = await listActions(prismaExecutor(h.prisma), { accountId: h.accountId, threadId, ascending: true });
  expect(journal.map((a) => `${a.kind} ${a.argument ?? ''} ${a.state}`.replace('  ', ' '))).toEqual(['auto_reply expired', 'add_label Action Required done']);
  expect(journal[0]).toMatchObject({ note: 'no decision before it expired' });
  // The lifecycle's label change is journaled with its reason, and can be taken back.
  expect(journal[1]!.reason).toEqual({ source: 'system', why: 'approval of auto_reply expired' });
  const state = await h.gmail.control.getState(h.email);
  expect(state.drafts.filter((d) => d.threadId === threadId)).toEqual([]);
  const names = new Map(state.labels.map((l) => [l.id, l.name]));
  const labels = state.messages.filter((m) => m.threadId === threadId).flatMap((m) => m.labelIds.map((id) => names.get(id)));
  expect(labels).toContain('Action Required');
  expect(labels).not.toContain('Awaiting Approval');
});
