import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { deriveApprovalKeys } from '../../src/actions/approval-links.js';
import {
  csrfToken,
  csrfTokenValid,
  newSession,
  originAllowed,
  SESSION_COOKIE,
  sessionCookie,
  sessionOf,
} from '../../src/http/approvals-csrf.js';

const keys = deriveApprovalKeys('a-test-secret-of-at-least-32-characters!');
const link = { actionId: '0190f1d2-3c4b-7a5e-8f60-112233445566', exp: 1_800_000_000 };
const request = (headers: IncomingMessage['headers']) => ({ headers }) as IncomingMessage;

describe('CSRF tokens', () => {
  it('are valid for the session and the link they were made for, and nothing else', () => {
    const session = newSession();
    const token = csrfToken(keys.csrf, session, link);
    expect(csrfTokenValid(keys.csrf, session, link, token)).toBe(true);

    expect(csrfTokenValid(keys.csrf, newSession(), link, token)).toBe(false);
    expect(csrfTokenValid(keys.csrf, undefined, link, token)).toBe(false);
    expect(csrfTokenValid(keys.csrf, session, { ...link, actionId: '0190f1d2-3c4b-7a5e-8f60-665544332211' }, token)).toBe(false);
    expect(csrfTokenValid(keys.csrf, session, { ...link, exp: link.exp + 1 }, token)).toBe(false);
    expect(csrfTokenValid(keys.csrf, session, link, null)).toBe(false);
    expect(csrfTokenValid(keys.csrf, session, link, '')).toBe(false);
    expect(csrfTokenValid(keys.csrf, session, link, `${token}x`)).toBe(false);
  });

  it('cannot be made with the link key, nor from the link signature', () => {
    const session = newSession();
    expect(csrfTokenValid(keys.csrf, session, link, csrfToken(keys.link, session, link))).toBe(false);
  });
});

describe('the session cookie', () => {
  it('is HttpOnly and SameSite=Strict, limited to the approvals path, Secure over https', () => {
    const session = newSession();
    expect(sessionCookie(session, { path: '/approvals', secure: false })).toBe(`${SESSION_COOKIE}=${session}; Path=/approvals; HttpOnly; SameSite=Strict`);
    expect(sessionCookie(session, { path: '/app/approvals', secure: true })).toMatch(/; Path=\/app\/approvals; HttpOnly; SameSite=Strict; Secure$/);
  });

  it('is read from the Cookie header among others, and ignored when malformed', () => {
    const session = newSession();
    expect(sessionOf(request({ cookie: `theme=dark; ${SESSION_COOKIE}=${session}; x=1` }))).toBe(session);
    expect(sessionOf(request({ cookie: `${SESSION_COOKIE}=short` }))).toBeUndefined();
    expect(sessionOf(request({}))).toBeUndefined();
  });
});

describe('the Origin check', () => {
  it('lets requests without Origin through, and same-origin ones', () => {
    expect(originAllowed(request({ host: '127.0.0.1:3000' }), 'http://127.0.0.1:3000')).toBe(true);
    expect(originAllowed(request({ host: '127.0.0.1:3000', origin: 'http://127.0.0.1:3000' }), 'http://127.0.0.1:3000')).toBe(true);
    // Behind a proxy: the public origin, whatever Host the app saw.
    expect(originAllowed(request({ host: 'app:3000', origin: 'https://inbox.example.com' }), 'https://inbox.example.com/app')).toBe(true);
  });

  it('refuses another origin, and the opaque "null" one', () => {
    expect(originAllowed(request({ host: '127.0.0.1:3000', origin: 'https://evil.example' }), 'http://127.0.0.1:3000')).toBe(false);
    expect(originAllowed(request({ host: '127.0.0.1:3000', origin: 'null' }), 'http://127.0.0.1:3000')).toBe(false);
    expect(originAllowed(request({ host: '127.0.0.1:3000', origin: 'http://127.0.0.1:3001' }), 'http://127.0.0.1:3000')).toBe(false);
  });
});
