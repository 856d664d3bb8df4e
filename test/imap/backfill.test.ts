// The backfill of an IMAP account, through the product's workers (the real workflow, the dev server,
// Postgres, Dovecot): a mailbox with mail over several months, put in with APPEND and its internal
// dates (INBOX, Archive, Sent; a message at 23:59:59 and its reply at 00:00:00 on a slice boundary,
// one without a Message-ID). A first backfill up to ten days ago, then the rest resumed from its
// watermark with the hand-over of the last three days, then the same again: every message stored
// once under the ids ImapMailbox gives (the sync's and the threads'), the watermark at each range's
// end, the rerun storing nothing, the recent inbox threads handed to their thread workflows, and the
// archiver taking the inbox mail behind the watermark to the Archive.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { archiverWorkflow } from '../../src/backfill/archiver-workflow.js';
import { backfillWorkflow } from '../../src/backfill/backfill-workflow.js';
import { backfillWorkflowId, type BackfillOptions } from '../../src/backfill/contracts.js';
import { locationIdOf, messageIdOf } from '../../src/imap/mail-ids.js';
import { threadWorkflowId } from '../../src/thread/contracts.js';
import { startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { imapClient } from './mail-test-clients.js';
import { startImapWorld, type ImapWorld } from './imap-world.js';

const run = randomUUID().slice(0, 8);
const DAY = 86_400_000;
const now = Date.now();
/** The first backfill ends here; the second resumes from it. */
const middle = now - 10 * DAY;
const rangeEnd = now + 60_000;
const handOffDays = 3;

interface Mail {
  key: string;
  folder: 'INBOX' | 'Archive' | 'Sent';
  at: number;
  /** A message without a Message-ID gets a location id. */
  noMessageId?: boolean;
  /** The key of the message this one replies to. */
  replyTo?: string;
}

const monthStart = (back: number) => {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - back, 1);
};

const MAIL: Mail[] = [
  { key: 'a1', folder: 'INBOX', at: monthStart(3) + 5 * DAY + 10 * 3600_000 },
  { key: 'a2', folder: 'Sent', at: monthStart(3) + 6 * DAY, replyTo: 'a1' },
  // On the boundary of two monthly slices: the last second of one month, the first of the next.
  { key: 'b1', folder: 'Archive', at: monthStart(2) - 1000 },
  { key: 'b2', folder: 'Archive', at: monthStart(2), replyTo: 'b1' },
  { key: 'c1', folder: 'Archive', at: monthStart(2) + 10 * DAY, noMessageId: true },
  ...Array.from({ length: 6 }, (_, i): Mail => ({
    key: `d${i}`,
    folder: i % 2 ? 'Archive' : 'INBOX',
    at: monthStart(1) + (i * 4 + 1) * DAY + i * 3600_000,
  })),
  { key: 'o1', folder: 'INBOX', at: now - 20 * DAY },
  { key: 'o2', folder: 'INBOX', at: now - 8 * DAY },
  // The last three days: inbox threads (handed over), an archived one and a sent reply to an old thread (not).
  { key: 'r1', folder: 'INBOX', at: now - 2 * DAY },
  { key: 'r2', folder: 'INBOX', at: now - DAY, replyTo: 'r1' },
  { key: 'r3', folder: 'INBOX', at: now - DAY / 2 },
  { key: 'r4', folder: 'Archive', at: now - DAY },
  { key: 'r5', folder: 'Sent', at: now - 3600_000, replyTo: 'a1' },
];

const messageIdHeader = (key: string) => `<${key}.${run}@backfill.test>`;

function rawMail(mail: Mail, user: string): Buffer {
  const lines = [
    `From: ${mail.folder === 'Sent' ? user : `Sender ${mail.key} <${mail.key}@sender.test>`}`,
    `To: ${mail.folder === 'Sent' ? `${mail.replyTo}@sender.test` : user}`,
    `Subject: ${mail.replyTo ? `Re: message ${mail.replyTo}` : `message ${mail.key}`} ${run}`,
    `Date: ${new Date(mail.at).toUTCString()}`,
    ...(mail.noMessageId ? [] : [`Message-ID: ${messageIdHeader(mail.key)}`]),
    ...(mail.replyTo
      ? [`In-Reply-To: ${messageIdHeader(mail.replyTo)}`, `References: ${messageIdHeader(mail.replyTo)}`]
      : []),
    'Content-Type: text/plain; charset=utf-8',
    '',
    `Body of ${mail.key}.`,
    '',
  ];
  return Buffer.from(lines.join('\r\n'));
}

let world: ImapWorld<InboxHarness>;
let h: InboxHarness;
/** The product's id of each message, by key. */
const ids = new Map<string, string>();

beforeAll(async () => {
  world = await startImapWorld(
    { user: { address: `backfill-${run}@inbox.test`, password: 'user-app-password' } },
    async (imap) => {
      // No IDLE: the thread workflows here are the hand-over's alone. The limiter's ceiling is set high: this is not a speed test.
      const harness = await startInboxHarness({
        imap,
        env: { IMAP_IDLE: 'false', IMAP_BACKFILL_RATE: '500', IMAP_BACKFILL_CONNECTIONS: '2' },
      });
      await harness.startWorkers({ llm: false });
      return harness;
    },
  );
  h = world.product;
  const client = await imapClient(world.servers, world.servers.user);
  try {
    for (const mail of MAIL) {
      const flags = mail.folder === 'INBOX' ? [] : ['\\Seen'];
      const appended = await client.append(
        mail.folder,
        rawMail(mail, world.servers.user.address),
        flags,
        new Date(mail.at),
      );
      if (!appended || !appended.uid) throw new Error(`APPEND of ${mail.key} gave no UID`);
      ids.set(
        mail.key,
        mail.noMessageId
          ? locationIdOf({ uidValidity: String(appended.uidValidity), uid: appended.uid, folder: mail.folder })
          : messageIdOf(messageIdHeader(mail.key)),
      );
    }
  } finally {
    await client.logout();
  }
}, 120_000);

afterAll(async () => {
  await world?.close();
});

const options = (extra: Partial<BackfillOptions>): BackfillOptions => ({
  accountId: h.accountId,
  granularity: 'month',
  // IMAP's listing is exact to the second (INTERNALDATE), so no overlap is needed: no message is read twice.
  overlapMs: 0,
  taskQueues: { workflows: h.cfg.TEMPORAL_TASK_QUEUE, gmail: h.cfg.GMAIL_TASK_QUEUE },
  ...extra,
});

const backfill = (extra: Partial<BackfillOptions>) =>
  h.client.workflow.execute(backfillWorkflow, {
    workflowId: backfillWorkflowId(h.accountId),
    taskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
    args: [options(extra)],
  });

async function storedRows() {
  return h.prisma.$queryRawUnsafe<
    Array<{ gmail_id: string; gmail_thread_id: string; label_ids: string[]; writes: number }>
  >(
    `SELECT gmail_id, gmail_thread_id, label_ids, writes FROM messages WHERE account_id = $1 ORDER BY gmail_id`,
    h.accountId,
  );
}

const watermark = async () =>
  (
    await h.prisma.$queryRawUnsafe<Array<{ watermark: Date }>>(
      `SELECT watermark FROM backfill_state WHERE account_id = $1`,
      h.accountId,
    )
  )[0]?.watermark.getTime();

const keysOf = (pick: (m: Mail) => boolean) => MAIL.filter(pick).map((m) => ids.get(m.key)!);

describe('the backfill of an IMAP account', () => {
  it('lists what was received in a range exactly, by INTERNALDATE, a page at a time across the folders', async () => {
    const all = async (after: number, before: number, pageSize: number) => {
      const listed: string[] = [];
      let pageToken: string | undefined;
      do {
        const page = await world.user.listReceived({ after, before, pageSize, ...(pageToken ? { pageToken } : {}) });
        listed.push(...page.ids);
        pageToken = page.nextPageToken;
      } while (pageToken);
      return listed.sort();
    };
    // Two UIDs a page: INBOX and Archive take several pages each; every message once.
    expect(await all(0, rangeEnd, 2)).toEqual([...ids.values()].sort());
    // The boundary to the second: 23:59:59 is before it, 00:00:00 from it (SEARCH alone sees whole days).
    const boundary = monthStart(2);
    expect(await all(boundary - DAY, boundary, 500)).toEqual([ids.get('b1')!]);
    expect(await all(boundary, boundary + DAY, 500)).toEqual([ids.get('b2')!]);
  });

  it(
    "stores every message once under the sync's ids, resumes from its watermark, stores nothing on a rerun, hands recent inbox threads over, and archives behind the watermark",
    { timeout: 90_000 },
    async () => {
      // 1. Up to ten days ago; the range starts at the day of the oldest message, which the backfill finds.
      const first = await backfill({ rangeEnd: middle });
      expect(first.watermark).toBe(middle);
      expect(await watermark()).toBe(middle);
      const before = keysOf((m) => m.at < middle);
      expect((await storedRows()).map((r) => r.gmail_id).sort()).toEqual([...before].sort());
      expect(first.counters).toMatchObject({
        listed: before.length,
        stored: before.length,
        inserted: before.length,
        bad: 0,
        gone: 0,
      });

      // 2. The rest, resumed from the watermark (the range's start is the first backfill's), with the hand-over.
      const second = await backfill({ rangeEnd, handToThreadsDays: handOffDays });
      const after = keysOf((m) => m.at >= middle);
      expect(second.watermark).toBe(rangeEnd);
      expect(await watermark()).toBe(rangeEnd);
      expect(second.counters).toMatchObject({
        listed: after.length,
        stored: after.length,
        inserted: after.length,
        bad: 0,
      });

      // Every message once, written once, with the id and thread id ImapMailbox gives it (what the sync and the threads use).
      const rows = await storedRows();
      expect(rows.map((r) => r.gmail_id).sort()).toEqual([...ids.values()].sort());
      expect(rows.every((r) => r.writes === 1)).toBe(true);
      const threadOf = new Map<string, string>();
      for (const row of rows) {
        const read = await world.user.getMessage(row.gmail_id);
        expect(row.gmail_thread_id, row.gmail_id).toBe(read.threadId);
        expect(row.label_ids.includes('INBOX'), row.gmail_id).toBe(read.labelIds.includes('INBOX'));
        threadOf.set(row.gmail_id, read.threadId);
      }
      // A reply is in its parent's thread, across folders and across the slice boundary.
      expect(threadOf.get(ids.get('b2')!)).toBe(threadOf.get(ids.get('b1')!));
      expect(threadOf.get(ids.get('r5')!)).toBe(threadOf.get(ids.get('a1')!));

      // 3. Again: nothing left to list, nothing stored twice.
      const third = await backfill({ rangeEnd, handToThreadsDays: 0 });
      expect(third.counters).toMatchObject({ listed: 0, stored: 0, inserted: 0 });
      expect((await storedRows()).map((r) => [r.gmail_id, r.writes])).toEqual(rows.map((r) => [r.gmail_id, r.writes]));

      // The IMAP backfill read the mailbox under its limiter (its own bucket of the account, at most its ceiling).
      const [bucket] = await h.prisma.$queryRawUnsafe<Array<{ rate: number }>>(
        `SELECT rate FROM quota_buckets WHERE key = $1`,
        `${h.accountId}:imap-backfill`,
      );
      expect(bucket).toBeDefined();
      expect(Number(bucket!.rate)).toBeLessThanOrEqual(500);

      // The hand-over: the threads with inbox mail from the last three days, and no other.
      const since = rangeEnd - handOffDays * DAY;
      const handed = new Set(
        MAIL.filter((m) => m.folder === 'INBOX' && m.at >= since).map((m) => threadOf.get(ids.get(m.key)!)!),
      );
      const others = new Set([...threadOf.values()].filter((t) => !handed.has(t)));
      expect(handed.size).toBe(2); // r1 + r2, r3
      expect(second.counters.handedOff).toBe(handed.size);
      const exists = (threadId: string) =>
        h.client.workflow
          .getHandle(threadWorkflowId(h.accountId, threadId))
          .describe()
          .then(
            () => true,
            () => false,
          );
      for (const threadId of handed) expect(await exists(threadId), threadId).toBe(true);
      for (const threadId of others) expect(await exists(threadId), threadId).toBe(false);
      for (const threadId of handed) {
        await h.client.workflow
          .getHandle(threadWorkflowId(h.accountId, threadId))
          .terminate('test done')
          .catch(() => undefined); // already closed
      }

      // The archiver, behind the watermark (now at the range's end): the inbox mail moves to the Archive.
      const inbox = rows.filter((r) => r.label_ids.includes('INBOX')).map((r) => r.gmail_id);
      const archived = await h.client.workflow.execute(archiverWorkflow, {
        workflowId: `archiver-${run}`,
        taskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
        args: [
          {
            accountIds: [h.accountId],
            taskQueues: { workflows: h.cfg.TEMPORAL_TASK_QUEUE, gmail: h.cfg.GMAIL_TASK_QUEUE },
          },
        ],
      });
      expect(archived.accounts[0]?.archived).toBe(inbox.length);
      for (const id of inbox) expect((await world.user.getMessage(id)).labelIds, id).not.toContain('INBOX');
    },
  );
});
