// The approvals page in a real browser (Chromium through playwright-core, test/setup/browser.ts), served by our
// HTTP server over a scratch journal, with the real decideAction: its signal reaches a stand-in of
// the thread workflow on the test Temporal server, which settles the action in the journal.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { approvalLink, deriveApprovalKeys, linkUrl, signLink } from '../../src/actions/approval-links.js';
import type { JournaledAction } from '../../src/actions/contracts.js';
import { decideAction } from '../../src/thread/decide.js';
import { loadAction } from '../../src/actions/journal.js';
import { approvalsRoutes } from '../../src/http/approvals-routes.js';
import { startHttpServer, type HttpServer } from '../../src/shared/http-server.js';
import type { SqlExecutor } from '../../src/db/sql-executor.js';
import { freePort } from '../../src/shared/free-port.js';
import { threadWorkflowId } from '../../src/thread/contracts.js';
import { openJournal, seedAction, settleDecision } from '../helpers/approvals.js';

const OPERATOR_TOKEN = 'operator-token-for-the-page-test';
const keys = deriveApprovalKeys('page-test-secret-of-at-least-32-characters');
const REPLY = 'Thanks Alice, Friday works. <script>alert("x")</script> & "quotes" \'too\'';
const HOSTILE_LABEL = '"><img src=x onerror=alert(1)>';

let journal: Awaited<ReturnType<typeof openJournal>>;
let db: SqlExecutor;
let connection: Connection;
let nativeConnection: NativeConnection;
let workflowBundle: WorkflowBundle;
let worker: Worker;
let running: Promise<void>;
let server: HttpServer;
let browser: Browser;
let accountId: string;
const taskQueue = `approvals-page-${randomUUID()}`;
const standIns: string[] = [];
const dialogs: string[] = [];

async function threadOf(action: JournaledAction): Promise<void> {
  const client = new Client({ connection });
  const workflowId = threadWorkflowId(action.accountId, action.threadId);
  await client.workflow.start('threadStandIn', { taskQueue, workflowId });
  standIns.push(workflowId);
}

async function newPage(): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  return page;
}

beforeAll(async () => {
  journal = await openJournal('page-test@durable-inbox.test');
  ({ db, accountId } = journal);

  const address = inject('temporalAddress');
  connection = await Connection.connect({ address });
  nativeConnection = await NativeConnection.connect({ address });
  workflowBundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../fixtures/workflows/approval-stand-ins.ts', import.meta.url)),
    logger: new DefaultLogger('WARN'),
  });
  worker = await Worker.create({
    connection: nativeConnection,
    taskQueue,
    workflowBundle,
    activities: { settleDecision: (event: Parameters<typeof settleDecision>[1]) => settleDecision(db, event) },
  });
  running = worker.run();

  const port = await freePort();
  const client = new Client({ connection });
  server = await startHttpServer({
    host: '127.0.0.1',
    port,
    routes: approvalsRoutes({
      db,
      decide: (actionId, decision, by) => decideAction({ client, db, taskQueue, gmailTaskQueue: `${taskQueue}-gmail` }, actionId, decision, by, 15_000),
      keys: async () => keys,
      settings: { publicBaseUrl: `http://127.0.0.1:${port}`, linkTtlMs: 3600_000, operatorToken: OPERATOR_TOKEN },
    }),
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  const client = connection && new Client({ connection });
  for (const id of standIns) await client?.workflow.getHandle(id).terminate('test over').catch(() => {});
  worker?.shutdown();
  await running?.catch(() => {});
  await nativeConnection?.close();
  await connection?.close();
  await journal?.close();
});

describe('the approvals page', () => {
  it('shows an auto-reply from its signed link, escaped, and approves it with one click', async () => {
    const action = await seedAction(db, { accountId, kind: 'auto_reply', result: { body: REPLY, draftId: 'r-1' } });
    await threadOf(action);
    const page = await newPage();

    const response = await page.goto(approvalLink(keys, server.url, action.id, 3600_000));
    expect(response?.status()).toBe(200);
    expect(await page.locator('h1').textContent()).toBe('auto_reply');
    expect(await page.locator('#state').textContent()).toBe('awaiting_approval');
    expect(await page.locator('#reply').textContent()).toBe(REPLY);
    const text = await page.locator('body').innerText();
    expect(text).toContain('page-test@durable-inbox.test');
    expect(text).toContain(action.threadId);
    expect(text).toContain('auto_reply is a dangerous action: it needs your approval');
    expect(text).toContain('the LLM (confidence 0.91, claude-sonnet-4-6)');
    expect(await page.locator('script').count()).toBe(0);
    const cookies = await page.context().cookies();
    expect(cookies).toEqual([expect.objectContaining({ name: 'approvals_session', httpOnly: true, sameSite: 'Strict', path: '/approvals' })]);

    const [posted] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Approve' }).click(),
    ]);
    expect(posted.status(), await posted.text()).toBe(200);
    expect(await page.locator('#outcome').textContent()).toMatch(/^auto_reply on thread .*: scheduled$/);
    expect(await page.locator('#state').textContent()).toBe('scheduled');
    // Waiting out its send delay: Undo is all that is left.
    expect(await page.getByRole('button').allTextContents()).toEqual(['Undo']);
    expect(await loadAction(db, action.id)).toMatchObject({ state: 'scheduled', decidedBy: 'page' });
    expect(dialogs).toEqual([]);
  });

  it('answers 403 to a forged or an expired link, and shows nothing of the action', async () => {
    const action = await seedAction(db, { accountId, kind: 'auto_reply', result: { body: REPLY } });
    const page = await newPage();

    const good = new URL(approvalLink(keys, server.url, action.id, 3600_000));
    const forged = new URL(good);
    forged.searchParams.set('sig', deriveApprovalKeys('another-secret-of-at-least-32-characters!').link.toString('base64url').slice(0, 43));
    let response = await page.goto(forged.toString());
    expect(response?.status()).toBe(403);
    expect(await page.locator('#message').textContent()).toBe('This link is not valid.');

    const extended = new URL(good);
    extended.searchParams.set('exp', String(Number(good.searchParams.get('exp')) + 86_400));
    expect((await page.goto(extended.toString()))?.status()).toBe(403);

    const otherAction = await seedAction(db, { accountId, kind: 'trash' });
    expect((await page.goto(good.toString().replace(action.id, otherAction.id)))?.status()).toBe(403);

    response = await page.goto(linkUrl(server.url, signLink(keys, action.id, Date.now() - 1000)));
    expect(response?.status()).toBe(403);
    expect(await page.locator('#message').textContent()).toMatch(/^This link has expired/);
    expect(await page.content()).not.toContain('Friday');
  });

  it('refuses a POST without the CSRF token, or from another site, and changes nothing', async () => {
    const action = await seedAction(db, { accountId, kind: 'forward', argument: 'boss@example.com' });
    await threadOf(action);
    const link = signLink(keys, action.id, Date.now() + 3600_000);
    const page = await newPage();
    await page.goto(linkUrl(server.url, link)); // a real session cookie and form
    const session = (await page.context().cookies())[0]!;
    const csrf = await page.locator('input[name=csrf]').getAttribute('value');

    const post = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/approvals/a/${action.id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(fields).toString(),
      });
    const fields = { exp: String(link.exp), sig: link.sig, decision: 'approve' };
    const cookie = `${session.name}=${session.value}`;
    expect((await post(fields, { cookie })).status).toBe(403); // no token
    expect((await post({ ...fields, csrf: 'x'.repeat(43) }, { cookie })).status).toBe(403); // a made-up token
    expect((await post({ ...fields, csrf: csrf! })).status).toBe(403); // the token without its session
    expect((await post({ ...fields, csrf: csrf! }, { cookie, origin: 'https://evil.example' })).status).toBe(403);
    expect((await post({ ...fields, sig: 'A'.repeat(43), csrf: csrf! }, { cookie })).status).toBe(403);

    // A page on another origin posting the form in the victim's browser.
    const attacker: Server = createServer((_, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<form method="post" action="${server.url}/approvals/a/${action.id}">
        <input name="exp" value="${link.exp}"><input name="sig" value="${link.sig}"><input name="decision" value="approve">
        <button>Win a prize</button></form>`);
    });
    await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', r));
    try {
      const { port } = attacker.address() as { port: number };
      await page.goto(`http://localhost:${port}/`);
      const [refused] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Win a prize' }).click(),
      ]);
      expect(refused.status()).toBe(403);
    } finally {
      attacker.close();
    }

    expect(await loadAction(db, action.id)).toMatchObject({ state: 'awaiting_approval' });
    expect((await loadAction(db, action.id))?.decidedBy).toBeUndefined();
  });

  it('lists pending and recent actions for the operator token, and rejects from the list', async () => {
    const pending = await seedAction(db, { accountId, kind: 'add_label', argument: HOSTILE_LABEL });
    await threadOf(pending);
    await seedAction(db, { accountId, kind: 'archive', state: 'done' });
    const page = await newPage();

    expect((await page.goto(`${server.url}/approvals`))?.status()).toBe(403);
    expect((await page.goto(`${server.url}/approvals?token=wrong-token-of-some-length`))?.status()).toBe(403);
    expect((await page.goto(`${server.url}/approvals?token=${OPERATOR_TOKEN}`))?.status()).toBe(200);

    const row = page.locator(`tr[data-action-id="${pending.id}"]`).first();
    expect(await row.locator('a').textContent()).toBe(`add_label ${HOSTILE_LABEL}`);
    expect(await page.locator('img').count()).toBe(0);
    // Links and forms name the action by id only; the one other link is the senders page on this
    // origin, with the token this page was opened with (the page's referrer policy keeps it here).
    for (const a of await page.locator('a:not(#senders)').all()) {
      expect(await a.getAttribute('href')).toMatch(/^\/approvals\/a\/[0-9a-f-]{36}\?exp=\d+&sig=[\w-]{43}$/);
    }
    expect(await page.locator('a#senders').getAttribute('href')).toBe(`/approvals/senders?token=${OPERATOR_TOKEN}`);
    for (const form of await page.locator('form').all()) {
      expect(await form.getAttribute('action')).toMatch(/^\/approvals\/a\/[0-9a-f-]{36}$/);
    }

    const [posted] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      row.getByRole('button', { name: 'Reject' }).click(),
    ]);
    expect(posted.status()).toBe(200);
    expect(await page.locator('#outcome').textContent()).toMatch(/: rejected$/);
    expect(await loadAction(db, pending.id)).toMatchObject({ state: 'rejected', decidedBy: 'page' });
    expect(dialogs).toEqual([]);
  });

  it('fits the list in a 1300 px window with long mail in it, and scrolls the table, not the page, in a narrow one', async () => {
    const longWord = 'Re-'.repeat(40) + 'quarterly-numbers-and-the-rest-of-a-subject-without-spaces';
    await seedAction(db, {
      accountId,
      kind: 'auto_reply',
      subject: longWord,
      recipients: ['a.very.long.recipient.address.for.layout@subdomain.of.some.example-company.example', 'second@example.org'],
      sender: 'someone.with.a.long.address.too@sales.department.example-company.example',
      because: ['auto_reply sends mail: it needs your approval until the sender has earned it', 'the recipient was not named by the sender'],
      result: { body: `Thank you for your message.\n${'We will get back to you with the numbers soon. '.repeat(12)}\nBest regards` },
    });
    const page = await newPage();
    for (const width of [1300, 800]) {
      await page.setViewportSize({ width, height: 900 });
      expect((await page.goto(`${server.url}/approvals?token=${OPERATOR_TOKEN}`))?.status()).toBe(200);
      // The page itself never scrolls sideways.
      expect(await page.evaluate("document.documentElement.scrollWidth"), `at ${width} px`).toBeLessThanOrEqual(width);
      if (width === 1300) {
        // Every column, State and the buttons included, is in view.
        for (const th of await page.locator('table').first().locator('th').all()) {
          const box = (await th.boundingBox())!;
          expect(box.x + box.width, `${await th.textContent()} at ${width} px`).toBeLessThanOrEqual(width);
        }
      }
    }
  });

  it('keeps every Approve and Reject button on one line, at every window width', async () => {
    await seedAction(db, {
      accountId,
      kind: 'auto_reply',
      subject: 'Re-'.repeat(30) + 'a-subject-without-spaces',
      recipients: ['someone.with.a.rather.long.address@subdomain.example-company.example'],
      result: { body: `Thanks.\n${'We will get back to you with the numbers soon. '.repeat(8)}` },
    });
    await seedAction(db, { accountId, kind: 'forward', argument: 'boss@example.com' });
    const page = await newPage();
    for (const width of [360, 800, 1300, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      expect((await page.goto(`${server.url}/approvals?token=${OPERATOR_TOKEN}`))?.status()).toBe(200);
      const buttons = page.locator('tbody button');
      expect(await buttons.count(), `buttons at ${width} px`).toBeGreaterThanOrEqual(4);
      for (const button of await buttons.all()) {
        // One line box for the label: a label broken between letters has one per line.
        const lines = await button.evaluate((b) => {
          const range = b.ownerDocument.createRange();
          range.selectNodeContents(b);
          return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
        });
        expect.soft(lines, `"${await button.textContent()}" at ${width} px`).toBe(1);
      }
    }
  });

  it('says why when a decision no longer applies', async () => {
    const action = await seedAction(db, { accountId, kind: 'trash' });
    await threadOf(action);
    const page = await newPage();
    await page.goto(approvalLink(keys, server.url, action.id, 3600_000));
    await settleDecision(db, { type: 'action_decision', actionId: action.id, decision: 'reject', by: 'cli' }); // decided elsewhere meanwhile

    const [posted] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Approve' }).click(),
    ]);
    expect(posted.status()).toBe(409);
    expect(await page.locator('#outcome').textContent()).toMatch(/^cannot approve action .*: it is rejected$/);
    expect(await loadAction(db, action.id)).toMatchObject({ state: 'rejected', decidedBy: 'cli' });
  });
});
