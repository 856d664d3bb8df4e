// The HTTP server: one node:http listener serving the Gmail API (/gmail/v1/...), Google's
// OAuth endpoints (/o/oauth2/v2/auth, /token, /revoke, certs, userinfo) and the control API
// (/__emulator/...). For Gmail calls it runs, in order: bearer auth, the Gmail API enabled in the
// client's project, userId check, scope check, quota admission, injected latency and errors, the
// handler, and metrics.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { handleControl } from './control-api.js';
import { accessNotConfigured, badRequest, forbidden, GmailApiError, missingCredentials, notFound, unauthenticated } from './errors.js';
import { matchGmailRoute } from './gmail-api.js';
import { projectNumberOf, scopesAllow, subjectId, type AccessTokenInfo } from './oauth.js';
import type { GmailWorld } from './world.js';

const MAX_BODY_BYTES = 50 * 1024 * 1024;
const GMAIL_PREFIX = '/gmail/v1/users/';

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (body === undefined) {
    res.writeHead(status === 200 ? 204 : status, headers);
    res.end();
    return;
  }
  const payload = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(payload), ...headers });
  res.end(payload);
}

function sendError(res: ServerResponse, err: unknown): number {
  if (err instanceof GmailApiError) {
    send(res, err.code, err.toBody(), err.headers);
    return err.code;
  }
  const internal = new GmailApiError(500, err instanceof Error ? `Internal error: ${err.message}` : 'Internal error', 'backendError');
  send(res, 500, internal.toBody());
  return 500;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new GmailApiError(413, 'Request payload size exceeds the limit', 'uploadTooLarge');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  if (req.method === 'GET' || req.method === 'DELETE' || req.method === 'HEAD') return {};
  const raw = await readBody(req);
  if (raw.length === 0) return {};
  try {
    const parsed: unknown = JSON.parse(raw.toString('utf8'));
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    throw badRequest(`Invalid JSON payload received. Unexpected token.`);
  }
}

/** The token's grant, or the 401 Google gives: "missing" without an Authorization header, "invalid" otherwise. */
function authenticate(world: GmailWorld, req: IncomingMessage): AccessTokenInfo {
  const auth = world.oauth.authenticate(req.headers.authorization);
  if (auth) return auth;
  throw req.headers.authorization ? unauthenticated() : missingCredentials();
}

/** OpenID userinfo: v3 (OpenID Connect claims) or v2 (the older field names). */
function userinfo(world: GmailWorld, auth: AccessTokenInfo, version: 'v2' | 'v3') {
  const name = world.findAccount(auth.email)?.name ?? '';
  const [givenName, ...rest] = name.split(' ');
  const names = { name, given_name: givenName ?? '', ...(rest.length > 0 ? { family_name: rest.join(' ') } : {}) };
  return version === 'v3'
    ? { sub: subjectId(auth.email), ...names, email: auth.email, email_verified: true }
    : { id: subjectId(auth.email), email: auth.email, verified_email: true, ...names };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function handleGmail(world: GmailWorld, req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void> {
  let rest: string[];
  try {
    rest = path.slice(GMAIL_PREFIX.length).split('/').map(decodeURIComponent);
  } catch {
    sendError(res, badRequest('Malformed URL path'));
    return;
  }
  const userId = rest.shift() ?? '';
  const match = matchGmailRoute(req.method ?? 'GET', rest);
  const method = match?.route.name ?? 'unknown';
  let status = 200;
  let units = 0;
  let release: (() => void) | undefined;
  let inFlight = false;
  try {
    const auth = authenticate(world, req);
    // The API must be enabled in the project of the client the token was issued to; Google checks this first.
    if (world.faults.gmailApiDisabled(auth.clientId)) throw accessNotConfigured(projectNumberOf(auth.clientId));
    if (userId !== 'me' && userId.toLowerCase() !== auth.email) throw forbidden(`Delegation denied for ${auth.email}`);
    if (!match) throw notFound(`Method not found: ${req.method} ${path}`);
    if (!scopesAllow(auth.scopes, match.route.scope)) throw new GmailApiError(403, 'Request had insufficient authentication scopes.', 'insufficientPermissions');
    const account = world.getAccount(auth.email);
    release = world.quota.admit(account.email, auth.clientId, method);
    // What Gmail would charge, counted with enforcement off too (the benchmarks read it).
    units = world.quota.cost(method);
    // The body is read first, as Gmail has it in full before it answers: a client that dies while
    // waiting for a slow answer has still made its change (a send goes out).
    const body = await readJson(req);
    world.metrics.begin(method);
    inFlight = true;
    const fault = world.faults.decide(method);
    if (fault.delayMs > 0) await sleep(fault.delayMs);
    if (fault.error) throw fault.error;
    const result = await match.route.handle({ world, account, mailbox: account.mailbox, params: match.params, query, body });
    status = result === undefined ? 204 : 200;
    send(res, status, result);
  } catch (err) {
    status = sendError(res, err);
  } finally {
    release?.();
    if (inFlight) world.metrics.end(method);
    world.metrics.record(method, units, status);
  }
}

async function handleOAuth(world: GmailWorld, req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<boolean> {
  switch (`${req.method} ${path}`) {
    case 'GET /o/oauth2/v2/auth':
    case 'GET /o/oauth2/auth': {
      const result = world.oauth.authorize(query, (hint) => world.consentAccount(hint));
      if ('redirect' in result) {
        res.writeHead(302, { location: result.redirect });
        res.end();
      } else {
        res.writeHead(result.status, { 'content-type': 'text/plain; charset=UTF-8' });
        res.end(result.error);
      }
      return true;
    }
    case 'POST /token':
    case 'POST /oauth2/v4/token': {
      const form = new URLSearchParams((await readBody(req)).toString('utf8'));
      const result = world.oauth.token(form, req.headers.authorization);
      send(res, result.status, result.body, { 'cache-control': 'no-cache, no-store, max-age=0, must-revalidate' });
      return true;
    }
    case 'POST /revoke':
    case 'GET /revoke': {
      const form = new URLSearchParams((await readBody(req)).toString('utf8'));
      const token = query.get('token') ?? form.get('token') ?? '';
      const revoked = world.oauth.revoke(token);
      if (revoked === 0) send(res, 400, { error: 'invalid_token', error_description: 'Token expired or revoked' });
      else send(res, 200, {});
      return true;
    }
    case 'GET /tokeninfo':
    case 'POST /tokeninfo': {
      // Google's tokeninfo (oauth2.googleapis.com/tokeninfo?access_token=): what a mail server's
      // OAuth passdb asks (the test Dovecot's oauth2 passdb).
      const form = req.method === 'POST' ? new URLSearchParams((await readBody(req)).toString('utf8')) : new URLSearchParams();
      const result = world.oauth.tokenInfo(query.get('access_token') ?? form.get('access_token') ?? '');
      send(res, result.status, result.body, { 'cache-control': 'no-cache, no-store, max-age=0, must-revalidate' });
      return true;
    }
    case 'GET /oauth2/v1/certs':
      send(res, 200, world.keys.pemCerts(), { 'cache-control': 'public, max-age=60' });
      return true;
    case 'GET /oauth2/v3/certs':
      send(res, 200, world.keys.jwks(), { 'cache-control': 'public, max-age=60' });
      return true;
    case 'GET /oauth2/v3/userinfo':
    case 'GET /oauth2/v2/userinfo':
      try {
        send(res, 200, userinfo(world, authenticate(world, req), path.includes('/v3/') ? 'v3' : 'v2'));
      } catch (err) {
        sendError(res, err);
      }
      return true;
    default:
      return false;
  }
}

/** `onChange` is called after every request that may have changed the world (all but GET and HEAD). */
export function createEmulatorServer(world: GmailWorld, baseUrl: () => string, onChange?: () => void): Server {
  return createServer((req, res) => {
    if (onChange && req.method !== 'GET' && req.method !== 'HEAD') res.once('finish', onChange);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    const work = async () => {
      if (path.startsWith(GMAIL_PREFIX)) return handleGmail(world, req, res, path, query);
      if (path.startsWith('/__emulator/')) {
        try {
          const body = await readJson(req);
          const segments = path.slice('/__emulator/'.length).split('/').map(decodeURIComponent);
          send(res, 200, await handleControl(req.method ?? 'GET', segments, { world, query, body, baseUrl: baseUrl() }));
        } catch (err) {
          sendError(res, err);
        }
        return;
      }
      if (await handleOAuth(world, req, res, path, query)) return;
      if (path === '/' || path === '/healthz') return send(res, 200, { status: 'ok', service: 'gmail-emulator' });
      sendError(res, notFound(`Not found: ${path}`));
    };
    work().catch((err: unknown) => {
      if (!res.headersSent) sendError(res, err);
      else res.destroy();
    });
  });
}
