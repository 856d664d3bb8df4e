// How a message says it can be unsubscribed from (RFC 2369 List-Unsubscribe, RFC 8058 one-click),
// read from its decoded headers. Pure. The headers are the sender's: every value is a stranger's
// text, so only the two methods the product uses are picked out, and never an http: link to GET.

/** The method an unsubscribe takes: the RFC 8058 POST, or a mail to the list's address. */
export type UnsubscribeMethod =
  | { method: 'one_click'; uri: string }
  | { method: 'mailto'; uri: string; to: string; subject: string; body: string };

export const ONE_CLICK_POST_VALUE = 'List-Unsubscribe=One-Click';

/** The `<uri>` entries of a List-Unsubscribe header, in the sender's order of preference (RFC 2369 §2). */
export function listUnsubscribeUris(value: string | undefined): string[] {
  if (!value) return [];
  const uris: string[] = [];
  for (const match of value.slice(0, 4096).matchAll(/<([^<>]{1,2048})>/g)) uris.push(match[1]!.replace(/\s+/g, ''));
  return uris;
}

/** A mailto: URI as an unsubscribe mail: one plain address, its subject and body (RFC 6068), or undefined. */
export function mailtoUnsubscribe(uri: string): Extract<UnsubscribeMethod, { method: 'mailto' }> | undefined {
  if (!/^mailto:/i.test(uri)) return undefined;
  const [target, query = ''] = uri.slice('mailto:'.length).split('?', 2) as [string, string?];
  let to: string;
  try {
    to = decodeURIComponent(target).trim().toLowerCase();
  } catch {
    return undefined;
  }
  // One address only: a list of them, or anything that is no plain addr-spec, is not sent to.
  if (!/^[^\s"\\(){}<>@,;:]+@[a-z0-9.-]+\.[a-z]{2,}$/.test(to)) return undefined;
  const params = new URLSearchParams(query);
  const clip = (s: string | null, max: number) => (s ?? '').replace(/[\r\n]+/g, ' ').slice(0, max);
  return {
    method: 'mailto',
    uri,
    to,
    subject: clip(params.get('subject'), 200) || 'unsubscribe',
    body: (params.get('body') ?? '').slice(0, 1000) || 'unsubscribe',
  };
}

/**
 * How to unsubscribe from the message's list: one-click when List-Unsubscribe-Post says
 * `List-Unsubscribe=One-Click` and the list gives an https URI; else its first usable mailto:;
 * undefined when neither (an http: link alone is never followed). A message whose DKIM check failed
 * (Authentication-Results says dkim=fail) gets no one-click: the headers may not be the list's.
 */
export function unsubscribeMethodOf(headers: Record<string, string>): UnsubscribeMethod | undefined {
  const uris = listUnsubscribeUris(headers['list-unsubscribe']);
  const post = (headers['list-unsubscribe-post'] ?? '').trim();
  const dkimFailed = /\bdkim=(fail|permerror)\b/i.test(headers['authentication-results'] ?? '');
  if (post === ONE_CLICK_POST_VALUE && !dkimFailed) {
    const https = uris.find((u) => /^https:\/\//i.test(u));
    if (https) return { method: 'one_click', uri: https };
  }
  for (const uri of uris) {
    const mail = mailtoUnsubscribe(uri);
    if (mail) return mail;
  }
  return undefined;
}
