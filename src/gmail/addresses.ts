// RFC 5322 address lists: the one reading of From, To, Cc and Reply-To for the whole product, and
// their formatting for outgoing headers. The grammar is the `email-addresses` package's (a full RFC
// 5322 parser with groups and the obsolete forms, see docs/actions.md "How a sender is read"), not
// regular expressions: what it cannot read as addresses gives none, it never guesses. The structure
// is parsed first and only then is each display name RFC 2047-decoded, so a decoded name holding
// `<`, `@` or `,` can never become an address. Display names are for showing; nothing matches on them.
import { domainToASCII } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import addrs from 'email-addresses';
import { decodeHeaderText, encodeHeaderText, needsHeaderEncoding } from './mime-encoding.js';
import type { EmailAddress, ThreadMessage } from '../mail/message.js';

/**
 * Longer address headers are not parsed: they give no addresses and a warning. The grammar backtracks
 * on input it cannot read (a crafted 2,000-character header costs it up to about a second, a 300 kB
 * one minutes), so a header must be short to be read at all. Real From and Reply-To headers are far
 * shorter than a line (RFC 5322: 998 characters); To and Cc of some 60 people fit the longer cap.
 */
export const MAX_SENDER_HEADER = 998;
export const MAX_LIST_HEADER = 2000;

/**
 * An address we act on: a plain local part (no quoting, no spaces or specials) and a host name.
 * A quoted local part (`"a@b"@evil.example`), a domain literal or a source route is refused: real
 * correspondents do not use them, and each is read differently by different mail systems.
 */
const USABLE_ADDRESS = /^[^\s"\\(),:;<>@[\]]+@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/**
 * The grammar's readings, strictest first: RFC 5322 (obsolete forms included), then with `@` allowed
 * in an unquoted display name (`alice@example.com <mallory@evil.example>` is mallory's), then one
 * mailbox whose unquoted name has a comma (`Doe, Jane <jane@example.com>`).
 */
const READINGS: Array<Partial<addrs.Options>> = [
  { startAt: 'address-list' },
  { startAt: 'address-list', atInDisplayName: true },
  { startAt: 'mailbox', atInDisplayName: true, commaInDisplayName: true },
];

type Parsed = addrs.ParsedMailbox | addrs.ParsedGroup;

// C0 controls but tab, CR and LF (white space, read as such), DEL and C1 controls.
// eslint-disable-next-line no-control-regex
const UNSHOWABLE = /[\u0000-\u0008\u000b-\u000c\u000e-\u001f\u007f-\u009f]/g;

/** Text without what cannot be shown: terminal escape sequences (an ANSI colour, a window title) and control characters. */
function showable(text: string): string {
  return stripVTControlCharacters(text).replace(UNSHOWABLE, '');
}

const ENCODED_WORD = /=\?[^?\s]+\?([BbQq])\?([^?\s]*)\?=/g;
// What RFC 2047 allows in the text of an encoded word in a phrase.
const PHRASE_WORD_TEXT = { b: /^[A-Za-z0-9+/=]*$/, q: /^[A-Za-z0-9!*+\-/=_]*$/ };

/**
 * The header as the grammar reads it: what cannot be shown removed, and an encoded word whose text
 * breaks RFC 2047's rules (`=?UTF-8?Q?=07Alice=1B[31m?=`, which the grammar cannot read as one word)
 * written again in B encoding, so it stays one word of the structure whatever it decodes to.
 */
function readable(value: string): string {
  return showable(value).replace(ENCODED_WORD, (word, encoding: string, text: string) =>
    PHRASE_WORD_TEXT[encoding.toLowerCase() as 'b' | 'q'].test(text) ? word : `=?UTF-8?B?${Buffer.from(showable(decodeHeaderText(word))).toString('base64')}?=`,
  );
}

function grammar(value: string, readings: readonly Partial<addrs.Options>[]): Parsed[] | null {
  try {
    for (const reading of readings) {
      const result = addrs({ input: value, rfc6532: true, ...reading });
      if (result) return result.addresses;
    }
  } catch (err) {
    // Comments nested thousands deep exhaust the parser's stack: unreadable, like any other failure.
    if (!(err instanceof RangeError)) throw err;
  }
  return null;
}

/**
 * The canonical form of an addr-spec: lower-cased, the domain in its ASCII (IDNA) form, so
 * `Alice@Exämple.COM` and `alice@xn--exmple-cua.com` are one address. '' when it is not usable.
 */
export function canonicalAddress(address: string): string {
  const text = address.trim();
  const at = text.lastIndexOf('@');
  if (at <= 0) return '';
  const domain = domainToASCII(text.slice(at + 1).toLowerCase());
  const canonical = `${text.slice(0, at).toLowerCase()}@${domain}`;
  return domain && USABLE_ADDRESS.test(canonical) ? canonical : '';
}

function mailboxOf(parsed: addrs.ParsedMailbox, warnings?: string[]): EmailAddress | null {
  // Gmail hands headers over with encoded-words already decoded, so a crafted encoded name can turn
  // into structure (`alice@x (` + ` <mallory@y>)` reads as alice with a comment). A comment holding
  // address syntax is such a case, or a lie: the mailbox is not used.
  if (parsed.parts.comments.some((c) => /[<>@]/.test(c.tokens))) {
    warnings?.push(`address with an address in its comment not used: ${JSON.stringify(parsed.address.slice(0, 80))}`);
    return null;
  }
  const address = canonicalAddress(parsed.address);
  if (!address) {
    warnings?.push(`address not usable: ${JSON.stringify(parsed.address.slice(0, 80))}`);
    return null;
  }
  // An old-style `a@b.example (Name)` names the mailbox in its comment.
  const rawName = parsed.name ?? parsed.parts.comments.map((c) => c.tokens.trim().replace(/^\(|\)$/g, '')).join(' ');
  const name = rawName ? showable(decodeHeaderText(rawName, warnings)).replace(/\s+/g, ' ').trim() : '';
  return name ? { name, address } : { address };
}

/**
 * Every mailbox of an address-list header (a group's members included; `undisclosed-recipients:;`
 * has none). Header values are raw, as Gmail hands them over (encoded-words still encoded). A header
 * the grammar cannot read gives no addresses and a warning.
 */
export function parseAddressList(value: string | undefined, warnings?: string[], max = MAX_LIST_HEADER): EmailAddress[] {
  return readList(value, warnings, max).mailboxes;
}

function readList(value: string | undefined, warnings: string[] | undefined, max: number): { mailboxes: EmailAddress[]; groups: number } {
  if (!value || value.trim() === '') return { mailboxes: [], groups: 0 };
  // Unfolded, runs of white space as one (they mean one), a trailing comma (`a@x.test,`) dropped.
  const text = value.replace(/\s+/g, ' ').replace(/[\s,]+$/, '');
  if (text.length > max) {
    warnings?.push(`address header of ${value.length} characters not read (more than ${max})`);
    return { mailboxes: [], groups: 0 };
  }
  // A long list is read by the strict grammar only: each lenient reading costs another parse.
  const parsed = grammar(readable(text), text.length > MAX_SENDER_HEADER ? READINGS.slice(0, 1) : READINGS);
  if (!parsed) {
    warnings?.push(`unreadable address header: ${JSON.stringify(value.slice(0, 80))}`);
    return { mailboxes: [], groups: 0 };
  }
  const mailboxes = parsed.flatMap((p) => (p.type === 'group' ? p.addresses : [p]));
  return {
    mailboxes: mailboxes.map((m) => mailboxOf(m, warnings)).filter((a): a is EmailAddress => a !== null),
    groups: parsed.filter((p) => p.type === 'group').length,
  };
}

/**
 * The sender from the From header(s): the one mailbox they name, or null when they name none or
 * more than one (two From headers, `From: a@x, b@y`, or a group, which RFC 6854 allows for mail
 * that is from no one mailbox): such mail has no single sender to match a rule, judge or answer.
 */
export function parseSender(values: string | readonly string[] | undefined, warnings?: string[]): EmailAddress | null {
  const headers = typeof values === 'string' ? [values] : (values ?? []);
  const read = headers.map((v) => readList(v, warnings, MAX_SENDER_HEADER));
  const mailboxes = read.flatMap((r) => r.mailboxes);
  if (mailboxes.length > 1 || headers.length > 1 || read.some((r) => r.groups > 0)) {
    warnings?.push(`From names ${mailboxes.length} addresses in ${headers.length} header(s)${read.some((r) => r.groups > 0) ? ' as a group' : ''}: no single sender`);
    return null;
  }
  return mailboxes[0] ?? null;
}

/** The sender's canonical address from a From header value ('' when it has no single usable one). */
export function senderAddress(from: string | undefined): string {
  return parseSender(from)?.address ?? '';
}

/**
 * Everyone a message goes to when sent: its To, its Cc and the Bcc a draft keeps (canonical, each
 * once), as the product's reader read them. What a send is judged by and, over SMTP, its envelope:
 * one reading, so a send cannot go where the check did not look.
 */
export function messageRecipients(message: ThreadMessage): string[] {
  const bcc = parseAddressList(message.headers['bcc']);
  return [...new Set([...message.to, ...message.cc, ...bcc].map((a) => canonicalAddress(a.address)).filter((a) => a !== ''))];
}

/** The lower-cased domain of an address (`jane@Mail.Example.com` → `mail.example.com`), or '' without one. */
export function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? '' : address.slice(at + 1).toLowerCase();
}

// RFC 5322 "specials" that force a display name into a quoted-string.
const NEEDS_QUOTING = /[()<>[\]:;@\\,."]/;

/** `Name <addr>` with the name RFC 2047-encoded when not ASCII, quoted when it has specials. */
export function formatAddress(address: EmailAddress): string {
  const addr = stripHeaderBreaks(address.address).trim();
  const name = stripHeaderBreaks(address.name ?? '').trim();
  if (!name) return addr;
  if (needsHeaderEncoding(name)) return `${encodeHeaderText(name)} <${addr}>`;
  if (NEEDS_QUOTING.test(name)) return `"${name.replace(/(["\\])/g, '\\$1')}" <${addr}>`;
  return `${name} <${addr}>`;
}

export function formatAddressList(addresses: EmailAddress[]): string {
  return addresses.map(formatAddress).join(', ');
}

/** Comparison of addresses in their canonical form (case, IDNA). */
export function sameAddress(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const [ca, cb] = [canonicalAddress(a), canonicalAddress(b)];
  return ca !== '' && ca === cb;
}

/** Removes CR/LF (and other C0 controls but tab) so caller data cannot inject headers. */
export function stripHeaderBreaks(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\r\n]+/g, ' ').replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
}
