// POST /gmail/push: Gmail notifications through a Cloud Pub/Sub push subscription.
//   1. Authenticate: the OIDC JWT in `Authorization: Bearer` is verified by google-auth-library
//      (signature against the certs URL, issuer, expiry, audience), then its `email` must be the
//      push subscription's service account. No or bad token → 401; wrong audience or sender → 403.
//   2. Parse the envelope with zod (historyId as a number or a string). A malformed body or an
//      unknown address is acknowledged (2xx: Pub/Sub would otherwise redeliver it forever) and
//      recorded in push_rejections.
//   3. Signal-with-start the account's sync workflow and answer 204. The notification is only a
//      hint: the sync workflow reads history from its own cursor, so duplicates and out-of-order
//      deliveries change nothing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OAuth2Client } from 'google-auth-library';
import { z } from 'zod';
import type { PrismaClient } from '../db/client.js';
import type { RouteHandler } from '../shared/http-server.js';
import { sendJson } from '../shared/json-response.js';
import { createLogger } from '../shared/log.js';
import { inSpan } from '../temporal/tracing.js';
import { notifySync, type SyncTarget } from './notify.js';

export const PUSH_PATH = '/gmail/push';
const MAX_BODY_BYTES = 64 * 1024;
const ACCOUNT_CACHE_MS = 30_000;

export interface PushRouteOptions {
  prisma: PrismaClient;
  sync: SyncTarget;
  /** The JWT `aud` the push subscription was configured with (often the endpoint URL). */
  audience: string;
  /** The push subscription's service account: the JWT `email` claim. */
  serviceAccountEmail: string;
  /** `{kid: PEM}` certs URL; default Google's. The emulator serves its own. */
  certsUrl?: string;
}

const envelopeSchema = z.object({
  message: z.object({
    data: z.string().min(1),
    messageId: z.string().optional(),
    message_id: z.string().optional(),
    publishTime: z.string().optional(),
  }),
  subscription: z.string().optional(),
});

const notificationSchema = z.object({
  emailAddress: z.email(),
  historyId: z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/)]).transform((v) => String(v)),
});

export type PushNotification = z.infer<typeof notificationSchema>;

const log = createLogger('push');

class BodyTooLarge extends Error {}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

type Parsed = { ok: true; notification: PushNotification; messageId?: string } | { ok: false; reason: string; detail: Record<string, unknown> };

export function parsePushBody(body: Buffer): Parsed {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed_json', detail: { bytes: body.length } };
  }
  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success) {
    return { ok: false, reason: 'malformed_envelope', detail: { issues: z.prettifyError(envelope.error) } };
  }
  const messageId = envelope.data.message.messageId ?? envelope.data.message.message_id;
  const subscription = envelope.data.subscription;
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(envelope.data.message.data, 'base64').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed_data', detail: { messageId, subscription } };
  }
  const notification = notificationSchema.safeParse(data);
  if (!notification.success) {
    return { ok: false, reason: 'malformed_notification', detail: { messageId, subscription, issues: z.prettifyError(notification.error) } };
  }
  return { ok: true, notification: notification.data, ...(messageId ? { messageId } : {}) };
}

export function pushRoute(opts: PushRouteOptions): RouteHandler {
  const verifier = new OAuth2Client(opts.certsUrl ? { endpoints: { oauth2FederatedSignonPemCertsUrl: opts.certsUrl } } : {});
  const accountCache = new Map<string, { id: string; status: string; at: number }>();

  async function authenticate(req: IncomingMessage): Promise<{ status: 401 | 403; error: string } | undefined> {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) return { status: 401, error: 'missing bearer token' };
    let payload;
    try {
      const ticket = await verifier.verifyIdToken({ idToken: match[1]!, audience: opts.audience });
      payload = ticket.getPayload();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      // Signed by Google for somebody else: authenticated, but not for us.
      if (message.startsWith('Wrong recipient')) return { status: 403, error: 'wrong audience' };
      return { status: 401, error: 'invalid token' };
    }
    if (!payload || payload.email !== opts.serviceAccountEmail || payload.email_verified !== true) {
      return { status: 403, error: 'unexpected sender' };
    }
    return undefined;
  }

  async function findAccount(email: string) {
    const key = email.toLowerCase();
    const cached = accountCache.get(key);
    if (cached && Date.now() - cached.at < ACCOUNT_CACHE_MS) return cached;
    const row = await opts.prisma.account.findFirst({
      where: { email: { equals: key, mode: 'insensitive' } },
      select: { id: true, status: true },
    });
    if (!row) return undefined;
    const entry = { id: row.id, status: row.status as string, at: Date.now() };
    accountCache.set(key, entry);
    return entry;
  }

  async function reject(res: ServerResponse, reason: string, detail: Record<string, unknown>): Promise<void> {
    await opts.prisma.pushRejection.create({ data: { reason, detail: detail as object } });
    log.warn(`push acknowledged without sync: ${reason}`);
    sendJson(res, 200, { acknowledged: true, ignored: reason });
  }

  return async (req, res) => {
    const denied = await authenticate(req);
    if (denied) {
      req.resume();
      log.warn(`push refused (${denied.status}): ${denied.error}`);
      sendJson(res, denied.status, { error: denied.error });
      return;
    }
    let body: Buffer;
    try {
      body = await readBody(req);
    } catch (err) {
      if (err instanceof BodyTooLarge) {
        await reject(res, 'too_large', { limitBytes: MAX_BODY_BYTES });
        return;
      }
      throw err;
    }
    const parsed = parsePushBody(body);
    if (!parsed.ok) {
      await reject(res, parsed.reason, parsed.detail);
      return;
    }
    const { emailAddress, historyId } = parsed.notification;
    const account = await findAccount(emailAddress);
    if (!account) {
      await reject(res, 'unknown_account', { emailAddress, historyId, messageId: parsed.messageId });
      return;
    }
    if (account.status === 'disconnected') {
      await reject(res, 'account_disconnected', { accountId: account.id, historyId, messageId: parsed.messageId });
      return;
    }
    // The root of the trace a push starts: the sync workflow, the thread workflows, their activities.
    await inSpan('gmail push', { 'durable_inbox.account_id': account.id }, () => notifySync(opts.sync, account.id, { source: 'push', historyId }));
    // For the health endpoint: push is alive (compared with when the sync last found changes).
    await opts.prisma.account.updateMany({ where: { id: account.id }, data: { lastPushAt: new Date() } });
    res.writeHead(204);
    res.end();
  };
}
