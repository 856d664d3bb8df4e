// Signed, expiring links to one action on the approvals page, and the operator token of its list
// page. A link carries the action id, its expiry and an HMAC-SHA256 of both, nothing else: no mail
// content reaches a URL (and with it chat logs, browser history or a proxy's access log). Whoever
// holds an unexpired link may decide that one action; it goes only to the user's own channel.
import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { ConfigError } from '../shared/config-error.js';
import { resolveTokenKey, type KeySettings, type ResolvePayloadKeysOptions } from '../temporal/encryption-keys.js';

/** Two keys from the one secret: a leaked CSRF token says nothing about link signatures. */
export interface ApprovalKeys {
  link: Buffer;
  csrf: Buffer;
}

export function deriveApprovalKeys(secret: string | Buffer): ApprovalKeys {
  const ikm = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), info, 32));
  return { link: derive('durable-inbox approvals: link signature'), csrf: derive('durable-inbox approvals: csrf token') };
}

/**
 * APPROVALS_SECRET's keys; in dev mode without it, keys derived from the token key (generated into
 * .data/ on first use), so links posted before a restart still open after it.
 */
export async function resolveApprovalKeys(
  cfg: Pick<KeySettings, 'TOKEN_ENCRYPTION_KEY' | 'DURABLE_INBOX_MODE'> & { APPROVALS_SECRET?: string | undefined },
  opts: ResolvePayloadKeysOptions = {},
): Promise<ApprovalKeys> {
  if (cfg.APPROVALS_SECRET) return deriveApprovalKeys(cfg.APPROVALS_SECRET);
  if (cfg.DURABLE_INBOX_MODE !== 'dev') {
    // loadConfig already refuses this; kept for configs built by other means.
    throw new ConfigError('APPROVALS_SECRET: required when DURABLE_INBOX_MODE=production');
  }
  return deriveApprovalKeys(await resolveTokenKey(cfg, opts));
}

/** resolveApprovalKeys on first call, then the same keys; a failed read is tried again next call. */
export function approvalKeysOnce(cfg: Parameters<typeof resolveApprovalKeys>[0]): () => Promise<ApprovalKeys> {
  let keys: Promise<ApprovalKeys> | undefined;
  return () => {
    keys ??= resolveApprovalKeys(cfg);
    keys.catch(() => (keys = undefined));
    return keys;
  };
}

const ACTION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isActionId(value: string): boolean {
  return ACTION_ID.test(value);
}

export interface SignedLink {
  actionId: string;
  /** Expiry, in seconds since the epoch. */
  exp: number;
  sig: string;
}

function signature(keys: ApprovalKeys, actionId: string, exp: number): Buffer {
  return createHmac('sha256', keys.link).update(`approval-link\n${actionId}\n${exp}`).digest();
}

export function signLink(keys: ApprovalKeys, actionId: string, expiresAtMs: number): SignedLink {
  if (!isActionId(actionId)) throw new Error(`not an action id: ${JSON.stringify(actionId)}`);
  const exp = Math.floor(expiresAtMs / 1000);
  return { actionId, exp, sig: signature(keys, actionId, exp).toString('base64url') };
}

/** The page's path for one action, under the app's base URL (which may carry a path prefix). */
export function actionPath(actionId: string): string {
  return `/approvals/a/${actionId}`;
}

export function linkUrl(publicBaseUrl: string, link: SignedLink): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}${actionPath(link.actionId)}?exp=${link.exp}&sig=${link.sig}`;
}

/** A fresh link to an action, valid for `ttlMs`. */
export function approvalLink(keys: ApprovalKeys, publicBaseUrl: string, actionId: string, ttlMs: number, now = Date.now()): string {
  return linkUrl(publicBaseUrl, signLink(keys, actionId, now + ttlMs));
}

/**
 * A signed link to one lesson on the approvals page (src/http/lesson-routes.ts): the same key, its
 * own purpose in the MAC, so an action's link never opens a lesson or the other way round.
 */
export function signLessonLink(keys: ApprovalKeys, lessonId: string, expiresAtMs: number): SignedLink {
  if (!isActionId(lessonId)) throw new Error(`not a lesson id: ${JSON.stringify(lessonId)}`);
  const exp = Math.floor(expiresAtMs / 1000);
  return { actionId: lessonId, exp, sig: lessonSignature(keys, lessonId, exp).toString('base64url') };
}

/** A fresh link to one lesson on the approvals page, valid for `ttlMs` (Discord, the weekly mail). */
export function lessonLink(keys: ApprovalKeys, publicBaseUrl: string, lessonId: string, ttlMs: number, now = Date.now()): string {
  const link = signLessonLink(keys, lessonId, now + ttlMs);
  return `${publicBaseUrl.replace(/\/+$/, '')}/approvals/l/${lessonId}?exp=${link.exp}&sig=${link.sig}`;
}

function lessonSignature(keys: ApprovalKeys, lessonId: string, exp: number): Buffer {
  return createHmac('sha256', keys.link).update(`lesson-link\n${lessonId}\n${exp}`).digest();
}

/** Checks a lesson link as it came in; `actionId` of the result is the lesson's id. */
export function verifyLessonLink(
  keys: ApprovalKeys,
  input: { lessonId: string; exp: string | undefined | null; sig: string | undefined | null },
  now = Date.now(),
): LinkCheck {
  const { lessonId, exp, sig } = input;
  if (!isActionId(lessonId) || !exp || !/^\d{1,12}$/.test(exp) || !sig || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return { ok: false, why: 'malformed' };
  const expSeconds = Number(exp);
  if (!timingSafeEqual(Buffer.from(sig, 'base64url'), lessonSignature(keys, lessonId, expSeconds))) return { ok: false, why: 'bad signature' };
  if (expSeconds * 1000 <= now) return { ok: false, why: 'expired' };
  return { ok: true, link: { actionId: lessonId, exp: expSeconds, sig } };
}

export type LinkCheck = { ok: true; link: SignedLink } | { ok: false; why: 'malformed' | 'bad signature' | 'expired' };

/** Checks a link as it came in (strings from the URL or a form). The signature first: a changed expiry is forged, not expired. */
export function verifyLink(
  keys: ApprovalKeys,
  input: { actionId: string; exp: string | undefined | null; sig: string | undefined | null },
  now = Date.now(),
): LinkCheck {
  const { actionId, exp, sig } = input;
  if (!isActionId(actionId) || !exp || !/^\d{1,12}$/.test(exp) || !sig || !/^[A-Za-z0-9_-]{43}$/.test(sig)) {
    return { ok: false, why: 'malformed' };
  }
  const expSeconds = Number(exp);
  if (!timingSafeEqual(Buffer.from(sig, 'base64url'), signature(keys, actionId, expSeconds))) return { ok: false, why: 'bad signature' };
  if (expSeconds * 1000 <= now) return { ok: false, why: 'expired' };
  return { ok: true, link: { actionId, exp: expSeconds, sig } };
}

/** Whether `given` is the operator token; false when none is configured. Constant time in the token's content. */
export function operatorTokenMatches(expected: string | undefined, given: string | undefined | null): boolean {
  if (!expected || !given) return false;
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(expected), digest(given));
}
