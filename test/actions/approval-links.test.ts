import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  approvalLink,
  deriveApprovalKeys,
  operatorTokenMatches,
  resolveApprovalKeys,
  signLink,
  verifyLink,
} from '../../src/actions/approval-links.js';
import { ConfigError } from '../../src/shared/config-error.js';

const keys = deriveApprovalKeys('a-test-secret-of-at-least-32-characters!');
const ACTION = '0190f1d2-3c4b-7a5e-8f60-112233445566';
const OTHER = '0190f1d2-3c4b-7a5e-8f60-665544332211';
const NOW = Date.parse('2026-11-23T10:00:00Z');
const HOUR = 3600_000;

function parts(url: string) {
  const u = new URL(url);
  return { actionId: u.pathname.split('/').pop()!, exp: u.searchParams.get('exp'), sig: u.searchParams.get('sig') };
}

describe('approval links', () => {
  it('carry only the action id, the expiry and the signature, and verify until they expire', () => {
    const url = approvalLink(keys, 'https://inbox.example.com/app', ACTION, 2 * HOUR, NOW);
    const u = new URL(url);
    expect(u.origin + u.pathname).toBe(`https://inbox.example.com/app/approvals/a/${ACTION}`);
    expect([...u.searchParams.keys()]).toEqual(['exp', 'sig']);
    expect(u.searchParams.get('exp')).toBe(String((NOW + 2 * HOUR) / 1000));

    expect(verifyLink(keys, parts(url), NOW)).toMatchObject({ ok: true, link: { actionId: ACTION, exp: (NOW + 2 * HOUR) / 1000 } });
    expect(verifyLink(keys, parts(url), NOW + 2 * HOUR - 1000).ok).toBe(true);
  });

  it('refuse an expired link', () => {
    const link = parts(approvalLink(keys, 'http://127.0.0.1:3000', ACTION, HOUR, NOW));
    expect(verifyLink(keys, link, NOW + HOUR)).toEqual({ ok: false, why: 'expired' });
    expect(verifyLink(keys, link, NOW + 30 * 24 * HOUR)).toEqual({ ok: false, why: 'expired' });
  });

  it('refuse a tampered signature, and a moved expiry as forged rather than expired', () => {
    const link = parts(approvalLink(keys, 'http://127.0.0.1:3000', ACTION, HOUR, NOW));
    const flipped = link.sig!.slice(0, 10) + (link.sig![10] === 'A' ? 'B' : 'A') + link.sig!.slice(11);
    expect(verifyLink(keys, { ...link, sig: flipped }, NOW)).toEqual({ ok: false, why: 'bad signature' });
    expect(verifyLink(keys, { ...link, exp: String(Number(link.exp) + 24 * 3600) }, NOW)).toEqual({ ok: false, why: 'bad signature' });
    // An expired link whose expiry was pushed back stays refused.
    expect(verifyLink(keys, { ...link, exp: String(Number(link.exp) + 24 * 3600) }, NOW + 2 * HOUR)).toEqual({ ok: false, why: 'bad signature' });
  });

  it('refuse the signature of one action on another', () => {
    const link = parts(approvalLink(keys, 'http://127.0.0.1:3000', ACTION, HOUR, NOW));
    expect(verifyLink(keys, { ...link, actionId: OTHER }, NOW)).toEqual({ ok: false, why: 'bad signature' });
    expect(verifyLink(keys, { ...link, actionId: ACTION.toUpperCase() }, NOW)).toEqual({ ok: false, why: 'malformed' });
  });

  it('refuse links signed with another secret', () => {
    const other = deriveApprovalKeys('another-secret-of-at-least-32-characters');
    const link = parts(approvalLink(other, 'http://127.0.0.1:3000', ACTION, HOUR, NOW));
    expect(verifyLink(keys, link, NOW)).toEqual({ ok: false, why: 'bad signature' });
  });

  it.each([
    ['no signature', { sig: null }],
    ['no expiry', { exp: null }],
    ['an expiry that is not a number', { exp: '1e12' }],
    ['a short signature', { sig: 'abc' }],
    ['a path that is not an action id', { actionId: `${ACTION}/x` }],
    ['an empty action id', { actionId: '' }],
  ])('refuse a link with %s as malformed', (_, change) => {
    const link = parts(approvalLink(keys, 'http://127.0.0.1:3000', ACTION, HOUR, NOW));
    expect(verifyLink(keys, { ...link, ...change }, NOW)).toEqual({ ok: false, why: 'malformed' });
  });

  it('sign only action ids', () => {
    expect(() => signLink(keys, 'Subject: lunch?', NOW)).toThrow(/not an action id/);
  });

  it('use separate keys for signatures and CSRF tokens', () => {
    expect(keys.link.equals(keys.csrf)).toBe(false);
    expect(deriveApprovalKeys('a-test-secret-of-at-least-32-characters!').link.equals(keys.link)).toBe(true);
  });
});

describe('the operator token', () => {
  it('matches only itself, and nothing when none is configured', () => {
    expect(operatorTokenMatches('operator-token-0123456789', 'operator-token-0123456789')).toBe(true);
    expect(operatorTokenMatches('operator-token-0123456789', 'operator-token-012345678')).toBe(false);
    expect(operatorTokenMatches('operator-token-0123456789', null)).toBe(false);
    expect(operatorTokenMatches(undefined, '')).toBe(false);
    expect(operatorTokenMatches(undefined, 'anything')).toBe(false);
  });
});

describe('resolveApprovalKeys', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'approval-keys-test-'));
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('uses APPROVALS_SECRET when set', async () => {
    const secret = 'configured-secret-of-at-least-32-chars';
    const resolved = await resolveApprovalKeys({ APPROVALS_SECRET: secret, TOKEN_ENCRYPTION_KEY: undefined, DURABLE_INBOX_MODE: 'production' }, { dataDir });
    expect(resolved).toEqual(deriveApprovalKeys(secret));
  });

  it('in dev mode derives stable keys from the local token key, so links survive a restart', async () => {
    const cfg = { APPROVALS_SECRET: undefined, TOKEN_ENCRYPTION_KEY: undefined, DURABLE_INBOX_MODE: 'dev' as const };
    const first = await resolveApprovalKeys(cfg, { dataDir });
    const link = parts(approvalLink(first, 'http://127.0.0.1:3000', ACTION, HOUR, NOW));
    const restarted = await resolveApprovalKeys(cfg, { dataDir });
    expect(verifyLink(restarted, link, NOW).ok).toBe(true);

    const elsewhere = await mkdtemp(join(tmpdir(), 'approval-keys-test-'));
    try {
      expect(verifyLink(await resolveApprovalKeys(cfg, { dataDir: elsewhere }), link, NOW).ok).toBe(false);
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('in production without APPROVALS_SECRET is a configuration error', async () => {
    await expect(
      resolveApprovalKeys({ APPROVALS_SECRET: undefined, TOKEN_ENCRYPTION_KEY: 'x'.repeat(44), DURABLE_INBOX_MODE: 'production' }, { dataDir }),
    ).rejects.toThrow(ConfigError);
  });
});
