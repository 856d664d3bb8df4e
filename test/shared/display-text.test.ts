// Text from mail shown to a person: no control characters, no bidi tricks, no forged lines.
import { describe, expect, it } from 'vitest';
import { displaySafe } from '../../src/shared/display-text.js';
import { escapeHtml } from '../../src/http/approvals-page.js';

describe('displaySafe', () => {
  it('drops bidi overrides, isolates and marks, so an address reads as it is', () => {
    expect(displaySafe('\u202Emoc.elpmaxe@ecila\u202C <mallory@evil.example>')).toBe('moc.elpmaxe@ecila <mallory@evil.example>');
    expect(displaySafe('a\u2066b\u2067c\u2068d\u2069e\u200Ef\u200Fg\u061Ch\u202Ai\u202Bj\u202Dk')).toBe('abcdefghijk');
  });

  it('drops terminal escapes and other C0/C1 controls; a line break cannot forge a log line', () => {
    expect(displaySafe('ok\u001b[2J\u001b]0;title\u0007 done\u0085\u009b31m')).toBe('ok[2J]0;title done31m');
    expect(displaySafe('subject\r\n2025-01-01 INFO [approvals] approved')).toBe('subject 2025-01-01 INFO [approvals] approved');
    expect(displaySafe('line one\u2028line two')).toBe('line oneline two');
  });

  it('keeps line breaks and tabs of a multi-line text when asked, and every ordinary character', () => {
    expect(displaySafe('Hi,\r\n\tthanks!\nZoë 山田 😀', { multiline: true })).toBe('Hi,\n\tthanks!\nZoë 山田 😀');
  });

  it('is part of the page\'s escaping', () => {
    expect(escapeHtml('<b>\u202Eevil</b>')).toBe('&#60;b&#62;evil&#60;/b&#62;');
  });
});
