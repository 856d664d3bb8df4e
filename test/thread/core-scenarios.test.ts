// The core scenarios as one test body run on both providers: the Gmail API (our emulator, through
// googleapis) and IMAP/SMTP (a real Dovecot and Postfix). Mail comes in, the sync (polled, as the
// schedule polls) hands it to the thread, which classifies it and drafts a reply in the thread; the
// user marks a thread Done with a label (an IMAP keyword), or sends our draft, and the thread sees it.
// Everything runs on the real Temporal dev server and PostgreSQL; the workers are the product's.
// The first scenario runs a third time on Gmail's IMAP and SMTP as the stand-in plays them.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mailbox } from '../../src/mail/mailbox.js';
import { notifySync } from '../../src/sync/notify.js';
import { listActions } from '../../src/actions/journal.js';
import type { JournaledAction } from '../../src/actions/contracts.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { decideAction } from '../../src/thread/decide.js';
import { setTimer } from '../helpers/thread-timers.js';
import { syncWorkflowId } from '../../src/sync/contracts.js';
import { syncStatusQuery } from '../../src/sync/signals.js';
import { deliver, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { waitUntil } from '../helpers/wait-until.js';
import { deliverFromOutside } from '../../mail-servers/deliver.js';
import { receivedInInbox } from '../imap/mail-test-clients.js';
import { startImapWorld } from '../imap/imap-world.js';
import { imapMailboxSettings, type ImapServers } from '../../src/accounts/imap-accounts.js';
import { ImapMailbox } from '../../src/imap/imap-mailbox.js';
import { withoutHeader } from '../../src/imap/raw-headers.js';
import type { MailServerAddress } from '../../src/imap/contracts.js';
import { startMailServers, type MailServers } from '../../mail-servers/index.js';
import { startGmailStandIn, type GmailStandIn } from '../../emulators/gmail-imap/index.js';
import { startBulk, undoBulk } from '../../src/cleanup/bulk.js';

/** What differs between the providers, behind one shape: how mail arrives and how the user acts. */
interface ProviderWorld {
  h: InboxHarness;
  /** The user's own client on the mailbox (not the workers'): what they see and what they do. */
  user: Mailbox;
  /** The correspondent's domain (what a rule names). */
  correspondentDomain: string;
  /** A correspondent writes to the user; resolves with the thread's id once the mailbox has it. */
  incoming(mail: { subject: string; text: string; from?: string }): Promise<string>;
  /** The user sends our draft as it is, from their mail client. */
  sendDraft(threadId: string, draftId: string): Promise<void>;
  /** The user rewrites our draft's text in their mail client (the draft saved again, the same draft). */
  editDraft(threadId: string, draftId: string, text: string): Promise<void>;
  /** How many messages with this subject the correspondent received from the user. */
  receivedByCorrespondent(subject: string): Promise<number>;
  close(): Promise<void>;
}

const run = randomUUID().slice(0, 8);
/** A short undo-send window, so an approved auto-reply goes out within the test (the sync starts the threads with the workers' settings). */
const env = { SEND_DELAY: '1500ms' };

async function gmailWorld(): Promise<ProviderWorld> {
  const h = await startInboxHarness({ env });
  await h.startWorkers();
  const { gmail } = await h.accountGmail();
  return {
    h,
    user: gmail,
    // Rules are the whole installation's: a domain of this file's own, so other files' threads meet none of them.
    correspondentDomain: `partner-${run}.example`,
    async incoming(mail) {
      return (await deliver(h, { from: `Alice Example <alice@partner-${run}.example>`, ...mail })).threadId;
    },
    async sendDraft(_threadId, draftId) {
      await h.gmail.control.sendDraft(h.email, draftId);
    },
    async editDraft(_threadId, draftId, text) {
      await h.gmail.control.editDraft(h.email, draftId, { text });
    },
    async receivedByCorrespondent(subject) {
      // The emulator keeps one mailbox: what the user sent is in it, addressed to the correspondent.
      const state = await h.gmail.control.getState(h.email);
      return state.messages.filter((m) => m.labelIds.includes('SENT') && m.subject.includes(subject) && m.to.includes(`alice@partner-${run}.example`)).length;
    },
    close: () => h.close(),
  };
}

async function imapWorld(): Promise<ProviderWorld> {
  const world = await startImapWorld(
    { user: { address: `user-${run}@inbox.test`, password: 'user-app-password' }, correspondent: { address: `alice@correspondent-${run}.test`, password: 'alice-password' } },
    async (imap) => {
      const h = await startInboxHarness({ env, imap });
      await h.startWorkers();
      return h;
    },
  );
  return imapSide(world.servers, world.user, world.product, `correspondent-${run}.test`, () => world.close());
}

/**
 * Gmail over IMAP and SMTP with an app password: the stand-in (emulators/gmail-imap: Gmail's
 * capability line, folders and X-GM items, smtp.gmail.com's filing of sent mail) in front of a real
 * Dovecot with Gmail's folders and Postfix; the account stored with the stand-in's ports.
 */
async function gmailImapWorld(): Promise<ProviderWorld> {
  const account = { address: `gmail-${run}@inbox.test`, password: 'gmail-app-password' };
  const domain = `correspondent-gm-${run}.test`;
  const servers = await startMailServers({ folders: 'gmail', user: account, correspondent: { address: `alice@${domain}`, password: 'alice-password' } });
  let gmail: GmailStandIn | undefined;
  let h: InboxHarness | undefined;
  let user: ImapMailbox | undefined;
  const close = async () => {
    await user?.close();
    await h?.close();
    await gmail?.close();
    await servers.stop();
  };
  try {
    gmail = await startGmailStandIn(servers.info, account);
    const at = (port: number): MailServerAddress => ({ host: gmail!.host, port, tls: 'implicit', ca: gmail!.caPem });
    const stored: ImapServers = { imap: { server: at(gmail.imapPort), user: account.address }, smtp: { server: at(gmail.smtpPort), user: account.address } };
    h = await startInboxHarness({ env, imap: { address: account.address, password: account.password, servers: stored } });
    await h.startWorkers();
    user = await ImapMailbox.open(imapMailboxSettings(account.address, stored, { password: account.password }));
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
  return imapSide(servers, user, h, domain, close);
}

/** An IMAP account's side of the world: mail from outside through the MX, the user's client on the mailbox. */
function imapSide(servers: MailServers, user: ImapMailbox, h: InboxHarness, correspondentDomain: string, close: () => Promise<void>): ProviderWorld {
  return {
    h,
    user,
    correspondentDomain,
    async incoming(mail) {
      const messageId = `<${randomUUID()}@${correspondentDomain}>`;
      await deliverFromOutside(servers, {
        from: mail.from ?? `Alice Example <${servers.correspondent.address}>`,
        to: servers.user.address,
        subject: mail.subject,
        text: mail.text,
        messageId,
      });
      const found = await waitUntil(`${mail.subject} in the INBOX`, async () => (await user.searchMessages({ subject: mail.subject })).messages[0]);
      return found.threadId;
    },
    async sendDraft(threadId, draftId) {
      // What a mail client does: submit the draft's message, file a copy in Sent, delete the draft.
      const draft = await user.getDraftRaw(draftId);
      if (!draft) throw new Error(`draft ${draftId} is gone`);
      await user.sendMessage(draft.raw, threadId);
      await user.deleteDraft(draftId);
    },
    async editDraft(threadId, draftId, text) {
      // What a mail client saves: the draft's headers (its Message-ID, In-Reply-To, References) over the new text, as plain UTF-8.
      const draft = await user.getDraftRaw(draftId);
      if (!draft) throw new Error(`draft ${draftId} is gone`);
      let raw: Uint8Array = Buffer.from(draft.raw, 'base64url');
      for (const name of ['content-type', 'content-transfer-encoding', 'mime-version']) raw = withoutHeader(raw, name);
      const text_ = Buffer.from(raw).toString('latin1');
      const head = text_.slice(0, text_.search(/\r\n\r\n/));
      const saved = Buffer.concat([
        Buffer.from(`${head}\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n`, 'latin1'),
        Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'utf8'),
      ]);
      await user.updateDraft(draftId, { threadId, raw: saved.toString('base64url') });
    },
    receivedByCorrespondent: (subject) => receivedInInbox(servers, servers.correspondent, { subject, from: servers.user.address }),
    close,
  };
}

const question = (subject: string) => ({ subject, text: 'Hi,\n\nCould you send me the quarterly numbers by Friday?\n\nThanks, Alice' });

/** The scenarios Gmail's IMAP (the stand-in) runs so far: the sync, IDLE and the thread workflows in Gmail mode, end to end (docs/imap.md "Gmail over IMAP: what is tested against what"). */
const GMAIL_IMAP_SCENARIOS = ['done', 'rework', 'sent by the user'] as const;
type Scenario = (typeof GMAIL_IMAP_SCENARIOS)[number];

describe.each([
  ['Gmail API', gmailWorld, 'all'],
  ['IMAP and SMTP', imapWorld, 'all'],
  ["Gmail's IMAP and SMTP (the stand-in)", gmailImapWorld, GMAIL_IMAP_SCENARIOS],
] as const)('core scenarios on %s', (_name, start, scenarios: 'all' | readonly Scenario[]) => {
  let w: ProviderWorld;
  // Defined only where the provider runs them: not listed as skipped where it does not.
  const beyondTheFirst = (name: string, opts: { timeout: number }, body: () => Promise<void>) => {
    if (scenarios === 'all') it(name, opts, body);
  };
  const scenario = (which: Scenario, name: string, opts: { timeout: number }, body: () => Promise<void>) => {
    if (scenarios === 'all' || scenarios.includes(which)) it(name, opts, body);
  };

  // Gmail's IMAP only (the stand-in): what the other providers test in their own files (test/cleanup).
  const onGmailImap = (name: string, opts: { timeout: number }, body: () => Promise<void>) => {
    if (start === gmailImapWorld) it(name, opts, body);
  };

  beforeAll(async () => {
    w = await start();
    // As connecting does: the sync's cursor is the mailbox's now, before any mail of the tests.
    await poll();
    await waitUntil('the sync cursor', async () => (await w.h.prisma.account.findUniqueOrThrow({ where: { id: w.h.accountId } })).historyId ?? false);
  }, 120_000);

  afterAll(async () => {
    await w?.close();
  });

  /** The poll schedule's nudge: the account's sync reads what changed since its cursor. */
  const poll = () => notifySync({ client: w.h.client, taskQueue: w.h.cfg.TEMPORAL_TASK_QUEUE }, w.h.accountId, { source: 'poll' });

  /** Polls until the thread's workflow reaches the state (the sync hands over what changed). */
  async function pollUntil(threadId: string, state: string) {
    let last: unknown;
    try {
      return await waitUntil(`thread ${threadId} ${state}`, async () => {
        await poll();
        const row = await w.h.prisma.thread.findUnique({ where: { accountId_gmailThreadId: { accountId: w.h.accountId, gmailThreadId: threadId } } });
        last = row?.state;
        return row?.state === state && row;
      }, { timeoutMs: 45_000 });
    } catch (err) {
      const status = await w.h.waitFor(threadId, () => true, 5_000).catch((e: unknown) => String(e));
      const sync = await w.h.client.workflow.getHandle(syncWorkflowId(w.h.accountId)).query(syncStatusQuery).catch((e: unknown) => String(e));
      throw new Error(`${(err as Error).message}; its row says ${String(last)}; its workflow: ${JSON.stringify(status)}; the sync: ${JSON.stringify(sync)}`, { cause: err });
    }
  }

  async function labelNames(threadId: string): Promise<string[]> {
    const names = new Map((await w.user.listLabels()).map((l) => [l.id, l.name]));
    return (await w.user.getThreadLabelIds(threadId)).map((id) => names.get(id) ?? id);
  }

  scenario('done', 'new mail → classified → a reply drafted in the thread, labelled Outbox → Done by label archives it', { timeout: 120_000 }, async () => {
    const subject = `Quarterly numbers ${run}`;
    const threadId = await w.incoming(question(subject));

    const drafted = await pollUntil(threadId, 'drafted');
    expect(drafted.category).toBe('needs_response');
    const drafts = await w.user.listDraftsForThread(threadId);
    expect(drafts.map((d) => d.draftId)).toEqual([drafted.draftId]);
    const draft = await w.user.getDraft(drafted.draftId!);
    expect(draft?.message.threadId).toBe(threadId);
    expect(draft?.body).toMatch(/Quarterly numbers/);
    expect(await labelNames(threadId)).toEqual(expect.arrayContaining(['INBOX', 'Outbox']));

    // The user marks it Done in their client (a Gmail label; an IMAP keyword set over another connection).
    const ids = await w.user.ensureLabels(['Done']);
    await w.user.modifyThread(threadId, { add: [ids.get('Done')!] });

    await pollUntil(threadId, 'archived');
    await waitUntil('the thread out of the inbox, Done and Outbox taken off', async () => {
      const labels = await labelNames(threadId);
      return !labels.includes('INBOX') && !labels.includes('Outbox') && labels;
    });
  });

  scenario('rework', 'Rework: the user types an instruction into our draft and adds Rework; the same draft is rewritten with it, Rework taken off', { timeout: 120_000 }, async () => {
    const subject = `Contract renewal ${run}`;
    const threadId = await w.incoming(question(subject));
    const drafted = await pollUntil(threadId, 'drafted');
    const draftId = drafted.draftId!;
    const before = await w.user.getDraft(draftId);
    await w.editDraft(threadId, draftId, `Mention the Friday deadline\n\n${before!.body}`);
    const ids = await w.user.ensureLabels(['Rework']);
    await w.user.modifyThread(threadId, { add: [ids.get('Rework')!] });

    let last: unknown;
    const reworked = await waitUntil('the draft reworked', async () => {
      await poll();
      const status = await w.h.waitFor(threadId, () => true);
      last = status;
      return status.reworkCount === 1 && status.state === 'drafted' && status.pendingEvents === 0 && status;
    }, { timeoutMs: 45_000 }).catch((err: Error) => {
      throw new Error(`${err.message}; the thread: ${JSON.stringify(last)}`, { cause: err });
    });
    // The same draft (on IMAP: the same Message-ID, a new APPEND), rewritten as asked; one draft in the thread.
    expect(reworked.draftId).toBe(draftId);
    expect((await w.user.getDraft(draftId))?.body).toContain('Revised as asked: Mention the Friday deadline');
    expect((await w.user.listDraftsForThread(threadId)).map((d) => d.draftId)).toEqual([draftId]);
    await waitUntil('Rework taken off, Outbox kept', async () => {
      const labels = await labelNames(threadId);
      return !labels.includes('Rework') && labels.includes('Outbox') && labels;
    });
  });

  scenario('sent by the user', 'the user sends our draft from their client: the thread sees the reply sent, and the correspondent has it', { timeout: 120_000 }, async () => {
    const subject = `Offsite dates ${run}`;
    const threadId = await w.incoming(question(subject));
    const drafted = await pollUntil(threadId, 'drafted');

    await w.sendDraft(threadId, drafted.draftId!);

    const sent = await pollUntil(threadId, 'sent');
    expect(sent.draftId).toBe(drafted.draftId);
    expect(await w.user.listDraftsForThread(threadId)).toEqual([]);
    expect(await waitUntil('the reply at the correspondent', async () => (await w.receivedByCorrespondent(subject)) || false)).toBe(1);
  });

  beyondTheFirst('an auto-reply the policy holds for approval is sent once, by us, when the user approves it', { timeout: 120_000 }, async () => {
    const db = prismaExecutor(w.h.prisma);
    const rule = await w.h.prisma.rule.create({
      data: { scope: 'domain', scopeRef: w.correspondentDomain, kind: 'deterministic', action: 'needs_response', actions: [{ kind: 'auto_reply' }] },
    });
    try {
      const subject = `Are you in on Monday ${run}`;
      const threadId = await w.incoming({ subject, text: 'Are you in the office on Monday?' });
      const autoReply = () =>
        waitUntil('the auto-reply awaiting approval', async () => {
          await poll();
          const found = (await listActions(db, { accountId: w.h.accountId, threadId })).find((a: JournaledAction) => a.kind === 'auto_reply');
          return found?.state === 'awaiting_approval' && found.result?.draftId ? found : false;
        }, { timeoutMs: 45_000 });
      const waiting = await autoReply();
      expect(await labelNames(threadId)).toContain('Awaiting Approval');
      expect(await w.receivedByCorrespondent(subject)).toBe(0);

      const decided = await decideAction({ client: w.h.client, db, taskQueue: w.h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: w.h.cfg.GMAIL_TASK_QUEUE }, waiting.id, 'approve', 'test');
      expect(decided).toMatchObject({ ok: true, action: { state: 'scheduled' } });
      let last: JournaledAction | undefined;
      const done = await waitUntil('the auto-reply sent', async () => {
        await poll();
        last = (await listActions(db, { accountId: w.h.accountId, threadId })).find((a: JournaledAction) => a.kind === 'auto_reply');
        return last?.state === 'done' && last;
      }, { timeoutMs: 45_000 }).catch((err: Error) => {
        throw new Error(`${err.message}; the action: ${JSON.stringify(last)}`);
      });
      expect(done.result?.sentMessageId).toBeTruthy();
      expect(await waitUntil('the reply at the correspondent', async () => (await w.receivedByCorrespondent(subject)) || false)).toBe(1);
      // The approval draft is gone, and nothing else went out.
      expect(await w.user.listDraftsForThread(threadId)).toEqual([]);
      // The thread closes as sent; the sync's next pass (our own sent copy among its changes) sends nothing more.
      await w.h.waitFor(threadId, (s) => s.state === 'sent');
      await poll();
      await w.h.waitFor(threadId, (s) => s.state === 'sent');
      expect(await w.receivedByCorrespondent(subject)).toBe(1);
    } finally {
      await w.h.prisma.rule.delete({ where: { id: rule.id } });
    }
  });

  beyondTheFirst('snooze: out of the inbox now, back at the time unread and labelled Snoozed', { timeout: 120_000 }, async () => {
    const subject = `Snooze me ${run}`;
    const threadId = await w.incoming(question(subject));
    await pollUntil(threadId, 'drafted');
    const at = Date.now() + 4000;
    await setTimer(w.h, threadId, { kind: 'snooze', at });
    await waitUntil('the thread out of the inbox', async () => !(await labelNames(threadId)).includes('INBOX'));
    const back = await w.h.waitFor(threadId, (s) => !s.wakes && s.decisions.some((d) => d.detail.startsWith('snooze fired')), 30_000);
    expect(back.state).toBe('drafted');
    expect(Date.now()).toBeGreaterThanOrEqual(at);
    expect(await labelNames(threadId)).toEqual(expect.arrayContaining(['INBOX', 'UNREAD', 'Snoozed']));
  });

  beyondTheFirst('a timer label set in the mail client (Snooze/Tomorrow) snoozes the thread until 08:00 tomorrow and comes off', { timeout: 120_000 }, async () => {
    const subject = `Snooze by label ${run}`;
    const threadId = await w.incoming(question(subject));
    await pollUntil(threadId, 'drafted');
    // The user's client: a Gmail label, an IMAP keyword ($DI_Snooze/Tomorrow), set over its own connection.
    const ids = await w.user.ensureLabels(['Snooze/Tomorrow']);
    const labelledAt = new Date();
    await w.user.modifyThread(threadId, { add: [ids.get('Snooze/Tomorrow')!] });
    const snoozed = await waitUntil('the snooze set', async () => {
      await poll();
      const status = await w.h.waitFor(threadId, () => true);
      return (status.wakes ?? []).some((wake) => wake.kind === 'snooze' && wake.by === 'label') && status;
    }, { timeoutMs: 45_000 });
    // Tomorrow at the default hour (08:00) in the account's zone (UTC here), read when the sync saw the label.
    const tomorrowOf = (day: Date) => Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + 1, 8);
    expect([tomorrowOf(labelledAt), tomorrowOf(new Date())]).toContain(snoozed.wakes!.find((wake) => wake.kind === 'snooze')!.at);
    await waitUntil('out of the inbox, the timer label taken off', async () => {
      const labels = await labelNames(threadId);
      return !labels.includes('INBOX') && !labels.includes('Snooze/Tomorrow') && labels;
    });
  });

  beyondTheFirst('send later: our draft goes out at the time, once, and reaches the correspondent', { timeout: 120_000 }, async () => {
    const subject = `Send it later ${run}`;
    const threadId = await w.incoming(question(subject));
    const drafted = await pollUntil(threadId, 'drafted');
    const at = Date.now() + 4000;
    await setTimer(w.h, threadId, { kind: 'send_later', at });
    const db = prismaExecutor(w.h.prisma);
    const done = await waitUntil('the scheduled send', async () => {
      const found = (await listActions(db, { accountId: w.h.accountId, threadId })).find((a: JournaledAction) => a.kind === 'send_later');
      return found?.state === 'done' && found;
    }, { timeoutMs: 30_000 });
    expect(Date.now()).toBeGreaterThanOrEqual(at);
    expect(done.result?.sentMessageId).toBeTruthy();
    expect(await w.user.listDraftsForThread(threadId)).toEqual([]);
    expect(drafted.draftId).toBeTruthy();
    expect(await waitUntil('the reply at the correspondent', async () => (await w.receivedByCorrespondent(subject)) || false)).toBe(1);
  });

  beyondTheFirst('a sender who puts an address in the display name is answered at the address the From header holds', { timeout: 120_000 }, async () => {
    const subject = `Wire the money ${run}`;
    // A stranger's mail dressed as the correspondent's: the display name is her address, the address is not.
    const from = `"alice@${w.correspondentDomain}" <mallory@evil.example>`;
    const threadId = await w.incoming({ ...question(subject), from });
    const drafted = await pollUntil(threadId, 'drafted');
    const draft = await w.user.getDraft(drafted.draftId!);
    expect(draft?.message.to.map((a) => a.address)).toEqual(['mallory@evil.example']);
    expect(draft?.message.to.map((a) => a.name ?? '')).toEqual(['']);
  });

  onGmailImap("bulk label of a sender's mail: plain SEARCH FROM, the label read from each message's X-GM-LABELS; a repeat touches none; undo takes off only what it added", { timeout: 60_000 }, async () => {
    const sender = `news@list-${run}.test`;
    for (let i = 0; i < 2; i++) await w.incoming({ from: `List <${sender}>`, subject: `List issue ${i} ${run}`, text: 'This week on the list.' });
    const ids = (await w.user.searchMessages({ from: sender, in: 'ALL' })).messages.map((m) => m.id);
    expect(ids).toHaveLength(2);
    // The user had labelled one already (a label name with a blank: Gmail's search would write it list-mail).
    await w.user.modifyMessage(ids[0]!, { add: ['List Mail'] });
    const labelled = async () => (await Promise.all(ids.map(async (id) => ((await w.user.getMessage(id)).labelIds.includes('List Mail') ? [id] : [])))).flat();
    const bulk = { client: w.h.client, taskQueue: w.h.cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: w.h.cfg.GMAIL_TASK_QUEUE };
    const label = (dryRun: boolean) => startBulk(w.h.client, { ...bulk, accountId: w.h.accountId, selection: { kind: 'sender', value: sender }, operation: 'label', label: 'List Mail', dryRun, batchSize: 1000 });
    expect(await (await label(true)).result()).toMatchObject({ state: 'dry_run', messages: 1 });
    const handle = await label(false);
    expect(await handle.result()).toMatchObject({ state: 'done', messages: 1, batches: 1 });
    expect(await labelled()).toEqual(ids);
    expect(await (await label(false)).result()).toMatchObject({ state: 'done', messages: 0, batches: 0 });
    const undone = await undoBulk({ ...bulk, db: prismaExecutor(w.h.prisma) }, handle.workflowId, 'test');
    expect(undone.map((o) => o.ok)).toEqual([true]);
    expect(await labelled()).toEqual([ids[0]]);
  });
});
