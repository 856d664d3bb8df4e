// Import of real mail: a single .eml file, or an mbox (mboxrd/mboxo; Google Takeout's
// X-Gmail-Labels header, when present, gives each message its labels).
import { headerValue, parseTopHeaders } from './mime.js';

export interface ImportedMessage {
  raw: Buffer;
  internalDate?: number;
  /** Label names/ids from X-Gmail-Labels, mapped to Gmail's system label ids where they are system labels. */
  labelNames?: string[];
}

export interface ImportResult {
  messages: ImportedMessage[];
  skipped: number;
}

const TAKEOUT_LABELS: Record<string, string> = {
  inbox: 'INBOX',
  unread: 'UNREAD',
  sent: 'SENT',
  starred: 'STARRED',
  important: 'IMPORTANT',
  spam: 'SPAM',
  trash: 'TRASH',
  chat: 'CHAT',
  opened: '',
  archived: '',
  drafts: '',
  'category personal': 'CATEGORY_PERSONAL',
  'category social': 'CATEGORY_SOCIAL',
  'category promotions': 'CATEGORY_PROMOTIONS',
  'category updates': 'CATEGORY_UPDATES',
  'category forums': 'CATEGORY_FORUMS',
};

function describe(raw: Buffer): ImportedMessage {
  const headers = parseTopHeaders(raw);
  const date = Date.parse(headerValue(headers, 'date') ?? '');
  const takeout = headerValue(headers, 'x-gmail-labels');
  const labelNames = takeout
    ?.split(',')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => TAKEOUT_LABELS[l.toLowerCase()] ?? l)
    .filter((l) => l !== '');
  return { raw, ...(Number.isFinite(date) ? { internalDate: date } : {}), ...(labelNames ? { labelNames } : {}) };
}

export function importEml(data: Buffer): ImportResult {
  return data.length === 0 ? { messages: [], skipped: 1 } : { messages: [describe(data)], skipped: 0 };
}

/** Splits an mbox on "From " separator lines and undoes ">From " quoting. */
export function importMbox(data: Buffer): ImportResult {
  const text = data.toString('latin1');
  const messages: ImportedMessage[] = [];
  let skipped = 0;
  const chunks = text.split(/(?:^|\r?\n)From [^\r\n]*\r?\n/);
  for (const chunk of chunks) {
    if (chunk.trim() === '') continue;
    const body = chunk.replace(/^>(>*From )/gm, '$1');
    if (!/^[A-Za-z-]+:/.test(body)) {
      skipped++;
      continue;
    }
    messages.push(describe(Buffer.from(body, 'latin1')));
  }
  return { messages, skipped };
}
