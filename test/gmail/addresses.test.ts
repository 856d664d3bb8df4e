// The one reading of addresses (src/gmail/addresses.ts, on the email-addresses grammar): ordinary
// shapes, and the hostile ones a sender uses to pass for someone else.
import { describe, expect, it } from 'vitest';
import { canonicalAddress, formatAddress, parseAddressList, parseSender, sameAddress, senderAddress } from '../../src/gmail/addresses.js';
import { replyRecipients } from '../../src/gmail/mime.js';

const b64 = (text: string) => `=?UTF-8?B?${Buffer.from(text).toString('base64')}?=`;

describe('the sender of a From header', () => {
  it.each([
    ['Jane Doe <Jane@Example.com>', { name: 'Jane Doe', address: 'jane@example.com' }],
    ['"Doe, Jane" <jane@example.com>', { name: 'Doe, Jane', address: 'jane@example.com' }],
    ['Doe, Jane <jane@example.com>', { name: 'Doe, Jane', address: 'jane@example.com' }],
    ['"Say \\"hi\\"" <hi@example.com>', { name: 'Say "hi"', address: 'hi@example.com' }],
    ['<bare@example.com>', { address: 'bare@example.com' }],
    ['bare@example.com', { address: 'bare@example.com' }],
    ['bare@example.com (Bare Name)', { name: 'Bare Name', address: 'bare@example.com' }],
    ['John Q. Public <jqp@example.com>', { name: 'John Q. Public', address: 'jqp@example.com' }],
    ['Zoë Müller <zoe@example.de>', { name: 'Zoë Müller', address: 'zoe@example.de' }],
    ['=?UTF-8?Q?Zo=C3=AB?= <zoe@example.de>', { name: 'Zoë', address: 'zoe@example.de' }],
    ['Jane\r\n Doe <jane@example.com>', { name: 'Jane Doe', address: 'jane@example.com' }],
    ['Shop <info@BÜCHER.example>', { name: 'Shop', address: 'info@xn--bcher-kva.example' }],
  ])('%s', (raw, expected) => {
    expect(parseSender(raw)).toEqual(expected);
  });

  it.each([
    ['the display name holds an address', '"<alice.martin@example.com>" <mallory@evil.example>'],
    ['an encoded display name holds an address', `${b64('<alice.martin@example.com>')} <mallory@evil.example>`],
    ['a quoted encoded display name holds an address', `"${b64('Alice <alice.martin@example.com>')}" <mallory@evil.example>`],
    ['an unquoted display name is an address', 'alice.martin@example.com <mallory@evil.example>'],
    ['a bidi override turns the name around', '"\u202Emoc.elpmaxe@nitram.ecila" <mallory@evil.example>'],
  ])('%s: the address is mallory\'s, the name only a name', (_, raw) => {
    const sender = parseSender(raw);
    expect(sender?.address).toBe('mallory@evil.example');
    expect(senderAddress(raw)).toBe('mallory@evil.example');
  });

  it('decodes an encoded display name after the structure is read: its "<", "@" and "," stay in the name', () => {
    const name = 'Martin, Alice <alice.martin@example.com>';
    expect(parseSender(`${b64(name)} <mallory@evil.example>`)).toEqual({ name, address: 'mallory@evil.example' });
    expect(parseAddressList(`${b64(name)} <mallory@evil.example>`)).toHaveLength(1);
  });

  it.each([
    ['no address', 'foo'],
    ['empty', ''],
    ['the null reverse path', 'MAILER DAEMON <>'],
    ['a bare null path', '<>'],
    ['two addresses', 'Alice <alice.martin@example.com>, Mallory <mallory@evil.example>'],
    ['a group', 'Friends: alice.martin@example.com, mallory@evil.example;'],
    ['an empty group', 'undisclosed-recipients:;'],
    ['two angle addresses', 'Mallory <mallory@evil.example> <alice.martin@example.com>'],
    ['an angle address run into another', '<alice.martin@example.com>mallory@evil.example'],
    ['two bare addresses', 'alice.martin@example.com mallory@evil.example'],
    ['a quoted local part holding an "@"', '"alice.martin@example.com"@evil.example'],
    ['two "@"', 'alice.martin@example.com@evil.example'],
    ['a domain literal', 'root@[127.0.0.1]'],
    ['a comment holds an address', 'mallory@evil.example (alice.martin@example.com)'],
    ['a comment holds an angle address', 'alice.martin@example.com (x <mallory@evil.example>)'],
    // What Gmail hands over for `=?UTF-8?B?<base64 of "alice.martin@example.com (">?= <mallory@evil.example>)`.
    ['an encoded name decoded into a comment', 'alice.martin@example.com ( <mallory@evil.example>)'],
    // And for an encoded name `<alice.martin@example.com>` or `Martin, Alice <alice.martin@example.com>`.
    ['an encoded name decoded into an angle address', '<alice.martin@example.com> <mallory@evil.example>'],
    ['an encoded name decoded into a list', 'Martin, Alice <alice.martin@example.com> <mallory@evil.example>'],
  ])('%s: no single sender', (_, raw) => {
    expect(parseSender(raw)).toBeNull();
    expect(senderAddress(raw)).toBe('');
  });

  it.each([
    // As Gmail hands them over (encoded words decoded), and as written.
    ['a bell and an ANSI colour', '\u0007Alice\u001b[31m Martin <alice.martin@example.com>'],
    ['a bell and an ANSI colour, Q-encoded', '=?UTF-8?Q?=07Alice=1B[31m_Martin?= <alice.martin@example.com>'],
    ['a bell and an ANSI colour, properly Q-encoded', '=?UTF-8?Q?=07Alice=1B=5B31m_Martin?= <alice.martin@example.com>'],
    ['a bell and an ANSI colour, quoted', '"\u0007Alice\u001b[31m Martin\u001b[0m" <alice.martin@example.com>'],
    ['a terminal title sequence', 'Alice \u001b]0;owned\u0007Martin <alice.martin@example.com>'],
    ['NUL and C1 controls', 'Alice\u0000 Martin\u0085\u009b <alice.martin@example.com>'],
    ['an encoded CR/LF', 'Alice\r\n Martin <alice.martin@example.com>'],
    ['an encoded CR/LF, as written', '=?UTF-8?Q?Alice=0D=0A_Martin?= <alice.martin@example.com>'],
  ])('%s in the display name: shown without them, the address kept', (_, raw) => {
    const warnings: string[] = [];
    expect(parseSender(raw, warnings)).toEqual({ name: 'Alice Martin', address: 'alice.martin@example.com' });
    expect(warnings).toEqual([]);
  });

  it('control characters never make mallory alice', () => {
    expect(parseSender('alice.martin@example.com\u0007 <mallory@evil.example>')?.address).toBe('mallory@evil.example');
    expect(parseSender('\u001b[31m<alice.martin@example.com>\u001b[0m <mallory@evil.example>')).toBeNull();
    expect(parseSender(`${b64('\u0007<alice.martin@example.com>')} <mallory@evil.example>`)).toEqual({
      name: '<alice.martin@example.com>',
      address: 'mallory@evil.example',
    });
  });

  it('two From headers give no single sender, even when both name one address', () => {
    expect(parseSender(['alice.martin@example.com', 'mallory@evil.example'])).toBeNull();
    expect(parseSender(['alice.martin@example.com', 'alice.martin@example.com'])).toBeNull();
    expect(parseSender(['alice.martin@example.com'])).toEqual({ address: 'alice.martin@example.com' });
  });

  it('reads a crafted long or deeply nested header quickly, as no address', () => {
    const warnings: string[] = [];
    const started = performance.now();
    for (const raw of ['a '.repeat(150_000), '('.repeat(30_000), `${'(a) '.repeat(240)}<`, `"${'\\"'.repeat(200_000)}" <a@b.example>`]) {
      expect(parseSender(raw, warnings)).toBeNull();
    }
    expect(performance.now() - started).toBeLessThan(2000);
    expect(warnings.join(' ')).toMatch(/not read/);
  });
});

describe('address lists', () => {
  it('flattens groups, keeps comment names, decodes encoded names with commas', () => {
    const value =
      '"Doe, Jane" <jane@example.com>, =?UTF-8?Q?M=C3=BCller=2C_Hans?= <hans@example.de>, Team: a@example.com, b@example.com;, c@example.com (Carol C), undisclosed-recipients:;';
    expect(parseAddressList(value)).toEqual([
      { name: 'Doe, Jane', address: 'jane@example.com' },
      { name: 'Müller, Hans', address: 'hans@example.de' },
      { address: 'a@example.com' },
      { address: 'b@example.com' },
      { name: 'Carol C', address: 'c@example.com' },
    ]);
  });

  it('gives nothing for a header it cannot read, with a warning: it never guesses', () => {
    const warnings: string[] = [];
    expect(parseAddressList('not an address, <>, ok@example.com', warnings)).toEqual([]);
    expect(warnings).toHaveLength(1);
  });

  it('compares addresses by case and IDNA form', () => {
    expect(sameAddress('Alice@Bücher.Example', 'alice@xn--bcher-kva.example')).toBe(true);
    expect(sameAddress('alice@example.com', 'alice@example.com.evil.example')).toBe(false);
    expect(canonicalAddress('"a b"@example.com')).toBe('');
  });
});

describe('who a reply goes to', () => {
  const from = parseSender('Alice <alice.martin@example.com>');
  it('Reply-To wins over From, every address of it, each once', () => {
    const replyTo = parseAddressList('Mallory <mallory@evil.example>, team: alice.martin@example.com, MALLORY@evil.example;');
    expect(replyRecipients({ from, to: [], replyTo }, 'me@example.org').map((a) => a.address)).toEqual([
      'mallory@evil.example',
      'alice.martin@example.com',
    ]);
  });

  it('no single sender and no Reply-To: nobody', () => {
    expect(replyRecipients({ from: parseSender('a@example.com, b@example.com'), to: [], replyTo: [] }, 'me@example.org')).toEqual([]);
  });

  it('writes a display name that could read as an address quoted, so it stays a name', () => {
    expect(formatAddress({ name: '<alice.martin@example.com>', address: 'mallory@evil.example' })).toBe('"<alice.martin@example.com>" <mallory@evil.example>');
    expect(parseSender(formatAddress({ name: 'Martin, Alice <alice.martin@example.com>', address: 'mallory@evil.example' }))?.address).toBe('mallory@evil.example');
  });
});
