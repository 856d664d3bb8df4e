// Gmail search (`q`) for messages.list, threads.list and drafts.list: a conjunction of terms,
// each optionally negated with "-". Supported operators: after:/before: (epoch seconds or
// YYYY/MM/DD, UTC), newer_than:/older_than: (d/m/y), in:, is:, label:, category:, from:, to:,
// subject:, has:attachment, rfc822msgid:, and free words (matched against from, to, subject
// and snippet). after: is inclusive, before: exclusive.
import { badRequest } from './errors.js';
import type { LabelTable } from './labels.js';
import type { StoredMessage } from './message.js';

type Predicate = (msg: StoredMessage) => boolean;

export interface CompiledQuery {
  predicate: Predicate;
  /** Inclusive lower bound on internalDate (ms), used to narrow the date-ordered scan. */
  afterMs: number;
  /** Exclusive upper bound on internalDate (ms). */
  beforeMs: number;
  /** The query or labelIds name SPAM/TRASH, so includeSpamTrash=false must not hide them. */
  touchesSpamTrash: boolean;
}

const IN_ALIASES: Record<string, string> = {
  inbox: 'INBOX',
  sent: 'SENT',
  trash: 'TRASH',
  spam: 'SPAM',
  drafts: 'DRAFT',
  draft: 'DRAFT',
  starred: 'STARRED',
  important: 'IMPORTANT',
  unread: 'UNREAD',
  chats: 'CHAT',
};

const CATEGORIES: Record<string, string> = {
  primary: 'CATEGORY_PERSONAL',
  personal: 'CATEGORY_PERSONAL',
  social: 'CATEGORY_SOCIAL',
  promotions: 'CATEGORY_PROMOTIONS',
  updates: 'CATEGORY_UPDATES',
  forums: 'CATEGORY_FORUMS',
};

function tokenize(q: string): string[] {
  const tokens: string[] = [];
  const re = /-?[a-zA-Z_]+:"[^"]*"|-?"[^"]*"|\S+/g;
  for (const m of q.matchAll(re)) tokens.push(m[0]);
  return tokens;
}

function parseDateMs(value: string, operator: string): number {
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const m = /^(\d{4})[/-](\d{1,2})[/-](\d{1,2})$/.exec(value);
  if (m) return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  throw badRequest(`Invalid search query: ${operator}:${value}`);
}

function relativeMs(value: string): number {
  const m = /^(\d+)([dmy])$/.exec(value);
  if (!m) throw badRequest(`Invalid search query: ${value}`);
  const days = { d: 1, m: 30, y: 365 }[m[2] as 'd' | 'm' | 'y'];
  return Number(m[1]) * days * 86_400_000;
}

const includesCi = (haystack: string, needle: string): boolean => haystack.toLowerCase().includes(needle);

export function compileQuery(q: string | undefined, labels: LabelTable, now: number): CompiledQuery {
  const predicates: Predicate[] = [];
  let afterMs = -Infinity;
  let beforeMs = Infinity;
  let touchesSpamTrash = false;
  const withLabel = (labelId: string | undefined): Predicate =>
    labelId === undefined ? () => false : (msg) => msg.labelIds.includes(labelId);

  for (let token of tokenize(q ?? '')) {
    let negate = false;
    if (token.startsWith('-') && token.length > 1) {
      negate = true;
      token = token.slice(1);
    }
    const colon = token.indexOf(':');
    const op = colon > 0 && !token.startsWith('"') ? token.slice(0, colon).toLowerCase() : '';
    const value = (op ? token.slice(colon + 1) : token).replace(/^"|"$/g, '');
    const lowerValue = value.toLowerCase();
    let predicate: Predicate;
    switch (op) {
      case 'after':
      case 'before':
      case 'newer_than':
      case 'older_than': {
        const ms = op === 'after' || op === 'before' ? parseDateMs(value, op) : now - relativeMs(lowerValue);
        const lower = op === 'after' || op === 'newer_than';
        if (!negate) {
          if (lower) afterMs = Math.max(afterMs, ms);
          else beforeMs = Math.min(beforeMs, ms);
        }
        predicate = lower ? (msg) => msg.internalDate >= ms : (msg) => msg.internalDate < ms;
        break;
      }
      case 'in': {
        if (lowerValue === 'anywhere') {
          touchesSpamTrash = true;
          predicate = () => true;
          break;
        }
        const id = IN_ALIASES[lowerValue];
        if (id === 'SPAM' || id === 'TRASH') touchesSpamTrash = true;
        predicate = withLabel(id ?? labels.resolve(value)?.id);
        break;
      }
      case 'is':
        if (lowerValue === 'read') predicate = (msg) => !msg.labelIds.includes('UNREAD');
        else predicate = withLabel(IN_ALIASES[lowerValue]);
        break;
      case 'label': {
        const byName = labels.resolve(value) ?? labels.resolve(value.replace(/-/g, ' ')) ?? labels.resolve(value.replace(/-/g, '/'));
        if (byName?.id === 'SPAM' || byName?.id === 'TRASH') touchesSpamTrash = true;
        predicate = withLabel(byName?.id);
        break;
      }
      case 'category':
        predicate = withLabel(CATEGORIES[lowerValue]);
        break;
      case 'from':
        predicate = (msg) => includesCi(msg.from, lowerValue);
        break;
      case 'to':
        predicate = (msg) => includesCi(msg.to, lowerValue);
        break;
      case 'subject':
        predicate = (msg) => includesCi(msg.subject, lowerValue);
        break;
      case 'has':
        if (lowerValue !== 'attachment') throw badRequest(`Unsupported search operator: has:${value}`);
        predicate = (msg) => msg.hasAttachment;
        break;
      case 'rfc822msgid':
        predicate = (msg) => msg.rfc822MessageId.replace(/^<|>$/g, '') === value.replace(/^<|>$/g, '');
        break;
      default:
        predicate = (msg) =>
          includesCi(msg.subject, lowerValue) || includesCi(msg.snippet, lowerValue) || includesCi(msg.from, lowerValue) || includesCi(msg.to, lowerValue);
    }
    predicates.push(negate ? (msg) => !predicate(msg) : predicate);
  }
  return {
    predicate: predicates.length === 0 ? () => true : (msg) => predicates.every((p) => p(msg)),
    afterMs,
    beforeMs,
    touchesSpamTrash,
  };
}
