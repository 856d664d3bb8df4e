import { describe, expect, it } from 'vitest';
import { headerValue, htmlToText } from '../../src/mail/headers.js';

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
