// The control API under /__emulator/: plays the user (Gmail UI actions) and the world (incoming
// mail, revoked grants, expired history, quota/fault/push switches, the clock), and reads state
// and metrics. JSON in, JSON out; errors use Google's error body.
import { badRequest, notFound } from './errors.js';
import type { FaultConfig } from './faults.js';
import { headerValue, parseTopHeaders, replaceBody } from './mime.js';
import type { OAuthClientRegistration } from './oauth.js';
import type { PushConfig } from './push.js';
import type { QuotaConfig } from './quota.js';
import type { GmailWorld, IncomingMessage } from './world.js';

export interface ControlCall {
  world: GmailWorld;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown>;
  baseUrl: string;
}

interface ControlRoute {
  httpMethod: string;
  segments: string[];
  handle: (call: ControlCall) => unknown;
}

const route = (httpMethod: string, path: string, handle: ControlRoute['handle']): ControlRoute => ({ httpMethod, segments: path.split('/'), handle });

function mailboxState(world: GmailWorld, email: string, query: URLSearchParams) {
  const account = world.getAccount(email);
  const mailbox = account.mailbox;
  const limit = Number(query.get('messageLimit') ?? 1000);
  const all = mailbox.allMessages();
  // `header=<name>` (repeatable): each message also carries those headers' values (e.g. our send marker).
  const wantedHeaders = query.getAll('header');
  const messages = [];
  for (let i = all.length - 1; i >= 0 && messages.length < limit; i--) {
    const m = all[i];
    if (!m) continue;
    const entry = { id: m.id, threadId: m.threadId, labelIds: [...m.labelIds], internalDate: String(m.internalDate), historyId: String(m.historyId), from: m.from, to: m.to, subject: m.subject, snippet: m.snippet };
    if (wantedHeaders.length === 0) {
      messages.push(entry);
      continue;
    }
    const top = parseTopHeaders(m.raw);
    const headers: Record<string, string> = {};
    for (const name of wantedHeaders) {
      const value = headerValue(top, name);
      if (value !== undefined) headers[name] = value;
    }
    messages.push({ ...entry, headers });
  }
  return {
    email: account.email,
    name: account.name,
    historyId: String(mailbox.historyId),
    historyFloor: String(mailbox.history.floor),
    historyRecords: mailbox.history.size,
    messagesTotal: mailbox.messagesTotal,
    threadsTotal: mailbox.threadsTotal,
    labels: mailbox.labels.list(),
    drafts: mailbox.listDrafts().map((d) => ({ id: d.id, messageId: d.messageId, threadId: mailbox.getMessage(d.messageId).threadId })),
    watch: world.push.getWatch(account.email) ?? null,
    messages,
  };
}

const CONTROL_ROUTES: ControlRoute[] = [
  route('GET', 'info', ({ world, baseUrl }) => ({
    url: baseUrl,
    gmailRootUrl: baseUrl + '/',
    tokenUrl: `${baseUrl}/token`,
    authUrl: `${baseUrl}/o/oauth2/v2/auth`,
    revokeUrl: `${baseUrl}/revoke`,
    pemCertsUrl: `${baseUrl}/oauth2/v1/certs`,
    jwkCertsUrl: `${baseUrl}/oauth2/v3/certs`,
    defaultClient: world.defaultClient,
    quota: world.quota.config,
    accounts: world.listAccounts().map((a) => a.email),
  })),
  route('POST', 'reset', ({ world }) => {
    world.reset();
    return {};
  }),
  route('POST', 'clock/advance', ({ world, body }) => {
    world.clock.advance(Number(body.ms ?? 0));
    return { now: world.clock.now() };
  }),
  route('GET', 'metrics', ({ world }) => ({
    methods: world.metrics.snapshot(),
    inFlight: world.metrics.inFlight(),
    quota: { ...world.quota.stats },
    push: { ...world.push.stats, recent: world.push.log.slice(-20) },
    oauth: { refreshes: world.oauth.refreshCount, codeExchanges: world.oauth.codeExchangeCount },
    faults: { injectedErrors: world.faults.injectedErrors },
  })),
  route('PUT', 'quota', ({ world, body }) => {
    world.quota.configure(body as Partial<QuotaConfig>);
    return world.quota.config;
  }),
  route('PUT', 'faults', ({ world, body }) => {
    world.faults.configure(body as Partial<FaultConfig>);
    return world.faults.config;
  }),
  route('PUT', 'push', ({ world, body }) => {
    world.push.configure(body as Partial<PushConfig>);
    return world.push.config;
  }),
  route('POST', 'push/flush', async ({ world, body }) => ({ idle: await world.push.flush(Number(body.timeoutMs ?? 30_000)) })),
  route('PUT', 'oauth', ({ world, body }) => {
    if (typeof body.denyConsent === 'boolean') world.oauth.denyConsent = body.denyConsent;
    if (typeof body.accessTokenTtlSeconds === 'number') world.oauth.accessTokenTtlSeconds = body.accessTokenTtlSeconds;
    if (Array.isArray(body.declineScopes)) world.oauth.declineScopes = body.declineScopes.map(String);
    if (typeof body.rotateRefreshTokens === 'boolean') world.oauth.rotateRefreshTokens = body.rotateRefreshTokens;
    return { denyConsent: world.oauth.denyConsent, accessTokenTtlSeconds: world.oauth.accessTokenTtlSeconds, declineScopes: world.oauth.declineScopes, rotateRefreshTokens: world.oauth.rotateRefreshTokens };
  }),
  route('POST', 'oauth/clients', ({ world, body }) => {
    const client = body as unknown as OAuthClientRegistration;
    if (typeof client.clientId !== 'string' || typeof client.clientSecret !== 'string') throw badRequest('clientId and clientSecret are required');
    world.oauth.registerClient(client);
    return client;
  }),
  route('GET', 'accounts', ({ world }) => ({ accounts: world.listAccounts().map((a) => ({ email: a.email, name: a.name, messagesTotal: a.mailbox.messagesTotal, historyId: String(a.mailbox.historyId) })) })),
  route('POST', 'accounts', ({ world, body }) => {
    if (typeof body.email !== 'string') throw badRequest('email is required');
    return world.createAccount(body as { email: string });
  }),
  route('GET', 'accounts/:email', ({ world, params, query }) => mailboxState(world, params.email ?? '', query)),
  route('POST', 'accounts/:email/messages', ({ world, params, body }) => {
    if (body.raw === undefined && body.from === undefined) throw badRequest('from (or raw) is required');
    const msg = world.deliver(params.email ?? '', body as unknown as IncomingMessage);
    return { id: msg.id, threadId: msg.threadId, labelIds: msg.labelIds, historyId: String(msg.historyId) };
  }),
  route('PUT', 'accounts/:email/signature', ({ world, params, body }) => {
    if (typeof body.signature !== 'string') throw badRequest('signature (HTML) is required');
    world.getAccount(params.email ?? '').mailbox.signature = body.signature;
    return { signature: body.signature };
  }),
  route('POST', 'accounts/:email/labels', ({ world, params, body }) => {
    const mailbox = world.getAccount(params.email ?? '').mailbox;
    const add = world.resolveLabels(mailbox, (body.add as string[] | undefined) ?? [], true);
    const remove = world.resolveLabels(mailbox, (body.remove as string[] | undefined) ?? [], false);
    const messages = typeof body.threadId === 'string' ? [...mailbox.getThread(body.threadId)] : ((body.messageIds as string[] | undefined) ?? []).map((id) => mailbox.getMessage(id));
    for (const msg of messages) mailbox.modifyLabels(msg, add, remove);
    return { messages: messages.map((m) => ({ id: m.id, threadId: m.threadId, labelIds: m.labelIds })), historyId: String(mailbox.historyId) };
  }),
  route('PUT', 'accounts/:email/drafts/:id', ({ world, params, body }) => {
    const mailbox = world.getAccount(params.email ?? '').mailbox;
    const draft = mailbox.getDraft(params.id ?? '');
    const current = mailbox.getMessage(draft.messageId);
    if (typeof body.text !== 'string') throw badRequest('text is required');
    const raw = replaceBody(current.raw, body.text, typeof body.html === 'string' ? body.html : undefined);
    const updated = mailbox.updateDraft(draft.id, raw, current.threadId);
    return { id: updated.id, messageId: updated.messageId, threadId: mailbox.getMessage(updated.messageId).threadId };
  }),
  route('POST', 'accounts/:email/drafts/:id/send', ({ world, params }) => {
    const sent = world.sendDraft(world.getAccount(params.email ?? ''), params.id ?? '');
    return { id: sent.id, threadId: sent.threadId, labelIds: sent.labelIds };
  }),
  route('DELETE', 'accounts/:email/drafts/:id', ({ world, params }) => {
    world.getAccount(params.email ?? '').mailbox.deleteDraft(params.id ?? '');
    return {};
  }),
  route('POST', 'accounts/:email/revoke', ({ world, params }) => ({ revoked: world.oauth.revoke(world.getAccount(params.email ?? '').email) })),
  route('POST', 'accounts/:email/history/expire', ({ world, params }) => {
    const mailbox = world.getAccount(params.email ?? '').mailbox;
    mailbox.expireHistory();
    return { historyFloor: String(mailbox.history.floor) };
  }),
  route('POST', 'accounts/:email/seed', ({ world, params, body }) =>
    world.seed(params.email ?? '', { seed: Number(body.seed ?? 1), count: Number(body.count ?? 100), spanDays: Number(body.spanDays ?? 30) }),
  ),
  route('POST', 'accounts/:email/import', ({ world, params, body }) => {
    if (body.format !== 'eml' && body.format !== 'mbox') throw badRequest('format must be "eml" or "mbox"');
    if (typeof body.dataBase64 !== 'string') throw badRequest('dataBase64 is required');
    const result = world.importMessages(params.email ?? '', {
      format: body.format,
      data: Buffer.from(body.dataBase64, 'base64'),
      ...(Array.isArray(body.labelIds) ? { labelIds: body.labelIds as string[] } : {}),
    });
    return { imported: result.messages.length, skipped: result.skipped };
  }),
];

export async function handleControl(httpMethod: string, segments: string[], call: Omit<ControlCall, 'params'>): Promise<unknown> {
  for (const candidate of CONTROL_ROUTES) {
    if (candidate.httpMethod !== httpMethod || candidate.segments.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    candidate.segments.forEach((pattern, i) => {
      const actual = segments[i] as string;
      if (pattern.startsWith(':')) params[pattern.slice(1)] = actual;
      else if (pattern !== actual) ok = false;
    });
    if (ok) return candidate.handle({ ...call, params });
  }
  throw notFound(`No control route ${httpMethod} /__emulator/${segments.join('/')}`);
}
