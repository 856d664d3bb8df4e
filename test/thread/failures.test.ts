// The thread workflow under failure: Gmail 500s and 429s, a revoked grant, and a Gmail worker killed
// (SIGKILL) after it created the draft but before the activity reported back. Still exactly one draft.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { recordHistory } from '../helpers/histories.js';
import { waitUntil } from '../helpers/wait-until.js';
import { accountReconnectedSignal } from '../../src/accounts/account-access.js';
import { breakMime } from '../../emulators/gmail/faults.js';
import { readSpamAssassin, spamAssassinEntries } from '../../bench/corpus/spam-assassin.js';
import { IN_PROGRESS_STATES } from '../../bench/corpus/settle.js';

let h: InboxHarness;

beforeAll(async () => {
  h = await startInboxHarness();
});

afterEach(async () => {
  await h.stopWorkers();
  await h.gmail.control.setFaults({ errors: [], latency: [] });
  await h.gmail.control.setQuota({ enabled: false });
});

afterAll(async () => {
  await h?.close();
});

const question = (subject: string) => ({
  from: 'Carol <carol@client.example>',
  subject,
  text: 'Could you confirm the delivery date?',
});

async function draftsOf(threadId: string) {
  return (await h.gmail.control.getState(h.email)).drafts.filter((d) => d.threadId === threadId);
}

/** The Gmail worker as its own process, as in production (`tsx src/workers/gmail-worker.ts`). */
function spawnGmailWorker(): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/workers/gmail-worker.ts'], {
    env: { ...process.env, ...h.env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

describe('thread workflow under failure', () => {
  it('gets through Gmail 500s and 503s with one draft', async () => {
    await h.gmail.control.setFaults({
      seed: 7,
      errors: [
        { method: 'threads.get', rate: 0.5, status: 500 },
        { method: 'drafts.create', rate: 0.5, status: 503 },
        { method: 'threads.modify', rate: 0.5, status: 500 },
      ],
    });
    await h.startWorkers();
    const { threadId } = await deliverAndIngest(h, question('Delivery date'));
    await h.waitFor(threadId, (s) => s.state === 'drafted', 60_000);
    expect(await draftsOf(threadId)).toHaveLength(1);
    const metrics = await h.gmail.control.metrics();
    expect(metrics.faults.injectedErrors).toBeGreaterThan(0);
    await recordHistory(h, threadId, 'thread-gmail-5xx');
  });

  it('backs off on 429s as Gmail asks (Retry-After) and still drafts once', async () => {
    await h.gmail.control.setQuota({ enabled: true, profile: '2026', userUnitsPerMinute: 3000, burstSeconds: 1 });
    await h.startWorkers();
    // Three threads at once read 3 × 46 units against a bucket of 50: Gmail answers 429 whatever the
    // machine's speed.
    const threads = await Promise.all(['Pallet count', 'Crate count', 'Box count'].map((s) => deliverAndIngest(h, question(s))));
    for (const { threadId } of threads) {
      await h.waitFor(threadId, (s) => s.state === 'drafted', 90_000);
      expect(await draftsOf(threadId)).toHaveLength(1);
    }
    const metrics = await h.gmail.control.metrics();
    expect(metrics.quota.rejected429).toBeGreaterThan(0);
  }, 120_000);

  it('sends mail whose MIME cannot be read to Action Required with the reason, without asking the model or drafting', async () => {
    await h.startWorkers();
    const llmCalls = h.anthropic.metrics().requests;
    const raw = breakMime(Buffer.from(`From: Carol <carol@client.example>\r\nTo: ${h.email}\r\nSubject: Broken order\r\n\r\nCould you confirm?`));
    const { threadId, messageId } = await deliverAndIngest(h, { from: 'carol@client.example', raw: raw.toString('base64url') });
    const status = await h.waitFor(threadId, (s) => s.state === 'action_required', 60_000);
    expect(status.decisions.at(-1)).toMatchObject({ kind: 'action_required', source: 'system' });
    expect(status.decisions.at(-1)!.detail).toMatch(new RegExp(`message ${messageId} could not be read: .+`));
    expect(await draftsOf(threadId)).toHaveLength(0);
    expect(h.anthropic.metrics().requests).toBe(llmCalls);
    const thread = (await h.gmail.control.getState(h.email)).messages.find((m) => m.threadId === threadId)!;
    expect(thread.labelIds).toContain((await h.gmail.control.getState(h.email)).labels.find((l) => l.name === h.settings.labels.actionRequired)!.id);
    await recordHistory(h, threadId, 'thread-unreadable-mail');
  });

  it('reads mail whose multipart boundary never appears as text, as mail clients show it, with the defect in the decision log', async () => {
    await h.startWorkers();
    const head = (subject: string, contentType: string) =>
      `From: Barry <barry@python.example>\r\nTo: ${h.email}\r\nSubject: ${subject}\r\nMIME-Version: 1.0\r\nContent-Type: ${contentType}\r\n\r\n`;
    // The shapes of CPython's test messages msg_17, msg_25, msg_31 and msg_41, and two SpamAssassin spams
    // whose declared boundary is not the one their parts use.
    const spam = (name: string) => readSpamAssassin(spamAssassinEntries().find((e) => e.name.startsWith(name))!);
    const mail: Array<{ raw: Buffer; text: string }> = [
      { raw: Buffer.from(head('Here is your dingus fish', 'multipart/mixed; boundary="BOUNDARY"') + 'Hi there,\r\n\r\nThis is the dingus fish.\r\n'), text: 'This is the dingus fish.' },
      {
        raw: Buffer.from(head('Returned mail: Too many hops', 'multipart/report; report-type=delivery-status;\r\n\tbo') + 'This is a MIME-encapsulated message\r\n\r\n--JAB03225.986577786/zinfandel.lacita.com\r\n\r\nThe original message was received at Fri, 6 Apr 2001\r\n'),
        text: 'The original message was received',
      },
      { raw: Buffer.from(head('Two messages', 'multipart/mixed; boundary=BOUNDARY_') + '--BOUNDARY\r\nContent-Type: text/plain\r\n\r\nmessage 1\r\n\r\n--BOUNDARY\r\nContent-Type: text/plain\r\n\r\nmessage 2\r\n\r\n--BOUNDARY--\r\n'), text: 'message 2' },
      { raw: Buffer.from(head('64423', 'multipart/alternative;') + 'Blah blah blah\r\n'), text: 'Blah blah blah' },
      { raw: spam('spam-1/00467.'), text: 'Incredible Deals on Inkjet Cartridges!' },
      { raw: spam('spam-2/01214.'), text: 'NEED A PROFESSIONAL LOOKING  WEBSITE?' },
    ];
    const delivered = await Promise.all(mail.map(({ raw }) => deliverAndIngest(h, { from: '', raw: raw.toString('base64url') })));
    const byModel: string[] = [];
    for (const [i, { threadId, messageId }] of delivered.entries()) {
      const status = await h.waitFor(threadId, (s) => s.pendingEvents === 0 && !IN_PROGRESS_STATES.includes(s.state), 60_000);
      expect(status.state, `message ${i}: ${JSON.stringify(status.decisions.at(-1))}`).not.toBe('action_required');
      expect(status.decisions).toContainEqual(
        expect.objectContaining({ kind: 'read', source: 'system', detail: expect.stringMatching(new RegExp(`^message ${messageId}: multipart/\\w+ top-level part has no parts \\(.+\\): read as text$`)) }),
      );
      const classified = status.decisions.find((d) => d.kind === 'classify');
      expect(classified, `message ${i} classified`).toBeDefined();
      if (classified!.source === 'llm') byModel.push(mail[i]!.text);
    }
    // The model was given what the user sees (the rules settle the report without it).
    expect(byModel.length).toBeGreaterThanOrEqual(4);
    const prompts = h.anthropic.recentRequests().map((r) => JSON.stringify(r.body));
    for (const text of byModel) expect(prompts.some((p) => p.includes(text)), text).toBe(true);
  });

  it('waits while the grant is revoked, says so in its status, and drafts once the account is reconnected', async () => {
    await h.startWorkers();
    await h.gmail.control.revoke(h.email);
    let reconnected = false;
    try {
      const { threadId } = await deliverAndIngest(h, question('Revoked meanwhile'));
      const waiting = await h.waitFor(threadId, (s) => s.waitingFor !== undefined);
      expect(waiting.waitingFor).toMatch(/^readThread: (GmailAuthError|AccountNotConnectedError)$/);
      expect(waiting.state).toBe('pending');
      expect((await h.prisma.account.findUniqueOrThrow({ where: { id: h.accountId } })).status).toBe('needs_reauth');
      expect(await draftsOf(threadId)).toHaveLength(0);

      await h.regrant();
      reconnected = true;
      await h.handle(threadId).signal(accountReconnectedSignal);
      const drafted = await h.waitFor(threadId, (s) => s.state === 'drafted');
      expect(drafted.waitingFor).toBeUndefined();
      expect(await draftsOf(threadId)).toHaveLength(1);
    } finally {
      if (!reconnected) await h.regrant(); // the other tests share this account
    }
  });

  it('keeps one draft when the Gmail worker dies between creating the draft and reporting it', async () => {
    await h.startWorkers({ gmail: false });
    // Reading a draft back is slow: the worker is killed after drafts.create and before the activity completes.
    await h.gmail.control.setFaults({ latency: [{ method: 'drafts.get', distribution: { type: 'fixed', ms: 3000 } }] });
    let worker = spawnGmailWorker();
    try {
      const { threadId } = await deliverAndIngest(h, question('Shipping address'));
      await waitUntil('the draft to exist', async () => (await draftsOf(threadId)).length > 0, { timeoutMs: 60_000, everyMs: 50 });
      worker.kill('SIGKILL');
      await new Promise((r) => worker.once('exit', r));
      worker = spawnGmailWorker();
      const status = await h.waitFor(threadId, (s) => s.state === 'drafted', 90_000);
      const drafts = await draftsOf(threadId);
      expect(drafts).toHaveLength(1);
      expect(drafts[0]!.id).toBe(status.draftId);
      await recordHistory(h, threadId, 'thread-worker-killed');
    } finally {
      worker.kill('SIGKILL');
    }
  }, 120_000);
});
