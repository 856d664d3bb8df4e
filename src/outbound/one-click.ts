// The one request the product makes to a server a stranger named: the RFC 8058 one-click
// unsubscribe POST to the https URI of a List-Unsubscribe header. The URI is attacker-controlled, so
// the request is hostile ground: https only, no credentials in the URI, the connected address checked
// after DNS resolution inside the socket's lookup (request-filtering-agent: loopback, private,
// link-local, metadata, reserved and IPv4-mapped addresses refused, rebinding-safe), no redirect
// followed (RFC 8058 §3.1 forbids them), a short timeout, a capped answer, no cookies and nothing of
// the user's: the body is the fixed `List-Unsubscribe=One-Click` and the headers are ours alone.
import type { LookupFunction } from 'node:net';
import { request as httpsRequest, type Agent } from 'node:https';
import { RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { allowanceFor, type TestOnlyAllowance } from './test-allowance.js';

export const ONE_CLICK_BODY = 'List-Unsubscribe=One-Click';

export interface OneClickOptions {
  /** The whole exchange, connect to last byte (default 10 s). */
  timeoutMs?: number;
  /** The answer's body is read up to this many bytes; a longer one fails the request (default 64 KiB). */
  maxResponseBytes?: number;
  /** The DNS resolver (node's dns.lookup by default); whatever it answers is checked before connecting. */
  lookup?: LookupFunction;
  /** Tests only (src/outbound/test-allowance.ts): one loopback origin and its certificate. */
  testAllowance?: TestOnlyAllowance;
}

export type OneClickOutcome =
  /** The server answered 2xx: the unsubscribe is done. */
  | { outcome: 'done'; status: number }
  /** Never sent, or not followed: the target is not one we may talk to. Final. */
  | { outcome: 'refused'; reason: string }
  /** Sent, and it did not work; `retryable` says whether trying again later may help. */
  | { outcome: 'failed'; reason: string; retryable: boolean; status?: number };

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

/** Why a URI is no one-click target before anything is resolved; undefined when it may be tried. */
export function oneClickTargetProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'not a URI';
  }
  if (url.protocol !== 'https:') return `${url.protocol.replace(/:$/, '')}: is not https (one-click is https only)`;
  // node:https turns user:password@ into an Authorization header: nothing of the kind is sent.
  if (url.username !== '' || url.password !== '') return 'the URI carries credentials';
  if (uri.length > 2048) return 'the URI is longer than 2048 characters';
  return undefined;
}

/** Builds the client once (its agents hold the address checks); post() may be called concurrently. */
export function createOneClickClient(options: OneClickOptions = {}) {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  // keepAlive off: every POST is a fresh connection, so every one is checked at connect time.
  const strict = new RequestFilteringHttpsAgent({ keepAlive: false });
  const allowed = options.testAllowance ? allowanceFor(options.testAllowance) : undefined;

  function agentFor(url: URL): Agent {
    return allowed && allowed.covers(url) ? allowed.agent : strict;
  }

  async function post(uri: string): Promise<OneClickOutcome> {
    const problem = oneClickTargetProblem(uri);
    if (problem) return { outcome: 'refused', reason: problem };
    const url = new URL(uri);
    return new Promise<OneClickOutcome>((resolve) => {
      let settled = false;
      const settle = (outcome: OneClickOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        resolve(outcome);
      };
      const req = httpsRequest(
        url,
        {
          method: 'POST',
          agent: agentFor(url),
          ...(options.lookup ? { lookup: options.lookup } : {}),
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            'content-length': Buffer.byteLength(ONE_CLICK_BODY),
            'user-agent': 'durable-inbox one-click unsubscribe',
          },
        },
        (res) => {
          const status = res.statusCode ?? 0;
          if (status >= 300 && status < 400) {
            const to = res.headers.location ?? '(no location)';
            settle({ outcome: 'refused', reason: `answered ${status} to ${to.slice(0, 200)}: a one-click URI must not redirect, not followed` });
            return;
          }
          const declared = Number(res.headers['content-length'] ?? 0);
          if (declared > maxBytes) {
            settle({ outcome: 'failed', reason: `the answer declares ${declared} bytes, more than the cap of ${maxBytes}`, retryable: false, status });
            return;
          }
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > maxBytes) settle({ outcome: 'failed', reason: `the answer is longer than the cap of ${maxBytes} bytes`, retryable: false, status });
          });
          res.on('end', () => {
            if (status >= 200 && status < 300) settle({ outcome: 'done', status });
            else settle({ outcome: 'failed', reason: `answered ${status}`, retryable: status === 429 || status >= 500, status });
          });
          res.on('error', (err) => settle(networkFailure(err)));
        },
      );
      const timer = setTimeout(() => settle({ outcome: 'failed', reason: `no complete answer within ${timeoutMs} ms`, retryable: true }), timeoutMs);
      req.on('error', (err) => settle(networkFailure(err)));
      req.end(ONE_CLICK_BODY);
    });
  }

  return {
    post,
    close(): void {
      strict.destroy();
      allowed?.agent.destroy();
    },
  };
}

export type OneClickClient = ReturnType<typeof createOneClickClient>;

/** request-filtering-agent says "is not allowed" when it refused the address it resolved. */
function networkFailure(err: Error): OneClickOutcome {
  if (/is not allowed/.test(err.message)) return { outcome: 'refused', reason: `the address is not public: ${err.message}` };
  return { outcome: 'failed', reason: `network: ${err.message}`, retryable: true };
}
