// Reading how a message says it can be unsubscribed from: the sender's headers are a stranger's text.
import { describe, expect, it } from 'vitest';
import { listUnsubscribeUris, mailtoUnsubscribe, unsubscribeMethodOf } from '../../src/mail/list-unsubscribe.js';

describe('List-Unsubscribe', () => {
  it('reads the <uri> entries in order, folded white space dropped', () => {
    expect(listUnsubscribeUris('<mailto:a@x.example?subject=bye>,\r\n <https://x.example/u?t=1>')).toEqual(['mailto:a@x.example?subject=bye', 'https://x.example/u?t=1']);
    expect(listUnsubscribeUris('https://no-brackets.example')).toEqual([]);
    expect(listUnsubscribeUris(undefined)).toEqual([]);
  });

  it('one-click only with List-Unsubscribe-Post and an https URI, not when DKIM failed', () => {
    const headers = { 'list-unsubscribe': '<mailto:a@x.example>, <https://x.example/u>', 'list-unsubscribe-post': 'List-Unsubscribe=One-Click' };
    expect(unsubscribeMethodOf(headers)).toEqual({ method: 'one_click', uri: 'https://x.example/u' });
    expect(unsubscribeMethodOf({ ...headers, 'authentication-results': 'mx.google.com; dkim=fail header.i=@x.example' })).toMatchObject({ method: 'mailto', to: 'a@x.example' });
    expect(unsubscribeMethodOf({ 'list-unsubscribe': '<mailto:a@x.example>, <https://x.example/u>' })).toMatchObject({ method: 'mailto' });
    // An http: link alone is never followed: nothing to do.
    expect(unsubscribeMethodOf({ 'list-unsubscribe': '<http://x.example/u>', 'list-unsubscribe-post': 'List-Unsubscribe=One-Click' })).toBeUndefined();
  });

  it('a mailto: goes to one plain address only, its subject and body capped and on one line', () => {
    expect(mailtoUnsubscribe('mailto:leave@x.example?subject=remove%0d%0aBcc:%20v@y.example&body=stop')).toEqual({
      method: 'mailto',
      uri: 'mailto:leave@x.example?subject=remove%0d%0aBcc:%20v@y.example&body=stop',
      to: 'leave@x.example',
      subject: 'remove Bcc: v@y.example',
      body: 'stop',
    });
    expect(mailtoUnsubscribe('mailto:a@x.example,b@y.example')).toBeUndefined();
    expect(mailtoUnsubscribe('mailto:%22a%20b%22@x.example')).toBeUndefined();
    expect(mailtoUnsubscribe('mailto:leave@x.example')).toMatchObject({ subject: 'unsubscribe', body: 'unsubscribe' });
  });
});
