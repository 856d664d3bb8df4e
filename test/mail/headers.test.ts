import { describe, expect, it } from 'vitest';
import { domainOf, headerValue, htmlToText, parseAddress, parseAddressList, senderOf } from '../../src/mail/headers.js';

describe('address parsing', () => {
  it.each([
    ['Jane Doe <Jane@Example.com>', { name: 'Jane Doe', address: 'jane@example.com' }],
    ['"Doe, Jane" <jane@example.com>', { name: 'Doe, Jane', address: 'jane@example.com' }],
    ['"Say \\"hi\\"" <hi@example.com>', { name: 'Say "hi"', address: 'hi@example.com' }],
    ['<bare@example.com>', { address: 'bare@example.com' }],
    ['bare@example.com', { address: 'bare@example.com' }],
    ['bare@example.com (Bare Name)', { name: 'Bare Name', address: 'bare@example.com' }],
    ['Zoë Müller <zoe@example.de>', { name: 'Zoë Müller', address: 'zoe@example.de' }],
  ])('%s', (raw, expected) => {
    expect(parseAddress(raw)).toEqual(expected);
  });

  it.each(['', 'Undisclosed recipients:;', 'Jane <not-an-address>', 'two@@ats.com'])('no address in %j', (raw) => {
    expect(parseAddress(raw)).toBeNull();
  });

  it('splits address lists outside quotes and angle brackets', () => {
    expect(parseAddressList('"Doe, Jane" <jane@x.test>, bob@y.test,  <c@z.test>,').map((a) => a.address)).toEqual([
      'jane@x.test',
      'bob@y.test',
      'c@z.test',
    ]);
  });

  it('sender and domain', () => {
    expect(senderOf('Jane <jane@Mail.Example.com>')).toEqual({
      address: 'jane@mail.example.com',
      domain: 'mail.example.com',
    });
    expect(senderOf('nobody')).toEqual({ address: '', domain: '' });
    expect(domainOf('x@Y.test')).toBe('y.test');
  });
});

describe('headers and html', () => {
  it('looks headers up case-insensitively', () => {
    expect(headerValue({ 'list-unsubscribe': '<x>' }, 'List-Unsubscribe')).toBe('<x>');
    expect(headerValue({ Precedence: 'bulk' }, 'precedence')).toBe('bulk');
    expect(headerValue({}, 'x')).toBeUndefined();
  });

  it('renders the HTML of a typed draft as text', () => {
    expect(htmlToText('<div>a &amp; b</div><div><br></div><p>c&#39;s &#x263A;</p><style>p{}</style>')).toBe(
      "a & b\n\n\nc's ☺\n",
    );
  });
});
