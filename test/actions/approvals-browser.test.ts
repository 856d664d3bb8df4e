// The approval channels on the real path, in a real browser: a forward the policy holds back is
// announced on Discord (the emulator) with a signed link; Chromium (playwright-core) opens
// it from the message, clicks Approve on our page, and the thread workflow sends the forward after
// its delay; a done archive is undone from the page. Real dev server, Postgres, Gmail and Anthropic
// emulators, our HTTP server with the app's routes.
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listActions, updateSafetySettings } from '../../src/actions/journal.js';
import { startDiscordEmulator, type RunningDiscordEmulator } from '../../emulators/discord/index.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { startAppServer, type AppServer } from '../helpers/app-server.js';
import { deliverAndIngest, type InboxHarness } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';

let h: InboxHarness;
let discord: RunningDiscordEmulator;
let webhook: { id: string; url: string };
let app: AppServer;
let browser: Browser;

beforeAll(async () => {
  discord = await startDiscordEmulator();
  webhook = await discord.control.createWebhook({ name: 'Durable Inbox' });
  app = await startAppServer({
    env: { DISCORD_WEBHOOK_URL: webhook.url },
    settings: { actions: { sendDelayMs: 1000, approvalExpiryMs: 600_000, pauseLabel: 'Assistant Paused', awaitingApprovalLabel: 'Awaiting Approval' } },
  });
  h = app.h;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await h?.prisma.rule.deleteMany({ where: { scopeRef: { in: ['page-fwd.example', 'page-news.example'] } } });
  await app?.close();
  await discord?.close();
});

const journal = (threadId: string) => listActions(prismaExecutor(h.prisma), { accountId: h.accountId, threadId, ascending: true });

it('approves a held-back forward from the Discord message\'s link on the page; the workflow sends it once', async () => {
  await h.prisma.rule.create({
    data: { scope: 'domain', scopeRef: 'page-fwd.example', kind: 'deterministic', action: 'fyi', actions: [{ kind: 'forward', argument: 'assistant@me.example' }] },
  });
  await updateSafetySettings(prismaExecutor(h.prisma), h.accountId, { forwardTo: ['assistant@me.example'] });
  const { threadId } = await deliverAndIngest(h, { from: 'Quinn <quinn@page-fwd.example>', subject: 'Signed lease', text: 'The signed lease is attached.' });
  const waiting = await waitUntil('the forward to wait', async () => (await journal(threadId)).find((a) => a.state === 'awaiting_approval'), { timeoutMs: 30_000 });

  const message = await waitUntil('the Discord message', async () =>
    (await discord.control.messages(webhook.id)).find((m) => m.message.content.includes(waiting.id)), { timeoutMs: 30_000 });
  expect(message.message.content).not.toContain('signed lease');
  const link = /<(http:\/\/127\.0\.0\.1:\d+\/approvals\/a\/[^>]+)>/.exec(message.message.content)![1]!;

  const page = await (await browser.newContext()).newPage();
  await page.goto(link);
  expect(await page.locator('#state').textContent()).toBe('awaiting_approval');
  const [posted] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.getByRole('button', { name: 'Approve' }).click(),
  ]);
  expect(posted.status(), await posted.text()).toBe(200);
  expect(await page.locator('#outcome').textContent()).toMatch(/: scheduled$/);

  const done = await waitUntil('the forward to go out', async () => (await journal(threadId)).find((a) => a.state === 'done'), { timeoutMs: 30_000 });
  expect(done.decidedBy).toBe('page');
  const sent = (await h.gmail.control.getState(h.email)).messages.filter((m) => m.threadId === threadId && m.labelIds.includes('SENT'));
  expect(sent.map((m) => m.id)).toEqual([done.result!.sentMessageId]);
});

it('undoes an archive from the page: the thread is back in the inbox', async () => {
  await h.prisma.rule.create({ data: { scope: 'domain', scopeRef: 'page-news.example', kind: 'deterministic', action: 'newsletter' } });
  const { threadId, messageId } = await deliverAndIngest(h, { from: 'News <n@page-news.example>', subject: 'Issue 9', text: 'News.' });
  const archive = await waitUntil('the archive', async () => (await journal(threadId)).find((a) => a.kind === 'archive' && a.state === 'done'), { timeoutMs: 30_000 });
  const token = h.cfg.APPROVALS_OPERATOR_TOKEN;
  expect(token).toBeUndefined(); // no operator token configured: the list page stays shut, the signed link works
  const { approvalKeysOnce, signLink, linkUrl } = await import('../../src/actions/approval-links.js');
  const { approvalsSettingsFromConfig } = await import('../../src/config/settings.js');
  const settings = approvalsSettingsFromConfig(h.cfg);
  const url = linkUrl(settings.publicBaseUrl, signLink(await approvalKeysOnce(h.cfg)(), archive.id, Date.now() + settings.linkTtlMs));

  const page = await (await browser.newContext()).newPage();
  await page.goto(url);
  await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Undo' }).click()]);
  expect(await page.locator('#state').textContent()).toBe('undone');
  const labels = (await h.gmail.control.getState(h.email)).messages.find((m) => m.id === messageId)!.labelIds;
  expect(labels).toContain('INBOX');
});
