// CSRF protection for the approvals page's forms. Each form carries a token: an HMAC (its own key)
// of the action's link and of the browser's session, a random value in an HttpOnly, SameSite=Strict
// cookie. Another site can neither read the token nor make the browser send the cookie with its
// POST; a POST whose Origin is not ours is refused before that.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { SignedLink } from '../actions/approval-links.js';

export const SESSION_COOKIE = 'approvals_session';

export function newSession(): string {
  return randomBytes(18).toString('base64url');
}

/** The session cookie, for the approvals paths only; Secure when the page is served over https. */
export function sessionCookie(session: string, opts: { path: string; secure: boolean }): string {
  return `${SESSION_COOKIE}=${session}; Path=${opts.path}; HttpOnly; SameSite=Strict${opts.secure ? '; Secure' : ''}`;
}

export function sessionOf(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === SESSION_COOKIE && value && /^[A-Za-z0-9_-]{24}$/.test(value)) return value;
  }
  return undefined;
}

function mac(csrfKey: Buffer, session: string, link: Pick<SignedLink, 'actionId' | 'exp'>): Buffer {
  return createHmac('sha256', csrfKey).update(`approval-csrf\n${session}\n${link.actionId}\n${link.exp}`).digest();
}

export function csrfToken(csrfKey: Buffer, session: string, link: Pick<SignedLink, 'actionId' | 'exp'>): string {
  return mac(csrfKey, session, link).toString('base64url');
}

export function csrfTokenValid(
  csrfKey: Buffer,
  session: string | undefined,
  link: Pick<SignedLink, 'actionId' | 'exp'>,
  token: string | undefined | null,
): boolean {
  if (!session || !token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return false;
  return timingSafeEqual(Buffer.from(token, 'base64url'), mac(csrfKey, session, link));
}

/**
 * A POST's Origin, when the browser sends one, must be the app's: its public base URL's, or the
 * Host the request came to. Browsers send Origin on every cross-site POST.
 */
export function originAllowed(req: IncomingMessage, publicBaseUrl: string): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  const allowed = new Set([new URL(publicBaseUrl).origin]);
  if (req.headers.host) {
    allowed.add(`http://${req.headers.host}`);
    allowed.add(`https://${req.headers.host}`);
  }
  return allowed.has(origin);
}
