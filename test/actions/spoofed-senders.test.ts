// Senders who lie about who they are, on the real path, as one test body run on both providers:
// the Gmail API (mail delivered raw into the Gmail emulator, through googleapis) and IMAP/SMTP (a
// real Dovecot and Postfix: the raw bytes through Postfix's MX port, as another MTA hands them over,
// into the user's INBOX), with the real dev server, Postgres, the Anthropic emulator, our HTTP
// server's approvals pages and the Discord emulator. The user has a sender rule that auto-replies to
// alice, allowed and earned. A display name, an encoded word, a comment, two From headers, a group or
// a bidi override must not make mallory's mail alice's; a Reply-To that sends the reply elsewhere is
// judged for every recipient and named on every approval surface; and what goes out goes exactly
// where the journal and the page said, read back from the provider: the To header of what the user's
// mailbox holds as sent (Gmail's SENT, IMAP's \Sent copy) and of our drafts, and what reached the
// mailboxes of alice and mallory (the emulator's delivered copies; their INBOX on Dovecot, through
// Postfix).
// The IMAP side delivers through Postfix's MX port, not LMTP or APPEND: that is how such mail really
// arrives, and the test Postfix keeps mail from outside as it came (mail-servers/postfix.ts; its
// default would have re-written `<mallory@evil.example>)` as `<mallory@evil.example>,`). Each message
// is checked to reach the INBOX byte for byte below the trace headers.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JournaledAction } from '../../src/actions/contracts.js';
import { decideAction, type DecideDeps } from '../../src/thread/decide.js';
import { listActions, loadAction, updateSafetySettings } from '../../src/actions/journal.js';
import { startUnsubscribe, unsubscribeStatus } from '../../src/cleanup/unsubscribe.js';
import { startDiscordEmulator, type RunningDiscordEmulator } from '../../emulators/discord/index.js';
import { escapeHtml } from '../../src/http/approvals-page.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { rawHeader } from '../../src/imap/raw-headers.js';
import type { MailAccount } from '../../mail-servers/index.js';
import { startAppServer, type AppServer } from '../helpers/app-server.js';
import { deliverAndIngest as deliverToGmail, type HarnessOptions, type InboxHarness } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';
import { imapClient, receivedInInbox } from '../imap/mail-test-clients.js';
import { MailFromOutside, startImapWorld } from '../imap/imap-world.js';

const ALICE = 'alice.martin@example.com';
const MALLORY = 'mallory@evil.example';
const OPERATOR_TOKEN = 'operator-token-for-spoofed-senders';
const b64Word = (text: string) => `=?UTF-8?B?${Buffer.from(text).toString('base64')}?=`;
const run = randomUUID().slice(0, 8);

/** What differs between the providers, behind one shape: how mail arrives and where we read what went out. */
interface SpoofWorld {
  app: AppServer;
  /** A raw message from outside (bytes as the sender wrote them) into the user's INBOX, handed to its thread as the sync would. */
  deliverAndIngest(raw: Buffer, envelopeFrom: string): Promise<{ threadId: string; mtaChanges: string[] }>;
  /** The To header (lower-cased) of each message of the thread the user's mailbox holds as sent, and of our drafts. */
  addressed(threadId: string): Promise<{ sent: string[]; drafts: string[] }>;
  /** Messages with this subject that reached alice's or mallory's mailbox. */
  receivedBy(email: string, subject: string): Promise<number>;
  /** Until everything handed to the mail system has reached its mailbox: before counting what did not arrive. */
  allDelivered(): Promise<void>;
  close(): Promise<void>;
}

let discord: RunningDiscordEmulator;
let webhook: { id: string; url: string };

beforeAll(async () => {
  discord = await startDiscordEmulator();
  webhook = await discord.control.createWebhook({ name: 'Durable Inbox' });
});

afterAll(async () => {
  await discord?.close();
});

const appOptions = (): HarnessOptions => ({
  env: { DISCORD_WEBHOOK_URL: webhook.url, APPROVALS_OPERATOR_TOKEN: OPERATOR_TOKEN },
  settings: { actions: { sendDelayMs: 500, approvalExpiryMs: 600_000, pauseLabel: 'Assistant Paused', awaitingApprovalLabel: 'Awaiting Approval' } },
});

async function gmailWorld(): Promise<SpoofWorld> {
  const app = await startAppServer(appOptions(), async (h) => {
    // alice and mallory have mailboxes in the emulator: a send reaches them as a delivered copy.
    await h.gmail.control.createAccount({ email: ALICE });
    await h.gmail.control.createAccount({ email: MALLORY });
  });
  const { h } = app;
  return {
    app,
    async deliverAndIngest(raw, envelopeFrom) {
      // The emulator files the bytes it is given: nothing on the way changes them.
      return { threadId: (await deliverToGmail(h, { from: envelopeFrom, raw: raw.toString('base64url') })).threadId, mtaChanges: [] };
    },
    async addressed(threadId) {
      const state = await h.gmail.control.getState(h.email, { headers: ['To'] });
      const inThread = state.messages.filter((m) => m.threadId === threadId);
      const to = (m: (typeof inThread)[number]) => (m.headers?.['To'] ?? '').toLowerCase();
      return { sent: inThread.filter((m) => m.labelIds.includes('SENT')).map(to), drafts: inThread.filter((m) => m.labelIds.includes('DRAFT')).map(to) };
    },
    async receivedBy(email, subject) {
      return (await h.gmail.control.getState(email)).messages.filter((m) => m.subject.includes(subject)).length;
    },
    // The emulator delivers its copies while it answers the send.
    allDelivered: async () => {},
    close: () => app.close(),
  };
}

async function imapWorld(): Promise<SpoofWorld> {
  // alice and mallory have real mailboxes on the same Dovecot; Postfix takes mail for their domains.
  const alice: MailAccount = { address: ALICE, password: 'alice-password' };
  const mallory: MailAccount = { address: MALLORY, password: 'mallory-password' };
  const world = await startImapWorld(
    { user: { address: `spoofed-${run}@inbox.test`, password: 'user-app-password' }, correspondent: alice, others: [mallory] },
    // As on the Gmail side, the test hands each new message to its thread as the sync would: no IDLE
    // watch, so the sync does not also hand it over (the sync over IMAP runs in core-scenarios and idle-sync).
    (imap) => startAppServer({ ...appOptions(), imap, env: { ...appOptions().env, IMAP_IDLE: 'false' } }),
  );
  const { servers, product: app } = world;
  const { h } = app;
  const outside = await MailFromOutside.open(world).catch(async (err: unknown) => {
    await world.close();
    throw err;
  });
  /** The Message-ID of each thread's first message: our replies and drafts name it in References. */
  const roots = new Map<string, string>();
  return {
    app,
    async deliverAndIngest(raw, envelopeFrom) {
      const received = await outside.deliver(raw, envelopeFrom);
      roots.set(received.threadId, rawHeader(raw, 'message-id')!.trim());
      await h.ingest(received.threadId, { type: 'message_added', messageId: received.messageId, labelIds: ['INBOX'] });
      return received;
    },
    async addressed(threadId) {
      // Read with a plain IMAP client, not the product's: \Sent and \Drafts as any mail client sees them.
      const root = roots.get(threadId)!.replace(/^<|>$/g, '');
      const client = await imapClient(servers, servers.user);
      try {
        const folders = await client.list();
        const to = async (use: string) => {
          const path = folders.find((f) => f.specialUse === use)!.path;
          await client.mailboxOpen(path);
          const uids = (await client.search({ or: [{ header: { references: root } }, { header: { 'in-reply-to': root } }], deleted: false }, { uid: true })) || [];
          const out: string[] = [];
          if (uids.length === 0) return out;
          // A message expunged between the SEARCH and the FETCH (a copy in flight taken back) comes without headers: gone.
          for await (const m of client.fetch(uids.join(','), { headers: ['to'] }, { uid: true })) if (m.headers) out.push((rawHeader(m.headers, 'to') ?? '').toLowerCase());
          return out;
        };
        return { sent: await to('\\Sent'), drafts: await to('\\Drafts') };
      } finally {
        await client.logout();
      }
    },
    receivedBy: (email, subject) => receivedInInbox(servers, email === ALICE ? alice : mallory, { subject, from: servers.user.address }),
    async allDelivered() {
      await waitUntil('Postfix to deliver what it holds', async () => (await servers.queuedMessages()) === 0);
    },
    async close() {
      await outside.close();
      await world.close();
    },
  };
}

describe.each([
  ['Gmail API', gmailWorld],
  ['IMAP and SMTP', imapWorld],
] as const)('spoofed senders on %s', (_name, start) => {
  let w: SpoofWorld;
  let h: InboxHarness;
  let deps: DecideDeps;
  let aliceRule: string;
  const db = () => prismaExecutor(h.prisma);

  beforeAll(async () => {
    w = await start();
    h = w.app.h;
    deps = { client: h.client, db: db(), taskQueue: h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE };

    // The demo's rule: alice's mail is answered by an auto-reply, allowed for her and earned (no drafts needed).
    const rule = await h.prisma.rule.create({
      data: { scope: 'sender', scopeRef: ALICE, kind: 'deterministic', action: 'needs_response', actions: [{ kind: 'auto_reply' }] },
    });
    aliceRule = rule.id;
    // mallory's domain gets a draft, so what a reply to him would look like is visible too.
    await h.prisma.rule.create({ data: { scope: 'domain', scopeRef: 'evil.example', kind: 'deterministic', action: 'needs_response' } });
    await updateSafetySettings(db(), h.accountId, { allowances: [{ kind: 'auto_reply', scope: 'sender', ref: ALICE }], earnedAfter: 0 });
  }, 120_000);

  afterAll(async () => {
    await h?.prisma.rule.deleteMany({ where: { scopeRef: { in: [ALICE, 'evil.example'] } } });
    await w?.close();
  });

  /** A raw RFC 5322 message to the user with these headers (repeatable, in order) and the usual others. */
  function raw(headers: [string, string][], body = 'Could you send me the figures for Q3?'): Buffer {
    const defaults: [string, string][] = [
      ['To', h.email],
      ['Subject', 'The Q3 figures'],
      ['Message-ID', `<${Math.random().toString(36).slice(2)}@mail.test>`],
      ['MIME-Version', '1.0'],
      ['Content-Type', 'text/plain; charset=UTF-8'],
    ];
    const given = new Set(headers.map(([name]) => name.toLowerCase()));
    const lines = [...headers, ...defaults.filter(([name]) => !given.has(name.toLowerCase()))];
    return Buffer.from(`${lines.map(([n, v]) => `${n}: ${v}`).join('\r\n')}\r\n\r\n${body}\r\n`, 'utf8');
  }

  /** Delivers the message from outside (the envelope's sender `from`) and hands it to its thread; it must arrive as written. */
  async function deliverAndIngest(from: string, message: Buffer): Promise<{ threadId: string }> {
    const delivered = await w.deliverAndIngest(message, from);
    expect(delivered.mtaChanges, 'the hostile headers reach the mailbox as they were written').toEqual([]);
    return delivered;
  }

  const journal = (threadId: string) => listActions(db(), { accountId: h.accountId, threadId, ascending: true });
  const settled = (threadId: string) => h.waitFor(threadId, (s) => s.state !== 'pending' && s.pendingEvents === 0, 30_000);
  const addressed = (threadId: string) => w.addressed(threadId);
  const receivedBy = (email: string, subject: string) => w.receivedBy(email, subject);

  async function actionUntil(threadId: string, kind: string, done: (a: JournaledAction) => boolean): Promise<JournaledAction> {
    return waitUntil(`${kind} of ${threadId}`, async () => (await journal(threadId)).find((a) => a.kind === kind && done(a)), { timeoutMs: 30_000 });
  }

  /** The operator's approvals list (HTML), as the operator's browser gets it. */
  async function operatorList(): Promise<string> {
    const res = await fetch(`${w.app.http.url}/approvals?token=${OPERATOR_TOKEN}`);
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
      const { threadId } = await deliverAndIngest(MALLORY, raw(headers));
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
    // address syntax reaches us as structure, which reads as no single sender. Over IMAP the header
    // comes raw and is read as RFC 2047 says (structure first, then the name decoded): the encoded
    // word is a display name, the sender mallory. Never alice on either.
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
      const { threadId } = await deliverAndIngest(MALLORY, raw(headers));
      const status = await settled(threadId);
      expect(status.decisions.map((d) => d.detail).join('\n')).not.toContain(aliceRule);
      const actions = await journal(threadId);
      expect(actions.filter((a) => a.kind === 'auto_reply' || a.kind === 'forward')).toEqual([]);
      for (const a of actions) expect(a.recipients).not.toContain(ALICE);
      const to = await addressed(threadId);
      expect(to.sent).toEqual([]);
      for (const draftTo of to.drafts) expect(draftTo).not.toContain(ALICE);
      await w.allDelivered();
      expect(await receivedBy(ALICE, subject)).toBe(before);
    });

    it('the real alice, in capitals: her rule fires and the auto-reply goes to her, and only her', async () => {
      const { threadId } = await deliverAndIngest(ALICE, raw([['From', `Alice <${ALICE.toUpperCase()}>`], ['Subject', 'Uppercase check']]));
      const done = await actionUntil(threadId, 'auto_reply', (a) => a.state === 'done');
      expect(done).toMatchObject({ sender: ALICE, recipients: [ALICE], reason: { source: 'rule', ruleId: aliceRule } });
      expect((await addressed(threadId)).sent).toEqual([ALICE]);
      await waitUntil('alice to receive it', async () => ((await receivedBy(ALICE, 'Uppercase check')) === 1 ? true : undefined));
      await w.allDelivered();
      expect(await receivedBy(ALICE, 'Uppercase check')).toBe(1);
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
      const { threadId } = await deliverAndIngest(ALICE, raw([['From', `Alice <${ALICE}>`], ['Reply-To', replyTo], ['Subject', subject]]));
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
      // The approval draft in the user's mailbox is addressed to them too.
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
      // And no more than that, once the mail system holds nothing.
      await w.allDelivered();
      expect({ alice: await receivedBy(ALICE, subject), mallory: await receivedBy(MALLORY, subject) }).toEqual(expected);
    });

    it('refuses to send to anyone but the judged recipients: a journal that no longer matches the mail fails the send', async () => {
      const subject = 'Tampered recipients';
      const { threadId } = await deliverAndIngest(ALICE, raw([['From', `Alice <${ALICE}>`], ['Reply-To', MALLORY], ['Subject', subject]]));
      const waiting = await actionUntil(threadId, 'auto_reply', (a) => a.state === 'awaiting_approval' && !!a.result?.draftId);
      // The journal row says alice (as a bug or a hand edit might); the mail's reply goes to mallory.
      await h.prisma.$executeRawUnsafe(`UPDATE actions SET recipients = ARRAY['${ALICE}'] WHERE id = $1`, waiting.id);
      await decideAction(deps, waiting.id, 'approve', 'cli');
      const failed = await actionUntil(threadId, 'auto_reply', (a) => a.state === 'failed');
      expect(failed.note).toBe(`not sent: it would go to ${MALLORY}, but the policy judged ${ALICE}`);
      expect((await addressed(threadId)).sent).toEqual([]);
      await w.allDelivered();
      expect(await receivedBy(MALLORY, subject)).toBe(0);
      expect(await receivedBy(ALICE, subject)).toBe(0);
    });
  });

  describe('an unsubscribe from alice', () => {
    it("uses alice's own List-Unsubscribe, not the one of mallory's newer mail dressed as her", async () => {
      // A from: search matches display names (Gmail's, and IMAP SEARCH FROM): only what the reader
      // reads as alice's may say how to leave alice's list.
      const leave = `Leave the list ${run}`;
      const unsubscribe = (to: string) => `<mailto:${to}?subject=${encodeURIComponent(leave)}>`;
      await deliverAndIngest(ALICE, raw([['From', `Alice <${ALICE}>`], ['Subject', 'The weekly list'], ['List-Unsubscribe', unsubscribe(ALICE)]]));
      await deliverAndIngest(MALLORY, raw([['From', `"${ALICE}" <${MALLORY}>`], ['Subject', 'The weekly list'], ['List-Unsubscribe', unsubscribe(MALLORY)]]));
      const handle = await startUnsubscribe(h.client, {
        accountId: h.accountId,
        sender: ALICE,
        reason: { source: 'user' },
        taskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
        gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE,
        settings: { firstRetryMs: 200, maxIntervalMs: 1_000 },
      });
      // Ended, or waiting for approval (a mailto: outside alice's domain would): either is an answer.
      const status = await waitUntil('the unsubscribe decided', async () => {
        const now = await unsubscribeStatus(handle);
        return ['done', 'failed', 'nothing_to_do', 'awaiting_approval'].includes(now.state) && now;
      });
      expect(status.state).toBe('done');
      expect((await loadAction(db(), status.actionId!))!.recipients).toEqual([ALICE]);
      await waitUntil('alice to receive the unsubscribe', async () => (await receivedBy(ALICE, leave)) === 1);
      await w.allDelivered();
      expect(await receivedBy(MALLORY, leave)).toBe(0);
    });
  });
});
