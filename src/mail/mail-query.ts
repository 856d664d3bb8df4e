// A mailbox search written the way Gmail reads it (the agent's search_mailbox), for a provider that
// does not speak it: the operators IMAP SEARCH can say, read into the neutral MailSearch, and the
// other words searched as text. Gmail runs the query itself; Gmail's IMAP takes it as X-GM-RAW.
import type { MailSearch } from './mailbox.js';

export interface ReadQuery {
  /** `text`: each word or quoted phrase must be in the message somewhere (headers or body). */
  search: MailSearch & { text?: string[] };
  /** Operators no IMAP search can say (has:attachment, larger:, …): left out, so the search is wider. */
  ignored: string[];
  /**
   * Gmail syntax read as plain words: a negation (-from:x, -word), OR, and grouping ({…}, (…)). The
   * search then means something else than the query (an agent's search may live with it; a change
   * to the mail it finds may not).
   */
  readAsWords: string[];
}

const DAY_MS = 86_400_000;
const AGE_UNIT_MS: Record<string, number> = { h: 3_600_000, d: DAY_MS, w: 7 * DAY_MS, m: 30 * DAY_MS, y: 365 * DAY_MS };
const IN: Record<string, NonNullable<MailSearch['in']>> = {
  inbox: 'INBOX',
  sent: 'SENT',
  drafts: 'DRAFT',
  draft: 'DRAFT',
  trash: 'TRASH',
  spam: 'SPAM',
  anywhere: 'ANYWHERE',
  all: 'ALL',
};

/** Words, "quoted phrases" and operator:value pairs (operator:"quoted value" too), each maybe negated (-). */
function tokens(query: string): string[] {
  return [...query.matchAll(/-?(?:[A-Za-z_]+:)?"[^"]*"|\S+/g)].map((m) => m[0]);
}

const unquote = (value: string) => value.replace(/^"|"$/g, '');

/** A Gmail date (2024/01/31, 2024-01-31) or epoch seconds; undefined when it is neither. */
function gmailDate(value: string): Date | undefined {
  if (/^\d{9,11}$/.test(value)) return new Date(Number(value) * 1000);
  const m = /^(\d{4})[/-](\d{1,2})[/-](\d{1,2})$/.exec(value);
  return m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined;
}

export function readMailQuery(query: string, now: Date): ReadQuery {
  const search: ReadQuery['search'] = { in: 'ALL' };
  const ignored: string[] = [];
  const readAsWords: string[] = [];
  const words: string[] = [];
  for (const token of tokens(query)) {
    if (/^[-({]|[)}]$/.test(token) || token === 'OR' || token === 'AND') readAsWords.push(token);
    const op = /^([A-Za-z_]+):(.+)$/.exec(token);
    if (!op) {
      words.push(unquote(token));
      continue;
    }
    const [, name, raw] = op as unknown as [string, string, string];
    const value = unquote(raw);
    const key = name.toLowerCase();
    const age = /^(\d+)([hdwmy])$/i.exec(value);
    if (key === 'from' || key === 'to') {
      // A whole address narrows to it; a part of one (a domain, a name) is a from-domain or text.
      if (value.includes('@') && !value.startsWith('@')) search[key] = value;
      else if (key === 'from' && value.includes('.')) search.fromDomain = value.replace(/^@/, '');
      else words.push(value);
    } else if (key === 'subject') search.subject = value;
    else if ((key === 'newer_than' || key === 'older_than') && age) {
      const at = new Date(now.getTime() - Number(age[1]) * AGE_UNIT_MS[age[2]!.toLowerCase()]!);
      if (key === 'newer_than') search.since = at;
      else search.before = at;
    } else if ((key === 'after' || key === 'before') && gmailDate(value)) {
      if (key === 'after') search.since = gmailDate(value);
      else search.before = gmailDate(value);
    } else if (key === 'is' && (value === 'unread' || value === 'read')) search.unread = value === 'unread';
    else if (key === 'in' && IN[value.toLowerCase()]) search.in = IN[value.toLowerCase()];
    else if (key === 'label') search.labelId = value;
    else if (key === 'rfc822msgid') search.messageId = value;
    else ignored.push(token);
  }
  const text = words.filter(Boolean);
  if (text.length > 0) search.text = text;
  return { search, ignored, readAsWords };
}
