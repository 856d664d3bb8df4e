// Push contract tests: users.watch/stop through googleapis, Pub/Sub push envelopes received by a
// local node:http endpoint, OIDC JWTs verified with google-auth-library against the emulator's
// certs, the one-per-second coalescing, redelivery, and the drop/duplicate/delay/reorder switches.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAuth2Client } from 'google-auth-library';
import type { gmail_v1 } from 'googleapis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { connect, failure, startEmulator } from '../helpers/googleapis-clients.js';
import { waitUntil } from '../helpers/wait-until.js';

const OWNER = 'watched@example.com';
const TOPIC = 'projects/durable-inbox/topics/gmail';
const SERVICE_ACCOUNT = 'gmail-push@durable-inbox-emulator.iam.gserviceaccount.com';

interface Received {
  at: number;
  authorization: string;
  envelope: { message: { data: string; messageId: string; publishTime: string }; subscription: string };
  data: { emailAddress: string; historyId: number };
}

let emu: RunningGmailEmulator;
let receiver: Server;
let endpoint: string;
let received: Received[] = [];
/** Status codes the receiver answers with, consumed in order (then 204). */
let answers: number[] = [];
let gmail: gmail_v1.Gmail;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const envelope = JSON.parse(Buffer.concat(chunks).toString()) as Received['envelope'];
      received.push({
        at: Date.now(),
        authorization: req.headers.authorization ?? '',
        envelope,
        data: JSON.parse(Buffer.from(envelope.message.data, 'base64').toString()) as Received['data'],
      });
      res.writeHead(answers.shift() ?? 204);
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/pubsub/push`;
  emu = await startEmulator();
});

beforeEach(async () => {
  await emu.control.reset();
  await emu.control.setPush({ topics: { [TOPIC]: { endpoint } }, coalesceMs: 300, retry: { minBackoffMs: 50, maxBackoffMs: 200, maxAttempts: 4 } });
  gmail = (await connect(emu, OWNER)).gmail;
  received = [];
  answers = [];
});

afterAll(async () => {
  await emu.close();
  await new Promise((resolve) => receiver.close(resolve));
});

async function watchInbox() {
  return (await gmail.users.watch({ userId: 'me', requestBody: { topicName: TOPIC, labelIds: ['INBOX'], labelFilterBehavior: 'INCLUDE' } })).data;
}

const deliver = (subject: string) => emu.control.deliver(OWNER, { from: 'sender@example.com', subject, text: 'hello' });

describe('users.watch and push delivery', () => {
  it('watch returns the current historyId and an expiration about 7 days out; a bad topic is refused', async () => {
    const watch = await watchInbox();
    expect(watch.historyId).toBe((await gmail.users.getProfile({ userId: 'me' })).data.historyId);
    expect(Number(watch.expiration) - Date.now()).toBeGreaterThan(6.9 * 24 * 3600_000);
    const err = await failure(gmail.users.watch({ userId: 'me', requestBody: { topicName: 'not-a-topic' } }));
    expect(err.status).toBe(400);
  });

  it('posts a Pub/Sub envelope whose OIDC token verifies against the emulator certs', async () => {
    await watchInbox();
    await deliver('first');
    await emu.control.flushPush();
    expect(received).toHaveLength(1);
    const push = received[0] as Received;
    expect(push.envelope.subscription).toBe('projects/durable-inbox/subscriptions/gmail-push');
    expect(push.envelope.message.messageId).toMatch(/^\d+$/);
    expect(Number.isNaN(Date.parse(push.envelope.message.publishTime))).toBe(false);
    expect(push.data).toEqual({ emailAddress: OWNER, historyId: Number((await gmail.users.getProfile({ userId: 'me' })).data.historyId) });

    const verifier = new OAuth2Client({ endpoints: { oauth2FederatedSignonPemCertsUrl: `${emu.url}/oauth2/v1/certs` } });
    const [scheme, token] = push.authorization.split(' ');
    expect(scheme).toBe('Bearer');
    const ticket = await verifier.verifyIdToken({ idToken: token ?? '', audience: endpoint });
    const payload = ticket.getPayload();
    expect(payload).toMatchObject({ iss: 'https://accounts.google.com', aud: endpoint, email: SERVICE_ACCOUNT, email_verified: true });
    const header = JSON.parse(Buffer.from(token?.split('.')[0] ?? '', 'base64url').toString()) as { alg: string; kid: string };
    expect(header).toMatchObject({ alg: 'RS256', kid: expect.any(String) });
    await expect(verifier.verifyIdToken({ idToken: token ?? '', audience: 'https://someone-else.example.com' })).rejects.toThrow(/audience/);
  });

  it('sends at most one notification per coalescing window, carrying the latest historyId', async () => {
    await watchInbox();
    for (let i = 0; i < 6; i++) await deliver(`burst ${i}`);
    await emu.control.flushPush();
    expect(received.length).toBeGreaterThanOrEqual(1);
    expect(received.length).toBeLessThanOrEqual(2);
    const current = Number((await gmail.users.getProfile({ userId: 'me' })).data.historyId);
    expect(received[received.length - 1]?.data.historyId).toBe(current);
    for (let i = 1; i < received.length; i++) expect((received[i] as Received).at - (received[i - 1] as Received).at).toBeGreaterThanOrEqual(250);
    expect((await emu.control.metrics()).push.coalesced).toBeGreaterThan(0);
  });

  it('honours the label filter and stop', async () => {
    await watchInbox();
    await emu.control.deliver(OWNER, { from: 's@example.com', subject: 'spam', text: 'x', exactLabelIds: ['SPAM'] });
    await emu.control.flushPush();
    expect(received).toHaveLength(0);
    await gmail.users.stop({ userId: 'me' });
    await deliver('after stop');
    await emu.control.flushPush();
    expect(received).toHaveLength(0);
  });

  it('redelivers after a non-2xx answer, keeping the Pub/Sub messageId', async () => {
    answers = [500, 503];
    await watchInbox();
    await deliver('retry me');
    await emu.control.flushPush();
    expect(received).toHaveLength(3);
    expect(new Set(received.map((r) => r.envelope.message.messageId)).size).toBe(1);
    const metrics = await emu.control.metrics();
    expect(metrics.push.failedAttempts).toBe(2);
    expect(metrics.push.delivered).toBe(1);
  });
});

describe('push misbehaviour switches', () => {
  it('drop: nothing arrives', async () => {
    await emu.control.setPush({ dropRate: 1 });
    await watchInbox();
    await deliver('dropped');
    await emu.control.flushPush();
    expect(received).toHaveLength(0);
    expect((await emu.control.metrics()).push.dropped).toBe(1);
  });

  it('duplicate: the same notification arrives twice', async () => {
    await emu.control.setPush({ duplicateRate: 1 });
    await watchInbox();
    await deliver('twice');
    await emu.control.flushPush();
    expect(received).toHaveLength(2);
    expect(received[0]?.envelope.message.messageId).toBe(received[1]?.envelope.message.messageId);
  });

  it('delay: notifications arrive late', async () => {
    await emu.control.setPush({ delay: { type: 'fixed', ms: 400 } });
    await watchInbox();
    const start = Date.now();
    await deliver('late');
    await emu.control.flushPush();
    expect(received).toHaveLength(1);
    expect((received[0] as Received).at - start).toBeGreaterThanOrEqual(390);
  });

  it('reorder: a newer notification overtakes an older one', async () => {
    await emu.control.setPush({ reorder: true, coalesceMs: 100 });
    await watchInbox();
    await deliver('one');
    // Its own notification: the first is published (and held back) before the second change.
    await waitUntil('the first notification published', async () => (await emu.control.metrics()).push.published === 1, { everyMs: 10 });
    await deliver('two');
    await emu.control.flushPush();
    expect(received).toHaveLength(2);
    expect((received[0] as Received).data.historyId).toBeGreaterThan((received[1] as Received).data.historyId);
  });
});
