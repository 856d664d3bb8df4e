import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../src/llm/redact.js';

describe('redactSecrets', () => {
  it('removes card numbers that pass the Luhn check, grouped or not, and leaves other long numbers', () => {
    expect(redactSecrets('Card: 4111 1111 1111 1111, exp 12/29')).toBe('Card: [card number removed], exp 12/29');
    expect(redactSecrets('card 5500-0000-0000-0004 please')).toBe('card [card number removed] please');
    expect(redactSecrets('order 4111111111111112 shipped')).toBe('order 4111111111111112 shipped'); // fails Luhn
    expect(redactSecrets('call +44 20 7946 0958 or ref 2026-11-22')).toBe('call +44 20 7946 0958 or ref 2026-11-22');
  });

  it('removes private keys and tokens with known prefixes', () => {
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----';
    expect(redactSecrets(`key:\n${pem}\nthanks`)).toBe('key:\n[private key removed]\nthanks');
    expect(redactSecrets('AWS AKIAIOSFODNN7EXAMPLE and ghp_' + 'a'.repeat(36))).toBe('AWS [secret removed] and [secret removed]');
    expect(redactSecrets('use sk-ant-api03-' + 'x'.repeat(30) + ' or xoxb-1234567890-abc')).toBe('use [secret removed] or [secret removed]');
    expect(redactSecrets('stripe sk_live_' + '9'.repeat(24))).toBe('stripe [secret removed]');
  });

  it('keeps the word and removes the value of passwords, PINs and one-time codes', () => {
    expect(redactSecrets('Login: jane\nPassword: hunter2!\nPIN = 1234')).toBe('Login: jane\nPassword: [removed]\nPIN = [removed]');
    expect(redactSecrets('Your verification code is 482913.')).toBe('Your verification code is [code removed].');
    expect(redactSecrets('Use login code: 5512 to sign in')).toBe('Use login code: [code removed] to sign in');
  });

  it('leaves ordinary mail alone', () => {
    const mail = 'Hi Alice,\n\nThe meeting is on 3 December at 10:00, room 4012. Invoice 2026-0042 is attached.\n\nBest, Bob';
    expect(redactSecrets(mail)).toBe(mail);
  });
});
