// Who sends what, end to end: mail in the Gmail emulator, read into Postgres by the real backfill
// workflow (dev server, workers, googleapis), then `cleanup senders` (and `senders`) and the page
// beside the approvals list compute the figures from what the backfill stored; mail the live sync
// hands to threads afterwards is stored by its thread, its labels kept current by the sync.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillWorkflow } from '../../src/backfill/backfill-workflow.js';
import { backfillWorkflowId } from '../../src/backfill/contracts.js';
import { listSenders } from '../../src/cleanup/senders.js';
import { runCleanupCli } from '../../src/cli/cleanup.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { startHttpServer, type HttpServer } from '../../src/shared/http-server.js';
import { appRoutes } from '../../src/http/routes.js';
import { cliRunner } from '../helpers/run-cli.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';
import { notifySync, requestFullScan } from '../../src/sync/notify.js';
import { syncWorkflowId } from '../../src/sync/contracts.js';
import { syncStatusQuery } from '../../src/sync/sync-workflow.js';

let h: InboxHarness;
let http: HttpServer;
const TOKEN = 'operator-token-for-senders';
const db = () => prismaExecutor(h.prisma);
const day = 86_400_000;

beforeAll(async () => {
  h = await startInboxHarness({ env: { APPROVALS_OPERATOR_TOKEN: TOKEN } });
  await h.startWorkers();
  const now = Date.now();
  const unsub = { 'List-Unsubscribe': '<https://news.example/u?t=1>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
  // A newsletter never opened (3), one opened (2, one read), a friend answered (2), an old sender outside the window.
  for (let i = 0; i < 3; i++) await h.gmail.control.deliver(h.email, { from: 'Daily <daily@news.example>', to: [h.email], subject: `Daily ${i}`, text: 'x', headers: unsub, internalDate: now - (i + 1 * day) });
  await h.gmail.control.deliver(h.email, { from: 'Weekly <weekly@news.example>', to: [h.email], subject: 'Weekly 1', text: 'x', headers: unsub, unread: false, internalDate: now - 3 * day });
  await h.gmail.control.deliver(h.email, { from: 'Weekly <WEEKLY@news.example>', to: [h.email], subject: 'Weekly 2', text: 'x', headers: unsub, internalDate: now - 2 * day });
  const first = await h.gmail.control.deliver(h.email, { from: 'Alice <alice@friends.example>', to: [h.email], subject: 'Lunch', text: 'Friday?', unread: false, internalDate: now - 5 * day });
  await h.gmail.control.deliver(h.email, { from: h.email, to: ['alice@friends.example'], subject: 'Re: Lunch', text: 'Yes', threadId: first.threadId, labelIds: ['SENT'], exactLabelIds: ['SENT'], internalDate: now - 4 * day });
  await h.gmail.control.deliver(h.email, { from: 'Alice <alice@friends.example>', to: [h.email], subject: 'Re: Lunch', text: 'Great', threadId: first.threadId, internalDate: now - 3 * day });
  await h.gmail.control.deliver(h.email, { from: 'Old <old@old.example>', to: [h.email], subject: 'Long ago', text: 'x', internalDate: now - 200 * day });

  // The real backfill stores every message (headers, labels, dates) in Postgres.
  const handle = await h.client.workflow.start(backfillWorkflow, {
    workflowId: backfillWorkflowId(h.accountId),
    taskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
    args: [{ accountId: h.accountId, rangeEnd: now + 60_000, taskQueues: { workflows: h.cfg.TEMPORAL_TASK_QUEUE, gmail: h.cfg.GMAIL_TASK_QUEUE } }],
  });
  await handle.result();
  // The category the thread workflow gave the newsletter's threads (as it writes it in threads).
  const daily = await h.prisma.$queryRawUnsafe<{ gmail_thread_id: string }[]>(`SELECT DISTINCT gmail_thread_id FROM messages WHERE account_id = $1 AND headers->>'from' LIKE 'Daily%'`, h.accountId);
  for (const t of daily) await h.prisma.thread.create({ data: { accountId: h.accountId, gmailThreadId: t.gmail_thread_id, state: 'closed', category: 'newsletter' } });

  http = await startHttpServer({ port: 0, host: '127.0.0.1', routes: appRoutes(h.cfg, { prisma: h.prisma, client: h.client }) });
});

afterAll(async () => {
  await http?.close();
  await h?.close();
});

describe('the figures', () => {
  it('per sender: messages, unread share, replied to, category, List-Unsubscribe, last date; addresses read by the one parser', async () => {
    const rows = await listSenders(db(), { accountId: h.accountId, since: new Date(Date.now() - 90 * day) });
    const by = new Map(rows.map((r) => [r.key, r]));
    expect([...by.keys()].sort()).toEqual(['alice@friends.example', 'daily@news.example', 'weekly@news.example']);
    expect(by.get('daily@news.example')).toMatchObject({ messages: 3, unread: 3, unreadShare: 1, repliedTo: 0, category: 'newsletter', listUnsubscribe: true });
    // WEEKLY@ and weekly@ are one sender (two From headers, merged after parsing).
    expect(by.get('weekly@news.example')).toMatchObject({ messages: 2, unread: 1, unreadShare: 0.5, repliedTo: 0, listUnsubscribe: true });
    // Alice's first message was answered by the user; her second was not (yet).
    expect(by.get('alice@friends.example')).toMatchObject({ messages: 2, repliedTo: 1, listUnsubscribe: false, category: '' });
    expect(rows[0]!.key).toBe('daily@news.example');
  });

  it('per domain, sorted, and the never-opened filter', async () => {
    const domains = await listSenders(db(), { accountId: h.accountId, since: new Date(Date.now() - 90 * day), by: 'domain' });
    expect(domains.map((d) => [d.key, d.messages])).toEqual([['news.example', 5], ['friends.example', 2]]);
    const never = await listSenders(db(), { accountId: h.accountId, since: new Date(Date.now() - 365 * day), filter: 'never-opened' });
    expect(never.map((s) => s.key)).toEqual(['daily@news.example']);
    const byReplied = await listSenders(db(), { accountId: h.accountId, since: new Date(Date.now() - 365 * day), sort: 'replied' });
    expect(byReplied[0]!.key).toBe('alice@friends.example');
    expect(byReplied.map((s) => s.key)).toContain('old@old.example');
  });
});

describe('the CLI and the page', () => {
  it('cleanup senders prints the table; senders is the same command', async () => {
    const run = cliRunner(runCleanupCli);
    const { code, out } = await run('senders', '--account', h.email, '--since', '90d', '--filter', 'never-opened');
    expect(code, out).toBe(0);
    expect(out).toMatch(/^sender +messages +unread +replied +category +unsubscribe +last$/m);
    expect(out).toMatch(/^daily@news\.example +3 +100% +0 +newsletter +yes +\d{4}-\d\d-\d\d$/m);
    expect(out).not.toContain('alice@');
    const bad = await run('senders', '--account', h.email, '--sort', 'loudest');
    expect(bad.code).toBe(2);
    expect(bad.out).toContain('--sort: messages, unread, replied, last');
  });

  it('the page beside the approvals list: the operator token, per domain, and escaped values', async () => {
    expect((await fetch(`${http.url}/approvals/senders?token=wrong`)).status).toBe(403);
    const res = await fetch(`${http.url}/approvals/senders?token=${TOKEN}&account=${encodeURIComponent(h.email)}&by=domain`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await res.text();
    expect(html).toContain(`Senders of ${h.email}`);
    expect(html).toMatch(/<tr><td>news\.example<\/td><td>5<\/td><td>80%<\/td><td>0<\/td><td>newsletter<\/td><td>yes<\/td>/);
    const filtered = await (await fetch(`${http.url}/approvals/senders?token=${TOKEN}&account=${encodeURIComponent(h.email)}&filter=never-opened`)).text();
    expect(filtered).toContain('<td>daily@news.example</td>');
    expect(filtered).not.toContain('<td>weekly@news.example</td>');
  });
});

describe('mail the live sync hands to threads after the backfill', () => {
  it('is in the view as soon as its thread read it, and its unread share follows the mailbox', async () => {
    const sync = () => notifySync({ client: h.client, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE }, h.accountId, { source: 'poll' });
    await sync();
    await waitUntil('the sync cursor', async () => (await h.prisma.account.findUniqueOrThrow({ where: { id: h.accountId } })).historyId ?? false);
    const live = await h.gmail.control.deliver(h.email, { from: 'Live <live@live.example>', to: [h.email], subject: 'Hello there', text: 'A new message, after the backfill.', headers: { 'List-Unsubscribe': '<mailto:off@live.example>' } });
    const figures = async () => (await listSenders(db(), { accountId: h.accountId, since: new Date(Date.now() - day) })).find((r) => r.key === 'live@live.example');
    await sync();
    const stored = await waitUntil('the live message in the view', figures);
    expect(stored).toMatchObject({ messages: 1, unread: 1, listUnsubscribe: true });
    expect(await h.prisma.message.findUniqueOrThrow({ where: { accountId_gmailId: { accountId: h.accountId, gmailId: live.id } }, select: { writes: true } })).toEqual({ writes: 0 });

    // The user reads it in Gmail: the sync's next page says so, and the row follows.
    await h.gmail.control.modifyLabels(h.email, { messageIds: [live.id], remove: ['UNREAD'] });
    await sync();
    expect(await waitUntil('the read message counted read', async () => ((await figures())?.unread === 0 ? await figures() : false))).toMatchObject({ messages: 1, unread: 0 });
  });

  it('the approvals list links the senders page', async () => {
    const html = await (await fetch(`${http.url}/approvals?token=${TOKEN}`)).text();
    expect(html).toContain(`<a id="senders" href="/approvals/senders?token=${TOKEN}">`);
  });
});

describe('changes made while the sync could not see them', () => {
  it('the full scan brings the stored labels up to date: the user read and archived mail while the history was gone', async () => {
    const figures = async () => new Map((await listSenders(db(), { accountId: h.accountId, since: new Date(Date.now() - 90 * day) })).map((r) => [r.key, r]));
    expect((await figures()).get('daily@news.example')).toMatchObject({ messages: 3, unread: 3 });
    expect((await figures()).get('weekly@news.example')).toMatchObject({ messages: 2, unread: 1 });
    const ids = async (from: string) =>
      (await h.prisma.$queryRawUnsafe<{ gmail_id: string }[]>(`SELECT gmail_id FROM messages WHERE account_id = $1 AND headers->>'from' LIKE $2 ORDER BY gmail_id`, h.accountId, `${from}%`)).map((r) => r.gmail_id);
    const [daily0, daily1] = await ids('Daily');
    const weekly = await ids('Weekly <WEEKLY');
    // Read and archived in Gmail (out of the inbox: the scan hands none of them to a thread, which would store them itself);
    // then Gmail's history of it is gone.
    await h.gmail.control.modifyLabels(h.email, { messageIds: [daily0!, daily1!, ...weekly], remove: ['UNREAD', 'INBOX'] });
    await h.gmail.control.expireHistory(h.email);
    expect((await figures()).get('daily@news.example')).toMatchObject({ unread: 3 });

    const sync = h.client.workflow.getHandle(syncWorkflowId(h.accountId));
    const scansBefore = (await sync.query(syncStatusQuery)).stats.fullScans;
    await requestFullScan({ client: h.client, taskQueue: h.cfg.TEMPORAL_TASK_QUEUE }, h.accountId, { days: 10 });
    const status = await waitUntil('the full scan', async () => {
      const s = await sync.query(syncStatusQuery);
      return s.stats.fullScans > scansBefore && s;
    });
    // The three, and any other row a change out of sight left stale (a thread's own action the sync has not read yet).
    expect(status.lastScan?.kind).toBe('full_scan');
    expect(status.lastScan!.relabelled).toBeGreaterThanOrEqual(3);
    const after = await figures();
    expect(after.get('daily@news.example')).toMatchObject({ messages: 3, unread: 1, unreadShare: 1 / 3 });
    expect(after.get('weekly@news.example')).toMatchObject({ messages: 2, unread: 0 });
    const never = await listSenders(db(), { accountId: h.accountId, since: new Date(Date.now() - 90 * day), filter: 'never-opened' });
    expect(never.map((s) => s.key)).not.toContain('daily@news.example');
    for (const id of [daily0!, daily1!, ...weekly]) {
      const row = await h.prisma.message.findUniqueOrThrow({ where: { accountId_gmailId: { accountId: h.accountId, gmailId: id } }, select: { labelIds: true } });
      expect(row.labelIds.filter((l) => l === 'INBOX' || l === 'UNREAD'), id).toEqual([]);
    }
  });
});
