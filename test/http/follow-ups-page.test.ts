// The approvals page's list of threads awaiting a reply (issue #25), on the real path in a real
// browser: the thread workflows on the dev server set the follow-ups (one waiting for a rule's two
// business days, one fallen due after FOLLOW_UP_AFTER), our HTTP server with the app's routes lists
// them in the account's local time with their Gmail links, and the Cancel button reaches the thread
// as `threads cancel --timer follow_up` does (its cancelTimer signal; the journal says undone).
import { randomUUID } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listActions } from '../../src/actions/journal.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { gmailThreadLink } from '../../src/learning/contracts.js';
import type { ThreadStatus } from '../../src/thread/contracts.js';
import { describeLocal } from '../../src/time/index.js';
import { launchChromium } from '../helpers/browser.js';
import { recordHistory } from '../helpers/histories.js';
import { labelsOf } from '../helpers/thread-timers.js';
import { startAppServer, type AppServer } from '../helpers/app-server.js';
import { deliverAndIngest, userSends, type InboxHarness } from '../helpers/inbox-harness.js';

const OPERATOR_TOKEN = 'operator-token-for-the-follow-ups-page';
const ZONE = 'Europe/Berlin';
const tag = randomUUID().slice(0, 8);
const waitsDomain = `page-waits-${tag}.example`;
const dueDomain = `page-due-${tag}.example`;

let h: InboxHarness;
let app: AppServer;
let browser: Browser;

beforeAll(async () => {
  app = await startAppServer(
    {
      env: {
        APPROVALS_SECRET: 'follow-ups-page-secret-of-at-least-32-characters',
        APPROVALS_OPERATOR_TOKEN: OPERATOR_TOKEN,
        FOLLOW_UP_AFTER: '2s',
      },
    },
    (h) => h.prisma.account.update({ where: { id: h.accountId }, data: { timeZone: ZONE } }).then(() => {}),
  );
  h = app.h;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await h?.prisma.rule.deleteMany({ where: { scopeRef: waitsDomain } });
  await app?.close();
});

const settled = (s: ThreadStatus) => s.pendingEvents === 0;

/** Mail from someone at `domain`, drafted, answered by the user with a question. */
async function userAsks(domain: string, subject: string, until: (s: ThreadStatus) => boolean): Promise<{ threadId: string; status: ThreadStatus }> {
  const { threadId } = await deliverAndIngest(h, { from: `Ann Example <ann@${domain}>`, subject, text: 'Could you send me the numbers by Friday?' });
  const drafted = await h.waitFor(threadId, (s) => s.state === 'drafted' && settled(s));
  await userSends(h, threadId, drafted.draftId!, 'Here they are. Could you confirm by Monday?');
  return { threadId, status: await h.waitFor(threadId, (s) => until(s) && settled(s), 30_000) };
}

const threadLabels = (threadId: string) => labelsOf(h, threadId);
const followUps = (threadId: string) => listActions(prismaExecutor(h.prisma), { accountId: h.accountId, threadId }).then((all) => all.filter((a) => a.kind === 'follow_up'));

async function listPage(): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  expect((await page.goto(`${app.http.url}/approvals?token=${OPERATOR_TOKEN}`))?.status()).toBe(200);
  return page;
}

describe('the approvals page lists follow-ups', () => {
  it('shows a waiting one with its due time in the account\'s zone and one past due as Follow Up; Cancel ends the waiting one, Stop waiting the one past due, through their threads', async () => {
    await h.prisma.rule.create({ data: { scope: 'domain', scopeRef: waitsDomain, kind: 'follow_up', action: 'expects_reply', followUpDays: 2, priority: 0 } });
    const waiting = await userAsks(waitsDomain, 'Numbers', (s) => s.state === 'awaiting_reply' && (s.wakes ?? []).length === 1);
    const due = await userAsks(dueDomain, 'Totals', (s) => s.decisions.some((d) => d.detail.startsWith('follow up fired')));
    const wake = waiting.status.wakes![0]!;

    const page = await listPage();
    const waitingRow = page.locator(`tr[data-follow-up-thread="${waiting.threadId}"]`);
    const dueRow = page.locator(`tr[data-follow-up-thread="${due.threadId}"]`);
    expect(await waitingRow.getAttribute('data-state')).toBe('waiting');
    expect(await waitingRow.locator('td.due').textContent()).toBe(`waiting until ${describeLocal(new Date(wake.at), ZONE)}`);
    expect(await waitingRow.locator('td.due').textContent()).toContain(ZONE);
    expect(await waitingRow.locator('td.to').textContent()).toBe(`ann@${waitsDomain}`);
    const link = waitingRow.locator('td.subject a');
    expect(await link.textContent()).toContain('Numbers');
    expect(await link.getAttribute('href')).toBe(gmailThreadLink(h.email, waiting.threadId));
    expect(await waitingRow.textContent()).toContain(h.email);

    expect(await dueRow.getAttribute('data-state')).toBe('due');
    expect(await dueRow.locator('td.due').textContent()).toMatch(/^Follow Up since .*Europe\/Berlin/);
    expect(await dueRow.getByRole('button').textContent()).toBe('Stop waiting'); // fallen due: no timer left, the wait is
    // The section fits a 1300 px window as the rest of the list does: the page never scrolls sideways.
    await page.setViewportSize({ width: 1300, height: 900 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1300);

    const [posted] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      waitingRow.getByRole('button', { name: 'Cancel follow-up' }).click(),
    ]);
    expect(posted.status(), await posted.text()).toBe(200);
    expect(await page.locator('#outcome').textContent()).toMatch(/^follow_up on thread .*: undone \(cancelled \(user\)\)$/);
    expect((await followUps(waiting.threadId)).map((a) => a.state)).toEqual(['undone']);
    const after = await h.waitFor(waiting.threadId, (s) => !s.wakes && settled(s));
    expect(after.decisions.some((d) => d.detail.startsWith('follow up cancelled'))).toBe(true);

    // A cancelled follow-up is the user no longer waiting: the thread closes as sent.
    expect(after.state).toBe('sent');

    const again = await listPage();
    expect(await again.locator(`tr[data-follow-up-thread="${waiting.threadId}"]`).count()).toBe(0);
    const dueAgain = again.locator(`tr[data-follow-up-thread="${due.threadId}"]`);
    expect(await dueAgain.count()).toBe(1);
    expect(await threadLabels(due.threadId)).toContain('Follow Up');
    const [stopped] = await Promise.all([
      again.waitForResponse((r) => r.request().method() === 'POST'),
      dueAgain.getByRole('button', { name: 'Stop waiting' }).click(),
    ]);
    expect(stopped.status(), await stopped.text()).toBe(200);
    expect(await again.locator('#outcome').textContent()).toBe(`no longer waiting for an answer on thread ${due.threadId}`);
    const closed = await h.waitFor(due.threadId, (s) => s.state === 'sent' && settled(s));
    expect(closed.decisions.some((d) => d.detail === 'no longer awaiting an answer (user): closed as sent')).toBe(true);
    expect(await threadLabels(due.threadId)).not.toContain('Follow Up');
    expect((await followUps(due.threadId)).map((a) => a.state)).toEqual(['done']);
    expect(await (await listPage()).locator(`tr[data-follow-up-thread="${due.threadId}"]`).count()).toBe(0);
    await recordHistory(h, due.threadId, 'thread-follow-up-stop-waiting');
  });

  it('refuses a cancel without the session\'s CSRF token: the follow-up keeps waiting', async () => {
    const { threadId } = await userAsks(waitsDomain, 'Samples', (s) => s.state === 'awaiting_reply' && (s.wakes ?? []).length === 1);
    const page = await listPage();
    const form = page.locator(`tr[data-follow-up-thread="${threadId}"] form`);
    const action = await form.getAttribute('action');
    const field = (name: string) => form.locator(`input[name=${name}]`).getAttribute('value');
    const body = new URLSearchParams({ exp: (await field('exp'))!, sig: (await field('sig'))!, csrf: (await field('csrf'))!, decision: 'cancel_follow_up' });
    // The form's fields without the browser's session cookie.
    const refused = await fetch(`${app.http.url}${action}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    expect(refused.status).toBe(403);
    expect((await followUps(threadId)).map((a) => a.state)).toEqual(['scheduled']);
  });
});
