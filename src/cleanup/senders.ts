// Who sends what (docs/cleanup.md): per sender or per domain, from what the backfill and the sync
// already store (messages: headers, labels, dates; threads: the category the product gave them).
// PostgreSQL groups by the raw From header (one pass over the account's messages in the window);
// each distinct From is then read once by the one address parser (src/gmail/addresses.ts) and the
// groups of the same sender merged, so no address is ever guessed by a regular expression.
import type { SqlExecutor } from '../db/sql-executor.js';
import { domainOf, parseSender } from '../gmail/addresses.js';

export interface SenderFigures {
  /** The sender's canonical address, or the domain (by: 'domain'). */
  key: string;
  messages: number;
  unread: number;
  /** unread / messages. */
  unreadShare: number;
  /** Of the sender's messages, those in a thread where the user sent something after it. */
  repliedTo: number;
  /** The category most of the sender's threads got ('' when none was given). */
  category: string;
  /** Some message carried List-Unsubscribe. */
  listUnsubscribe: boolean;
  /** The newest message's date (ISO). */
  lastAt: string;
}

export const SENDER_SORTS = ['messages', 'unread', 'replied', 'last'] as const;
export type SenderSort = (typeof SENDER_SORTS)[number];

export interface SendersQuery {
  accountId: string;
  since?: Date;
  by?: 'sender' | 'domain';
  sort?: SenderSort;
  /** never-opened: senders with List-Unsubscribe whose every message is unread and never replied to. */
  filter?: 'never-opened';
  limit?: number;
}

type GroupRow = { from_header: string; messages: number; unread: number; replied: number; unsub: boolean; last_at: Date; category: string | null };

/** The figures per raw From header: one scan of the account's received messages in the window. */
const GROUPS_SQL = `
WITH received AS (
  SELECT gmail_thread_id, internal_date, label_ids, headers
  FROM messages
  WHERE account_id = $1 AND internal_date >= $2 AND NOT ('SENT' = ANY(label_ids)) AND NOT ('DRAFT' = ANY(label_ids))
),
sent AS (
  SELECT gmail_thread_id, max(internal_date) AS last_sent
  FROM messages WHERE account_id = $1 AND 'SENT' = ANY(label_ids) GROUP BY gmail_thread_id
)
SELECT coalesce(r.headers->>'from', '') AS from_header,
  count(*)::int AS messages,
  count(*) FILTER (WHERE 'UNREAD' = ANY(r.label_ids))::int AS unread,
  count(*) FILTER (WHERE s.last_sent > r.internal_date)::int AS replied,
  bool_or(r.headers ? 'list-unsubscribe') AS unsub,
  max(r.internal_date) AS last_at,
  mode() WITHIN GROUP (ORDER BY t.category) AS category
FROM received r
LEFT JOIN sent s ON s.gmail_thread_id = r.gmail_thread_id
LEFT JOIN threads t ON t.account_id = $1 AND t.gmail_thread_id = r.gmail_thread_id
GROUP BY 1`;

export async function listSenders(db: SqlExecutor, query: SendersQuery): Promise<SenderFigures[]> {
  const rows = await db.query<GroupRow>(GROUPS_SQL, [query.accountId, query.since ?? new Date(0)]);
  const merged = new Map<string, SenderFigures & { categoryWeight: number }>();
  for (const row of rows) {
    const address = parseSender(row.from_header)?.address ?? '';
    const key = query.by === 'domain' ? (address ? domainOf(address) : '') : address;
    const lastAt = row.last_at.toISOString();
    const seen = merged.get(key);
    if (!seen) {
      merged.set(key, {
        key,
        messages: row.messages,
        unread: row.unread,
        unreadShare: 0,
        repliedTo: row.replied,
        category: row.category ?? '',
        categoryWeight: row.messages,
        listUnsubscribe: row.unsub,
        lastAt,
      });
      continue;
    }
    seen.messages += row.messages;
    seen.unread += row.unread;
    seen.repliedTo += row.replied;
    seen.listUnsubscribe ||= row.unsub;
    if (lastAt > seen.lastAt) seen.lastAt = lastAt;
    if (row.category && row.messages > seen.categoryWeight) {
      seen.category = row.category;
      seen.categoryWeight = row.messages;
    }
  }
  let senders: SenderFigures[] = [...merged.values()].map(({ categoryWeight: _, ...s }) => ({ ...s, unreadShare: s.messages ? s.unread / s.messages : 0 }));
  if (query.filter === 'never-opened') senders = senders.filter((s) => s.listUnsubscribe && s.unread === s.messages && s.repliedTo === 0);
  const order: Record<SenderSort, (a: SenderFigures, b: SenderFigures) => number> = {
    messages: (a, b) => b.messages - a.messages,
    unread: (a, b) => b.unreadShare - a.unreadShare || b.messages - a.messages,
    replied: (a, b) => b.repliedTo - a.repliedTo || b.messages - a.messages,
    last: (a, b) => (a.lastAt < b.lastAt ? 1 : a.lastAt > b.lastAt ? -1 : 0),
  };
  senders.sort((a, b) => order[query.sort ?? 'messages'](a, b) || a.key.localeCompare(b.key));
  return senders.slice(0, query.limit ?? 100);
}
