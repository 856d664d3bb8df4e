// Unsubscribing, end to end: the real dev server, Postgres, the Gmail emulator through googleapis, a
// real HTTPS one-click endpoint on loopback (reachable through the test-only allowance). The
// unsubscribe is judged by the safety policy, waits for approval like any dangerous action (decided
// through decideAction, as the CLI and the page do), is carried out once, journaled with its result,
// retried on a bounded schedule, and a mailto: one goes out through the user's mailbox.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ActionReason } from '../../src/actions/contracts.js';
import { loadAction, updateSafetySettings } from '../../src/actions/journal.js';
import type { SafetyPolicy } from '../../src/actions/policy.js';
import { startUnsubscribe, unsubscribeStatus } from '../../src/cleanup/unsubscribe.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { createOneClickClient, ONE_CLICK_BODY, type OneClickClient } from '../../src/outbound/one-click.js';
import { decideAction, type DecideDeps } from '../../src/thread/decide.js';
import { recordWorkflowHistory } from '../helpers/histories.js';
import { startOneClickServer, type OneClickServer } from '../helpers/one-click-server.js';
import { waitUntil } from '../helpers/wait-until.js';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { labelsOf } from '../helpers/thread-timers.js';
import { STILL_SENDING_RULE_ID } from '../../src/rules/contracts.js';
import { UNSUBSCRIBE_IGNORED_LABEL } from '../../src/thread/rules-verdict.js';

let h: InboxHarness;
let server: OneClickServer;
let oneClick: OneClickClient;
let deps: DecideDeps;
const db = () => prismaExecutor(h.prisma);
const suggested: ActionReason = { source: 'system', why: 'clean-up: you never open this sender' };

beforeAll(async () => {
  server = await startOneClickServer();
  oneClick = createOneClickClient({ testAllowance: server.allowance, timeoutMs: 2_000 });
  h = await startInboxHarness();
  await h.startWorkers({ oneClick });
  deps = { client: h.client, db: db(), taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE };
});

afterEach(async () => {
  await h.prisma.safetySettings.deleteMany({ where: { scopeRef: h.accountId } });
});

afterAll(async () => {
  await h?.close();
  oneClick?.close();
  await server?.close();
});

async function newsletter(from: string, headers: Record<string, string>) {
  return h.gmail.control.deliver(h.email, { from, to: [h.email], subject: 'This week', text: 'News.', headers });
}

function start(sender: string, reason: ActionReason = suggested, settings = {}) {
  return startUnsubscribe(h.client, { accountId: h.accountId, sender, reason, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE, settings: { firstRetryMs: 200, maxIntervalMs: 1_000, ...settings } });
}

async function until(handle: Awaited<ReturnType<typeof start>>, states: string[]) {
  return waitUntil(`unsubscribe ${handle.workflowId} in ${states.join('|')}`, async () => {
    const status = await unsubscribeStatus(handle);
    return states.includes(status.state) && status;
  });
}

async function policy(patch: Partial<SafetyPolicy>) {
  await updateSafetySettings(db(), h.accountId, patch);
}

describe('one-click (RFC 8058)', () => {
  it('waits for approval, then POSTs once, and journals the answer', async () => {
    await newsletter('Weekly <news@weekly.example>', {
      'List-Unsubscribe': `<mailto:leave@weekly.example>, <${server.origin}/u/weekly?t=opaque>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
    const handle = await start('News@Weekly.example');
    const waiting = await until(handle, ['awaiting_approval']);
    const proposed = (await loadAction(db(), waiting.actionId!))!;
    expect(proposed).toMatchObject({ kind: 'unsubscribe', argument: 'news@weekly.example', sender: 'news@weekly.example', verdict: 'needs_approval' });
    expect(proposed.because.join(' ')).toMatch(/unsubscribe needs your approval/);
    expect(proposed.result?.unsubscribe).toEqual({ method: 'one_click', uri: `${server.origin}/u/weekly?t=opaque` });
    expect(server.requests.filter((r) => r.path === '/u/weekly')).toHaveLength(0);

    const outcome = await decideAction(deps, proposed.id, 'approve', 'test');
    expect(outcome.ok).toBe(true);
    const final = await handle.result();
    expect(final.state).toBe('done');
    const done = (await loadAction(db(), proposed.id))!;
    expect(done).toMatchObject({ state: 'done', decidedBy: 'test' });
    expect(done.result?.unsubscribe).toMatchObject({ method: 'one_click', status: 200 });
    const posts = server.requests.filter((r) => r.path === '/u/weekly');
    expect(posts).toHaveLength(1);
    expect(posts[0]).toMatchObject({ method: 'POST', body: ONE_CLICK_BODY });

    // Undo cannot take it back, and says so.
    const undo = await decideAction(deps, proposed.id, 'undo', 'test');
    expect(undo.ok).toBe(false);
    expect(undo.message).toMatch(/cannot be taken back/);
    await recordWorkflowHistory(handle, 'unsubscribe-one-click-approved');
  });

  it('runs without approval where the policy allows unsubscribe for the domain; rejected, nothing is posted', async () => {
    await newsletter('Deals <deals@shop.example>', { 'List-Unsubscribe': `<${server.origin}/u/shop>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });
    await newsletter('Promo <promo@promo.example>', { 'List-Unsubscribe': `<${server.origin}/u/promo>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });
    await policy({ allowances: [{ kind: 'unsubscribe', scope: 'domain', ref: 'shop.example' }] });
    const allowed = await (await start('deals@shop.example')).result();
    expect(allowed.state).toBe('done');
    expect((await loadAction(db(), allowed.actionId!))!.because).toEqual(['unsubscribe allowed for domain shop.example']);
    expect(server.requests.filter((r) => r.path === '/u/shop')).toHaveLength(1);

    const held = await start('promo@promo.example');
    const waiting = await until(held, ['awaiting_approval']);
    expect((await decideAction(deps, waiting.actionId!, 'reject', 'test')).ok).toBe(true);
    expect(await held.result()).toMatchObject({ state: 'rejected' });
    expect(server.requests.filter((r) => r.path === '/u/promo')).toHaveLength(0);
  });

  it('an endpoint that keeps failing is retried on a bounded schedule, then journaled failed', async () => {
    let tries = 0;
    server.route('/u/down', (_req, res) => {
      tries++;
      res.writeHead(503).end('later');
    });
    await newsletter('Down <list@down.example>', { 'List-Unsubscribe': `<${server.origin}/u/down>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });
    const result = await (await start('list@down.example', { source: 'user' }, { maxAttempts: 3 })).result();
    expect(result.state).toBe('failed');
    expect(result.note).toMatch(/gave up after 3 attempts: answered 503/);
    expect(tries).toBe(3);
  });

  it('a one-click URI that points inside the network is refused and journaled failed, nothing sent', async () => {
    await newsletter('Evil <list@evil.example>', { 'List-Unsubscribe': '<https://169.254.169.254/latest/meta-data/>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });
    const result = await (await start('list@evil.example', { source: 'user' })).result();
    expect(result.state).toBe('failed');
    expect((await loadAction(db(), result.actionId!))!.note).toMatch(/^refused: the address is not public/);
  });

  it('a sender without List-Unsubscribe (or with an http: link only) has nothing to unsubscribe from', async () => {
    await newsletter('Plain <plain@plain.example>', { 'List-Unsubscribe': '<http://plain.example/unsub?id=1>' });
    const result = await (await start('plain@plain.example')).result();
    expect(result).toMatchObject({ state: 'nothing_to_do' });
    expect(result.note).toMatch(/says how to unsubscribe/);
  });
});

describe('mailto:', () => {
  it("is sent once through the user's mailbox, with the action's marker, to the list's address only", async () => {
    await newsletter('Club <club@club.example>', { 'List-Unsubscribe': '<mailto:leave@club.example?subject=remove%20me>' });
    const result = await (await start('club@club.example', { source: 'user' })).result();
    expect(result.state).toBe('done');
    const action = (await loadAction(db(), result.actionId!))!;
    expect(action.recipients).toEqual(['leave@club.example']);
    const state = await h.gmail.control.getState(h.email, { headers: ['X-Durable-Inbox-Action'] });
    const sent = state.messages.filter((m) => m.labelIds.includes('SENT'));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ id: action.result!.sentMessageId, subject: 'remove me' });
    expect(sent[0]!.to).toContain('leave@club.example');
    expect(sent[0]!.headers?.['X-Durable-Inbox-Action']).toBe(action.id);
  });

  it("a mailto: outside the sender's domain waits for approval even when the user asked", async () => {
    await newsletter('Shop <news@store.example>', { 'List-Unsubscribe': '<mailto:victim@elsewhere.example>' });
    const handle = await start('news@store.example', { source: 'user' });
    const waiting = await until(handle, ['awaiting_approval']);
    const action = (await loadAction(db(), waiting.actionId!))!;
    expect(action.because).toEqual(["the unsubscribe mail goes to victim@elsewhere.example, outside the sender's domain"]);
    expect((await decideAction(deps, action.id, 'reject', 'test')).ok).toBe(true);
    await handle.result();
  });
});

describe('after the unsubscribe', () => {
  it("flags the sender's mail that keeps coming past the 2 days a sender has to honour it; mail in flight is not flagged", async () => {
    const unsubscribe = { 'List-Unsubscribe': `<${server.origin}/u/daily>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
    await newsletter('Daily <daily@daily.example>', unsubscribe);
    const done = await (await start('daily@daily.example', { source: 'user' })).result();
    expect(done.state).toBe('done');
    const settled = (threadId: string) => h.waitFor(threadId, (s) => s.category !== undefined && s.pendingEvents === 0 && (s.openActions ?? []).length === 0, 30_000);
    const mail = { from: 'Daily <daily@daily.example>', subject: 'Today', text: 'Our picks for you.', headers: unsubscribe };

    const inFlight = await deliverAndIngest(h, mail);
    const early = await settled(inFlight.threadId);
    expect(early.decisions.map((d) => d.ruleId)).not.toContain(STILL_SENDING_RULE_ID);
    expect(await labelsOf(h, inFlight.threadId)).not.toContain(UNSUBSCRIBE_IGNORED_LABEL);

    // The unsubscribe was carried out three days before the next mail arrives.
    await h.prisma.$executeRaw`UPDATE actions SET done_at = done_at - interval '3 days' WHERE id = ${done.actionId!}`;
    const ignored = await deliverAndIngest(h, { ...mail, subject: 'Still here' });
    const late = await settled(ignored.threadId);
    const decision = late.decisions.find((d) => d.ruleId === STILL_SENDING_RULE_ID);
    expect(decision?.detail).toMatch(/^newsletter: daily@daily\.example still sends 3 day\(s\) after you unsubscribed \(\d{4}-\d{2}-\d{2}\)$/);
    expect(await labelsOf(h, ignored.threadId)).toEqual(expect.arrayContaining([UNSUBSCRIBE_IGNORED_LABEL, 'INBOX']));

    // Mail dressed as the sender (its display name) is not the sender's.
    const dressed = await deliverAndIngest(h, { ...mail, from: '"daily@daily.example" <other@elsewhere.example>', subject: 'Dressed' });
    expect((await settled(dressed.threadId)).decisions.map((d) => d.ruleId)).not.toContain(STILL_SENDING_RULE_ID);
  });
});
