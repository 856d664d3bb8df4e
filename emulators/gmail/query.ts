// Gmail search (`q`) for messages.list, threads.list and drafts.list, parsed by recursive descent:
//
//   and     := or ( 'AND'? or )*        terms side by side must all match
//   or      := unary ( 'OR' unary )*     OR (upper-case only) binds tighter than AND, as in Gmail
//   unary   := '-' unary | primary
//   primary := '(' and ')' | '{' or* '}' (any of) | op ':' ( value | "phrase" | '(' and ')' | '{' or* '}' )
//            | "phrase" | word
//
// Inside `op:( ... )` a bare word or phrase takes that operator (`subject:(dinner movie)`).
// Operators: after:/before: (alias newer:/older:; epoch seconds or YYYY/MM/DD in UTC; after
// inclusive, before exclusive), newer_than:/older_than: (d/m/y), in:, is:, label:, category:,
// from:, to:, subject:, has:attachment|userlabels|nouserlabels, rfc822msgid:, filename: (name,
// word of it, or extension), larger:/smaller:/size: (bytes, K/M suffixes, against sizeEstimate).
// Free words and phrases match from, to, subject and snippet. Gmail operators not listed here
// (cc:, list:, AROUND, has:drive...) and malformed queries are 400, never an empty result.
import { badRequest, type GmailApiError } from './errors.js';
import type { LabelTable } from './labels.js';
import type { StoredMessage } from './message.js';

type Predicate = (msg: StoredMessage) => boolean;

export interface CompiledQuery {
  predicate: Predicate;
  /** Inclusive lower bound on internalDate (ms), used to narrow the date-ordered scan. */
  afterMs: number;
  /** Exclusive upper bound on internalDate (ms). */
  beforeMs: number;
  /** The query names SPAM/TRASH (or in:anywhere), so includeSpamTrash=false must not hide them. */
  touchesSpamTrash: boolean;
}

// ------------------------------------------------------------ syntax

const SUPPORTED_OPERATORS = new Set([
  'after', 'before', 'newer', 'older', 'newer_than', 'older_than', 'in', 'is', 'label', 'category',
  'from', 'to', 'subject', 'has', 'rfc822msgid', 'filename', 'larger', 'smaller', 'size',
]);
/** Gmail operators this emulator does not implement: refused rather than read as free text. */
const UNSUPPORTED_OPERATORS = new Set(['cc', 'bcc', 'list', 'deliveredto']);

type Token =
  | { kind: '(' | ')' | '{' | '}' | '-' | 'OR' | 'AND' }
  | { kind: 'word' | 'phrase'; text: string }
  | { kind: 'op'; name: string; value: string }
  | { kind: 'opGroup'; name: string };

export type QueryNode =
  | { kind: 'and' | 'or'; items: QueryNode[] }
  | { kind: 'not'; item: QueryNode }
  /** `op` is '' for free text. */
  | { kind: 'term'; op: string; value: string };

const invalid = (detail: string): GmailApiError => badRequest(`Invalid query: ${detail}`);

const isSpace = (c: string | undefined) => c !== undefined && /\s/.test(c);
const endsWord = (c: string | undefined) => c === undefined || isSpace(c) || '(){}"'.includes(c);

function tokenize(q: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const readPhrase = (): string => {
    const close = q.indexOf('"', i + 1);
    if (close < 0) throw invalid('unterminated quote');
    const text = q.slice(i + 1, close);
    i = close + 1;
    return text;
  };
  while (i < q.length) {
    const c = q[i] as string;
    if (isSpace(c)) i++;
    else if ('(){}'.includes(c)) {
      tokens.push({ kind: c as '(' | ')' | '{' | '}' });
      i++;
    } else if ((c === '-' || c === '+') && q[i + 1] !== undefined && !isSpace(q[i + 1]) && !')}'.includes(q[i + 1] as string)) {
      if (c === '-') tokens.push({ kind: '-' }); // "+word" (exact word) is the word itself here
      i++;
    } else if (c === '"') tokens.push({ kind: 'phrase', text: readPhrase() });
    else {
      let j = i;
      while (!endsWord(q[j])) j++;
      const text = q.slice(i, j);
      i = j;
      if (text === 'OR' || text === 'AND') {
        tokens.push({ kind: text });
        continue;
      }
      if (text === 'AROUND') throw invalid('AROUND is not supported');
      const m = /^([A-Za-z0-9_]+):(.*)$/s.exec(text); // rfc822msgid has digits
      const name = m?.[1]?.toLowerCase() ?? '';
      if (!m || !(SUPPORTED_OPERATORS.has(name) || UNSUPPORTED_OPERATORS.has(name))) tokens.push({ kind: 'word', text });
      else if (m[2]) tokens.push({ kind: 'op', name, value: m[2] });
      else if (q[i] === '"') tokens.push({ kind: 'op', name, value: readPhrase() });
      else if (q[i] === '(' || q[i] === '{') tokens.push({ kind: 'opGroup', name });
      else throw invalid(`${name}: has no value`);
    }
  }
  return tokens;
}

class Parser {
  private pos = 0;
  /** The operator of an enclosing `op:( ... )`, for bare words inside it. */
  private defaultOp = '';

  constructor(private readonly tokens: Token[]) {}

  parseQuery(): QueryNode {
    return this.parseAnd(undefined);
  }

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  private next(): Token {
    const token = this.tokens[this.pos++];
    if (!token) throw invalid('unexpected end');
    return token;
  }

  private parseAnd(close: ')' | undefined): QueryNode {
    const items: QueryNode[] = [];
    for (;;) {
      const token = this.peek();
      if (!token) {
        if (close) throw invalid(`missing "${close}"`);
        break;
      }
      if (token.kind === close) {
        this.pos++;
        break;
      }
      if (token.kind === 'AND' && items.length > 0) {
        this.pos++;
        continue;
      }
      items.push(this.parseOr());
    }
    if (close && items.length === 0) throw invalid('empty group');
    return { kind: 'and', items };
  }

  private parseOr(): QueryNode {
    const items = [this.parseUnary()];
    while (this.peek()?.kind === 'OR') {
      this.pos++;
      items.push(this.parseUnary());
    }
    return items.length === 1 ? (items[0] as QueryNode) : { kind: 'or', items };
  }

  private parseUnary(): QueryNode {
    if (this.peek()?.kind === '-') {
      this.pos++;
      return { kind: 'not', item: this.parseUnary() };
    }
    return this.parsePrimary();
  }

  private parseAnyOf(): QueryNode {
    const items: QueryNode[] = [];
    while (this.peek()?.kind !== '}') {
      if (!this.peek()) throw invalid('missing "}"');
      items.push(this.parseOr());
    }
    this.pos++;
    if (items.length === 0) throw invalid('empty group');
    return { kind: 'or', items };
  }

  private parsePrimary(): QueryNode {
    const token = this.next();
    switch (token.kind) {
      case '(':
        return this.parseAnd(')');
      case '{':
        return this.parseAnyOf();
      case 'word':
      case 'phrase':
        return { kind: 'term', op: this.defaultOp, value: token.text };
      case 'op':
        return { kind: 'term', op: token.name, value: token.value };
      case 'opGroup': {
        const outer = this.defaultOp;
        this.defaultOp = token.name;
        const open = this.next();
        const group = open.kind === '(' ? this.parseAnd(')') : this.parseAnyOf();
        this.defaultOp = outer;
        return group;
      }
      default:
        throw invalid(`unexpected "${token.kind}"`);
    }
  }
}

export function parseQuery(q: string): QueryNode {
  return new Parser(tokenize(q)).parseQuery();
}

// ------------------------------------------------------------ meaning

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

/** Gmail's categories; `undefined` for the ones that exist in Gmail but never in this emulator. */
const CATEGORIES: Record<string, string | undefined> = {
  primary: 'CATEGORY_PERSONAL',
  personal: 'CATEGORY_PERSONAL',
  social: 'CATEGORY_SOCIAL',
  promotions: 'CATEGORY_PROMOTIONS',
  updates: 'CATEGORY_UPDATES',
  forums: 'CATEGORY_FORUMS',
  reservations: undefined,
  purchases: undefined,
};

function parseDateMs(value: string, operator: string): number {
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const m = /^(\d{4})[/-](\d{1,2})[/-](\d{1,2})$/.exec(value);
  if (m) return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  throw invalid(`${operator}:${value}`);
}

function relativeMs(value: string, operator: string): number {
  const m = /^(\d+)([dmy])$/.exec(value);
  if (!m) throw invalid(`${operator}:${value}`);
  const days = { d: 1, m: 30, y: 365 }[m[2] as 'd' | 'm' | 'y'];
  return Number(m[1]) * days * 86_400_000;
}

function parseBytes(value: string, operator: string): number {
  const m = /^(\d+)([km]?)b?$/.exec(value);
  if (!m) throw invalid(`${operator}:${value}`);
  return Number(m[1]) * { '': 1, k: 1024, m: 1024 * 1024 }[m[2] as '' | 'k' | 'm'];
}

/** `filename:pdf` matches by extension, `filename:report` by a word of the name, or the whole name. */
function filenameMatches(names: string, wanted: string): boolean {
  return names.split('\n').some((name) => name !== '' && (name === wanted || name.endsWith(`.${wanted}`) || name.split(/[^\p{L}\p{N}]+/u).includes(wanted) || (wanted.includes('.') && name.includes(wanted))));
}

const includesCi = (haystack: string, needle: string): boolean => haystack.toLowerCase().includes(needle);

interface TermMeaning {
  predicate: Predicate;
  /** For a date term: the bound it puts on internalDate. */
  after?: number;
  before?: number;
}

interface Context {
  labels: LabelTable;
  now: number;
  touchesSpamTrash: boolean;
}

function withLabel(labelId: string | undefined): Predicate {
  return labelId === undefined ? () => false : (msg) => msg.labelIds.includes(labelId);
}

function termMeaning(op: string, value: string, ctx: Context): TermMeaning {
  const lower = value.toLowerCase();
  const unsupported = () => invalid(`unsupported operator ${op}:${value}`);
  const notesSpamTrash = (labelId: string | undefined) => {
    if (labelId === 'SPAM' || labelId === 'TRASH') ctx.touchesSpamTrash = true;
    return labelId;
  };
  switch (op) {
    case 'after':
    case 'newer': {
      const ms = parseDateMs(value, op);
      return { predicate: (msg) => msg.internalDate >= ms, after: ms };
    }
    case 'before':
    case 'older': {
      const ms = parseDateMs(value, op);
      return { predicate: (msg) => msg.internalDate < ms, before: ms };
    }
    case 'newer_than': {
      const ms = ctx.now - relativeMs(lower, op);
      return { predicate: (msg) => msg.internalDate >= ms, after: ms };
    }
    case 'older_than': {
      const ms = ctx.now - relativeMs(lower, op);
      return { predicate: (msg) => msg.internalDate < ms, before: ms };
    }
    case 'in':
      if (lower === 'anywhere') {
        ctx.touchesSpamTrash = true;
        return { predicate: () => true };
      }
      return { predicate: withLabel(notesSpamTrash(IN_ALIASES[lower] ?? ctx.labels.resolve(value)?.id)) };
    case 'is':
      if (lower === 'read') return { predicate: (msg) => !msg.labelIds.includes('UNREAD') };
      if (!IN_ALIASES[lower]) throw unsupported();
      return { predicate: withLabel(notesSpamTrash(IN_ALIASES[lower])) };
    case 'label': {
      const label = ctx.labels.resolve(value) ?? ctx.labels.resolve(value.replace(/-/g, ' ')) ?? ctx.labels.resolve(value.replace(/-/g, '/'));
      return { predicate: withLabel(notesSpamTrash(label?.id)) };
    }
    case 'category':
      if (!(lower in CATEGORIES)) throw unsupported();
      return { predicate: withLabel(CATEGORIES[lower]) };
    case 'from':
      return { predicate: (msg) => includesCi(msg.from, lower) };
    case 'to':
      return { predicate: (msg) => includesCi(msg.to, lower) };
    case 'subject':
      return { predicate: (msg) => includesCi(msg.subject, lower) };
    case 'has':
      if (lower === 'attachment') return { predicate: (msg) => msg.hasAttachment };
      if (lower === 'userlabels') return { predicate: (msg) => msg.labelIds.some((id) => ctx.labels.get(id)?.type === 'user') };
      if (lower === 'nouserlabels') return { predicate: (msg) => !msg.labelIds.some((id) => ctx.labels.get(id)?.type === 'user') };
      throw unsupported();
    case 'rfc822msgid':
      return { predicate: (msg) => msg.rfc822MessageId.replace(/^<|>$/g, '') === value.replace(/^<|>$/g, '') };
    case 'filename':
      return { predicate: (msg) => filenameMatches(msg.attachmentNames, lower) };
    case 'larger':
    case 'size': {
      const bytes = parseBytes(lower, op);
      return { predicate: (msg) => msg.raw.length > bytes };
    }
    case 'smaller': {
      const bytes = parseBytes(lower, op);
      return { predicate: (msg) => msg.raw.length < bytes };
    }
    case '':
      return {
        predicate: (msg) => includesCi(msg.subject, lower) || includesCi(msg.snippet, lower) || includesCi(msg.from, lower) || includesCi(msg.to, lower),
      };
    default:
      throw unsupported();
  }
}

function compileNode(node: QueryNode, ctx: Context): Predicate {
  switch (node.kind) {
    case 'term':
      return termMeaning(node.op, node.value, ctx).predicate;
    case 'not': {
      const inner = compileNode(node.item, ctx);
      return (msg) => !inner(msg);
    }
    case 'and': {
      const items = node.items.map((item) => compileNode(item, ctx));
      return (msg) => items.every((p) => p(msg));
    }
    case 'or': {
      const items = node.items.map((item) => compileNode(item, ctx));
      return (msg) => items.some((p) => p(msg));
    }
  }
}

export function compileQuery(q: string | undefined, labels: LabelTable, now: number): CompiledQuery {
  const root = parseQuery(q ?? '');
  const ctx: Context = { labels, now, touchesSpamTrash: false };
  let afterMs = -Infinity;
  let beforeMs = Infinity;
  // Date terms that every match must satisfy (top-level, not negated) narrow the scan.
  for (const item of root.kind === 'and' ? root.items : []) {
    if (item.kind !== 'term') continue;
    const meaning = termMeaning(item.op, item.value, ctx);
    if (meaning.after !== undefined) afterMs = Math.max(afterMs, meaning.after);
    if (meaning.before !== undefined) beforeMs = Math.min(beforeMs, meaning.before);
  }
  return { predicate: compileNode(root, ctx), afterMs, beforeMs, touchesSpamTrash: ctx.touchesSpamTrash };
}
