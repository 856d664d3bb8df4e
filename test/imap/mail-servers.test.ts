// The real servers the IMAP work is tested against (mail-servers): a private Dovecot
// and Postfix on loopback. Mail travels as it would between real servers: SMTP in, LMTP to Dovecot,
// IMAP out; CONDSTORE, special-use folders, a Dovecot restart and a kicked connection are seen by
// an ordinary IMAP client.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverFromOutside } from '../../mail-servers/deliver.js';
import { startMailServers, type MailServers } from '../../mail-servers/index.js';
import { createSmtpTransport } from '../../src/imap/smtp.js';
import { openImapSession } from '../../src/imap/connect.js';
import { waitUntil } from '../helpers/wait-until.js';
import {
  closed,
  existsAtLeast,
  imapAddress,
  imapClient,
  submissionAddress,
} from './mail-test-clients.js';

let servers: MailServers;

beforeAll(async () => {
  servers = await startMailServers();
});

afterAll(async () => {
  await servers?.stop();
});

const unique = (what: string) => `${what} ${randomUUID()}`;

describe('test mail servers', () => {
  it('listen on loopback only, with TLS from a CA made for the run', () => {
    expect(servers.host).toBe('127.0.0.1');
    expect(servers.caPem).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(servers.certificateNames).toEqual(['localhost', '127.0.0.1']);
    expect(servers.versions.dovecot).toMatch(/^2\./);
    expect(servers.versions.postfix).toMatch(/^3\./);
  });

  it("deliver a correspondent's mail through SMTP into the user's INBOX (seen by IDLE)", async () => {
    const client = await imapClient(servers, servers.user);
    try {
      const inbox = await client.mailboxOpen('INBOX');
      const before = inbox.exists;
      const subject = unique('Lunch on Friday?');
      const messageId = `<${randomUUID()}@correspondent.test>`;
      const arrived = existsAtLeast(client, before + 1);
      const sent = await deliverFromOutside(servers, {
        from: `Alice <${servers.correspondent.address}>`,
        to: servers.user.address,
        subject,
        text: 'Shall we meet at noon?',
        messageId,
      });
      expect(sent.accepted).toEqual([servers.user.address]);
      await arrived;
      const message = await client.fetchOne('*', { envelope: true, flags: true, uid: true });
      expect(message && message.envelope?.subject).toBe(subject);
      expect(message && message.envelope?.messageId).toBe(messageId);
      expect(message && message.envelope?.from?.[0]?.address).toBe(servers.correspondent.address);
    } finally {
      await client.logout();
    }
  });

  it("deliver what the user submits (SMTP AUTH over STARTTLS) into the correspondent's INBOX", async () => {
    const alice = await imapClient(servers, servers.correspondent);
    try {
      const before = (await alice.mailboxOpen('INBOX')).exists;
      const arrived = existsAtLeast(alice, before + 1);
      const subject = unique('Re: Lunch on Friday?');
      const credentials = { user: servers.user.address, password: servers.user.password };
      const transport = createSmtpTransport(submissionAddress(servers, 'starttls'), credentials);
      try {
        const sent = await transport.sendMail({
          from: servers.user.address,
          to: servers.correspondent.address,
          subject,
          text: 'Noon works.',
        });
        expect(sent.accepted).toEqual([servers.correspondent.address]);
      } finally {
        transport.close();
      }
      await arrived;
      const message = await alice.fetchOne('*', { envelope: true });
      expect(message && message.envelope?.subject).toBe(subject);
      expect(message && message.envelope?.from?.[0]?.address).toBe(servers.user.address);
    } finally {
      await alice.logout();
    }
  });

  it('refuse forged senders, relaying, and any mail for other domains', async () => {
    const credentials = { user: servers.user.address, password: servers.user.password };
    const transport = createSmtpTransport(submissionAddress(servers, 'implicit'), credentials);
    const rejection = (err: unknown) => err as { responseCode?: number; response?: string };
    try {
      const forged = await transport
        .sendMail({
          from: servers.correspondent.address,
          to: servers.correspondent.address,
          subject: 'forged',
          text: 'x',
        })
        .then(() => undefined, rejection);
      expect(forged?.responseCode).toBe(553);
      expect(forged?.response).toMatch(/not owned by user/);

      const relayed = await deliverFromOutside(servers, {
        from: servers.correspondent.address,
        to: 'someone@example.com',
        subject: 'relay?',
        text: 'x',
        messageId: `<${randomUUID()}@correspondent.test>`,
      }).then(() => undefined, rejection);
      expect(relayed?.response).toMatch(/Relay access denied/);

      // Mail for other domains is refused while the client is still talking, so nothing is ever queued for them.
      const outside = await transport
        .sendMail({ from: servers.user.address, to: 'someone@example.com', subject: 'out', text: 'x' })
        .then(() => undefined, rejection);
      expect(outside?.responseCode).toBe(550);
      expect(outside?.response).toMatch(/deliver to their own mailboxes only/);
    } finally {
      transport.close();
    }
  });

  it('keep CONDSTORE: a new keyword raises HIGHESTMODSEQ and shows in a CHANGEDSINCE fetch', async () => {
    const client = await imapClient(servers, servers.user);
    try {
      const folder = `Modseq-${randomUUID()}`;
      await client.mailboxCreate(folder);
      const raw = (n: number) =>
        `From: ${servers.correspondent.address}\r\nTo: ${servers.user.address}\r\nSubject: modseq ${n}\r\nMessage-ID: <${randomUUID()}@test>\r\n\r\nbody ${n}\r\n`;
      const first = await client.append(folder, raw(1));
      const second = await client.append(folder, raw(2));
      expect(first && second && first.uid && second.uid).toBeTruthy();
      const box = await client.mailboxOpen(folder);
      expect(box.noModseq).toBeFalsy();
      expect(box.permanentFlags?.has('\\*')).toBe(true);
      const before = box.highestModseq!;

      await client.messageFlagsAdd(String(second && second.uid), ['$DurableInbox-Waiting'], { uid: true });

      const status = await client.status(folder, { highestModseq: true });
      expect(status && status.highestModseq).toBeGreaterThan(before);
      const changed = await client.fetchAll('1:*', { uid: true, flags: true }, { uid: true, changedSince: before });
      expect(changed.map((m) => m.uid)).toEqual([second && second.uid]);
      expect([...(changed[0]?.flags ?? [])]).toContain('$DurableInbox-Waiting');
      expect(changed[0]?.modseq).toBeGreaterThan(before);
    } finally {
      await client.logout();
    }
  });

  it('mark Drafts, Sent, Archive, Junk and Trash with their special use, subscribed', async () => {
    const client = await imapClient(servers, servers.user);
    try {
      expect(client.capabilities.has('SPECIAL-USE')).toBe(true);
      const folders = await client.list();
      const byUse = Object.fromEntries(folders.filter((f) => f.specialUse).map((f) => [f.specialUse, f]));
      for (const [use, path] of [
        ['\\Drafts', 'Drafts'],
        ['\\Sent', 'Sent'],
        ['\\Archive', 'Archive'],
        ['\\Junk', 'Junk'],
        ['\\Trash', 'Trash'],
      ] as const) {
        expect(byUse[use]?.path).toBe(path);
        expect(byUse[use]?.specialUseSource).toBe('extension');
        expect(byUse[use]?.subscribed).toBe(true);
      }
      for (const extension of ['IDLE', 'CONDSTORE', 'QRESYNC', 'MOVE', 'UIDPLUS', 'ENABLE']) {
        expect(client.capabilities.has(extension)).toBe(true);
      }
      expect(client.enabled.has('QRESYNC')).toBe(true);
    } finally {
      await client.logout();
    }
  });

  it('drop every IMAP connection on a Dovecot restart; a new connection works and the mail is still there', async () => {
    const client = await imapClient(servers, servers.user);
    const before = (await client.mailboxOpen('INBOX')).exists;
    expect(before).toBeGreaterThan(0);
    const gone = closed(client);
    await servers.restartDovecot();
    await gone;
    expect(client.usable).toBe(false);

    const session = await openImapSession(imapAddress(servers), {
      user: servers.user.address,
      password: servers.user.password,
    });
    try {
      expect(session.client.mailbox && session.client.mailbox.exists).toBe(before);
    } finally {
      await session.close();
    }
  });

  it('drop an idling connection on doveadm kick; a new connection works', async () => {
    const client = await imapClient(servers, servers.user);
    await client.mailboxOpen('INBOX');
    const gone = closed(client);
    const idling = client.idle();
    // IDLE is on once the server has answered "+ idling"; imapflow then reports it.
    await waitUntil('IMAP IDLE started', async () => client.idling);
    const kicked = await servers.kickImapUser(servers.user.address);
    expect(kicked).toBeGreaterThanOrEqual(1);
    await gone;
    await idling.catch(() => {});
    expect(client.usable).toBe(false);

    const again = await imapClient(servers, servers.user);
    try {
      expect((await again.mailboxOpen('INBOX')).exists).toBeGreaterThan(0);
    } finally {
      await again.logout();
    }
  });
});
