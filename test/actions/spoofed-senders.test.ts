// Senders who lie about who they are, on the real path: mail delivered raw into the Gmail emulator,
// the real dev server, Postgres, googleapis and the Anthropic emulator, our HTTP server's approvals
// pages and the Discord emulator. The user has a sender rule that auto-replies to alice, allowed and
// earned. A display name, an encoded word, a comment, two From headers, a group or a bidi override
// must not make mallory's mail alice's; a Reply-To that sends the reply elsewhere is judged for
// every recipient and named on every approval surface; and what goes out goes exactly where the
// journal and the page said: read back from the emulator (the SENT message's To header, and the
// mailboxes of alice and mallory, which the emulator delivers a copy to).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JournaledAction } from '../../src/actions/contracts.js';
import { decideAction, type DecideDeps } from '../../src/thread/decide.js';
import { listActions, updateSafetySettings } from '../../src/actions/journal.js';
import { startDiscordEmulator, type RunningDiscordEmulator } from '../../emulators/discord/index.js';
import { escapeHtml } from '../../src/http/approvals-page.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { startAppServer, type AppServer } from '../helpers/app-server.js';
import { deliverAndIngest, type InboxHarness } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';

const ALICE = 'alice.martin@example.com';
const MALLORY = 'mallory@evil.example';
const OPERATOR_TOKEN = 'operator-token-for-spoofed-senders';
const b64Word = (text: string) => `=?UTF-8?B?${Buffer.from(text).toString('base64')}?=`;

let h: InboxHarness;
let discord: RunningDiscordEmulator;
let webhook: { id: string; url: string };
let app: AppServer;
let deps: DecideDeps;
let aliceRule: string;
const db = () => prismaExecutor(h.prisma);

beforeAll(async () => {
  discord = await startDiscordEmulator();
  webhook = await discord.control.createWebhook({ name: 'Durable Inbox' });
  app = await startAppServer(
    {
      env: { DISCORD_WEBHOOK_URL: webhook.url, APPROVALS_OPERATOR_TOKEN: OPERATOR_TOKEN },
      settings: { actions: { sendDelayMs: 500, approvalExpiryMs: 600_000, pauseLabel: 'Assistant Paused', awaitingApprovalLabel: 'Awaiting Approval' } },
    },
    async (h) => {
      // alice and mallory have mailboxes in the emulator: a send reaches them as a delivered copy.
      await h.gmail.control.createAccount({ email: ALICE });
      await h.gmail.control.createAccount({ email: MALLORY });
    },
  );
  h = app.h;
  deps = { client: h.client, db: db(), taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE };

  // The demo's rule: alice's mail is answered by an auto-reply, allowed for her and earned (no drafts needed).
  const rule = await h.prisma.rule.create({
    data: { scope: 'sender', scopeRef: ALICE, kind: 'deterministic', action: 'needs_response', actions: [{ kind: 'auto_reply' }] },
  });
  aliceRule = rule.id;
  // mallory's domain gets a draft, so what a reply to him would look like is visible too.
  await h.prisma.rule.create({ data: { scope: 'domain', scopeRef: 'evil.example', kind: 'deterministic', action: 'needs_response' } });
  await updateSafetySettings(db(), h.accountId, { allowances: [{ kind: 'auto_reply', scope: 'sender', ref: ALICE }], earnedAfter: 0 });
});

afterAll(async () => {
  await h?.prisma.rule.deleteMany({ where: { scopeRef: { in: [ALICE, 'evil.example'] } } });
  await app?.close();
  await discord?.close();
});

/** A raw RFC 5322 message to the harness account with these headers (repeatable, in order) and the usual others. */
function raw(headers: [string, string][], body = 'Could you send me the figures for Q3?'): string {
  const defaults: [string, string][] = [
    ['To', h.email],
    ['Subject', 'The Q3 figures'],
    ['Message-ID', `<${Math.random().toString(36).slice(2)}@mail.test>`],
    ['MIME-Version', '1.0'],
    ['Content-Type', 'text/plain; charset=UTF-8'],
  ];
  const given = new Set(headers.map(([name]) => name.toLowerCase()));
  const lines = [...headers, ...defaults.filter(([name]) => !given.has(name.toLowerCase()))];
  return Buffer.from(`${lines.map(([n, v]) => `${n}: ${v}`).join('\r\n')}\r\n\r\n${body}\r\n`, 'utf8').toString('base64url');
}

const journal = (threadId: string) => listActions(db(), { accountId: h.accountId, threadId, ascending: true });
const settled = (threadId: string) => h.waitFor(threadId, (s) => s.state !== 'pending' && s.pendingEvents === 0, 30_000);

async function actionUntil(threadId: string, kind: string, done: (a: JournaledAction) => boolean): Promise<JournaledAction> {
  return waitUntil(`${kind} of ${threadId}`, async () => (await journal(threadId)).find((a) => a.kind === kind && done(a)), { timeoutMs: 30_000 });
}

/** The To header of every message in the thread, read from the emulator: SENT ones and our drafts. */
async function addressed(threadId: string): Promise<{ sent: string[]; drafts: string[] }> {
  const state = await h.gmail.control.getState(h.email, { headers: ['To'] });
  const inThread = state.messages.filter((m) => m.threadId === threadId);
  const to = (m: (typeof inThread)[number]) => (m.headers?.['To'] ?? '').toLowerCase();
  return { sent: inThread.filter((m) => m.labelIds.includes('SENT')).map(to), drafts: inThread.filter((m) => m.labelIds.includes('DRAFT')).map(to) };
}

/** Messages with this subject delivered into a mailbox of the emulator (alice's, mallory's). */
async function receivedBy(email: string, subject: string): Promise<number> {
  return (await h.gmail.control.getState(email)).messages.filter((m) => m.subject.includes(subject)).length;
}

/** The operator's approvals list (HTML), as the operator's browser gets it. */
async function operatorList(): Promise<string> {
  const res = await fetch(`${app.http.url}/approvals?token=${OPERATOR_TOKEN}`);
  expect(res.status).toBe(200);
  return res.text();
}

/** The row of an action in the operator's list. */
async function listRow(actionId: string): Promise<string> {
  const html = await operatorList();
  const at = html.indexOf(`data-action-id="${actionId}"`);
  expect(at, 'the action is on the list').toBeGreaterThan(0);
  return html.slice(at, html.indexOf('</tr>', at));
}

/** The signed per-action page, from the link Discord's message carries; and that message. */
async function discordAndPage(actionId: string): Promise<{ message: string; page: string }> {
  const posted = await waitUntil('the Discord message', async () =>
    (await discord.control.messages(webhook.id)).find((m) => m.message.content.includes(actionId)), { timeoutMs: 30_000 });
  const link = /<(http:\/\/127\.0\.0\.1:\d+\/approvals\/a\/[^>]+)>/.exec(posted.message.content)![1]!;
  const res = await fetch(link);
  expect(res.status).toBe(200);
  return { message: posted.message.content, page: await res.text() };
}

describe('a display name, encoded word, comment or second From is not the sender', () => {
  it.each<[string, [string, string][]]>([
    ['a quoted display name that is alice\'s address', [['From', `"<${ALICE}>" <${MALLORY}>`]]],
    ['an unquoted display name that is an address', [['From', `${ALICE} <${MALLORY}>`]]],
    ['a bidi override in the name', [['From', `"\u202E${[...ALICE].reverse().join('')}" <${MALLORY}>`]]],
  ])('%s: alice\'s rule does not fire, the draft goes to mallory, as the journal says', async (_, headers) => {
    const { threadId } = await deliverAndIngest(h, { from: MALLORY, raw: raw(headers) });
    const status = await h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0, 30_000);
    const actions = await journal(threadId);
    expect(actions.filter((a) => a.kind === 'auto_reply')).toEqual([]);
    expect(status.decisions.map((d) => d.detail).join('\n')).not.toContain(aliceRule);
    const draft = actions.find((a) => a.kind === 'draft')!;
    expect(draft).toMatchObject({ sender: MALLORY, recipients: [MALLORY] });
    const to = await addressed(threadId);
    expect(to.sent).toEqual([]);
    expect(to.drafts).toEqual([MALLORY]);
  });

  // Gmail decodes encoded-words in the headers it hands over: an encoded name that decodes into
  // address syntax reaches us as structure, which reads as no single sender (never as alice).
  it.each<[string, [string, string][]]>([
    ['the display name as an encoded word', [['From', `${b64Word(`<${ALICE}>`)} <${MALLORY}>`]]],
    ['an encoded display name with a comma and angle brackets', [['From', `${b64Word(`Martin, Alice <${ALICE}>`)} <${MALLORY}>`]]],
    ['an encoded display name that opens a comment', [['From', `${b64Word(`${ALICE} (`)} <${MALLORY}>)`]]],
    ['alice in a comment', [['From', `${MALLORY} (${ALICE})`]]],
    ['two From headers', [['From', `Alice <${ALICE}>`], ['From', `Mallory <${MALLORY}>`]]],
    ['two addresses in From', [['From', `Alice <${ALICE}>, Mallory <${MALLORY}>`]]],
    ['a group in From', [['From', `Friends: ${ALICE};`]]],
    ['two angle addresses', [['From', `Mallory <${MALLORY}> <${ALICE}>`]]],
    ['a quoted local part holding alice\'s address', [['From', `"${ALICE}"@evil.example`]]],
    ['a look-alike internationalised domain', [['From', 'Alice <alice.martin@exämple.com>']]],
  ])('%s: no rule of alice\'s, nothing sent, no reply to alice', async (_, headers) => {
    const subject = `The Q3 figures`;
    const before = await receivedBy(ALICE, subject);
    const { threadId } = await deliverAndIngest(h, { from: MALLORY, raw: raw(headers) });
    const status = await settled(threadId);
    expect(status.decisions.map((d) => d.detail).join('\n')).not.toContain(aliceRule);
    const actions = await journal(threadId);
    expect(actions.filter((a) => a.kind === 'auto_reply' || a.kind === 'forward')).toEqual([]);
    for (const a of actions) expect(a.recipients).not.toContain(ALICE);
    const to = await addressed(threadId);
    expect(to.sent).toEqual([]);
    for (const draftTo of to.drafts) expect(draftTo).not.toContain(ALICE);
    expect(await receivedBy(ALICE, subject)).toBe(before);
  });

  it('the real alice, in capitals: her rule fires and the auto-reply goes to her, and only her', async () => {
    const { threadId } = await deliverAndIngest(h, { from: ALICE, raw: raw([['From', `Alice <${ALICE.toUpperCase()}>`], ['Subject', 'Uppercase check']]) });
    const done = await actionUntil(threadId, 'auto_reply', (a) => a.state === 'done');
    expect(done).toMatchObject({ sender: ALICE, recipients: [ALICE], reason: { source: 'rule', ruleId: aliceRule } });
    expect((await addressed(threadId)).sent).toEqual([ALICE]);
    await waitUntil('alice to receive it', async () => ((await receivedBy(ALICE, 'Uppercase check')) === 1 ? true : undefined));
    expect(await receivedBy(MALLORY, 'Uppercase check')).toBe(0);
  });
});

describe('a reply that goes elsewhere than the sender', () => {
  it.each<[string, string, string[]]>([
    ['Reply-To a third party', MALLORY, [MALLORY]],
    ['Reply-To alice and a third party', `Alice <${ALICE}>, Mallory <${MALLORY}>`, [ALICE, MALLORY]],
    ['Reply-To a group', `team: ${MALLORY}, ${ALICE};`, [MALLORY, ALICE]],
  ])('%s: judged for every recipient, named on the list, the page, Discord; sent to exactly them once approved', async (label, replyTo, recipients) => {
    const subject = `Reply-To check ${label}`;
    const { threadId } = await deliverAndIngest(h, { from: ALICE, raw: raw([['From', `Alice <${ALICE}>`], ['Reply-To', replyTo], ['Subject', subject]]) });
    const waiting = await actionUntil(threadId, 'auto_reply', (a) => a.state === 'awaiting_approval' && !!a.result?.draftId);
    expect(waiting.recipients).toEqual(recipients);
    expect(waiting.because).toContain(`auto_reply to ${MALLORY} needs your approval unless you allow it (global, account, domain or sender)`);
    expect(waiting.because.join('\n')).toMatch(/the reply goes to .*mallory@evil\.example.*, not \(only\) to the sender alice\.martin@example\.com/);

    // Every surface names every recipient.
    const row = await listRow(waiting.id);
    expect(row).toContain(`<td class="to">${recipients.join(', ')}</td>`);
    // And what else the operator decides by: the subject, the reply's first lines, why it waits, until when.
    expect(row).toContain(`<td class="subject">${escapeHtml(subject)}<br><small>from ${ALICE}</small></td>`);
    expect(row).toContain(escapeHtml(waiting.result!.body!.trim().split('\n')[0]!));
    expect(row).toContain(`<li>${escapeHtml(`auto_reply to ${MALLORY} needs your approval unless you allow it (global, account, domain or sender)`)}</li>`);
    expect(row).toContain(`<td class="expires">${waiting.expiresAt!.slice(0, 16).replace('T', ' ')}</td>`);
    const { message, page } = await discordAndPage(waiting.id);
    expect(message).toContain(`To \`${recipients.join(', ')}\``);
    expect(page).toContain(`<span id="recipients">${recipients.join(', ')}</span>`);
    // The approval draft in Gmail is addressed to them too.
    expect((await addressed(threadId)).drafts).toEqual([recipients.join(', ')]);

    const before = { alice: await receivedBy(ALICE, subject), mallory: await receivedBy(MALLORY, subject) };
    await decideAction(deps, waiting.id, 'approve', 'page');
    const done = await actionUntil(threadId, 'auto_reply', (a) => a.state === 'done');
    expect(done.recipients).toEqual(recipients);
    expect((await addressed(threadId)).sent).toEqual([recipients.join(', ')]);
    const expected = { alice: before.alice + (recipients.includes(ALICE) ? 1 : 0), mallory: before.mallory + 1 };
    await waitUntil('the copies to be delivered', async () => {
      const now = { alice: await receivedBy(ALICE, subject), mallory: await receivedBy(MALLORY, subject) };
      return now.alice === expected.alice && now.mallory === expected.mallory ? now : undefined;
    });
  });

  it('refuses to send to anyone but the judged recipients: a journal that no longer matches the mail fails the send', async () => {
    const subject = 'Tampered recipients';
    const { threadId } = await deliverAndIngest(h, { from: ALICE, raw: raw([['From', `Alice <${ALICE}>`], ['Reply-To', MALLORY], ['Subject', subject]]) });
    const waiting = await actionUntil(threadId, 'auto_reply', (a) => a.state === 'awaiting_approval' && !!a.result?.draftId);
    // The journal row says alice (as a bug or a hand edit might); the mail's reply goes to mallory.
    await h.prisma.$executeRawUnsafe(`UPDATE actions SET recipients = ARRAY['${ALICE}'] WHERE id = $1`, waiting.id);
    await decideAction(deps, waiting.id, 'approve', 'cli');
    const failed = await actionUntil(threadId, 'auto_reply', (a) => a.state === 'failed');
    expect(failed.note).toBe(`not sent: it would go to ${MALLORY}, but the policy judged ${ALICE}`);
    expect((await addressed(threadId)).sent).toEqual([]);
    expect(await receivedBy(MALLORY, subject)).toBe(0);
    expect(await receivedBy(ALICE, subject)).toBe(0);
  });
});
