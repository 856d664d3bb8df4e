// Custom search attributes. They are stored in clear by Temporal: never put subjects,
// addresses or bodies here. The dev server registers them at start (see dev-server.ts).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const InboxAccountId = defineSearchAttributeKey('InboxAccountId', SearchAttributeType.KEYWORD);
export const InboxState = defineSearchAttributeKey('InboxState', SearchAttributeType.KEYWORD);
export const InboxCategory = defineSearchAttributeKey('InboxCategory', SearchAttributeType.KEYWORD);
/** While a thread waits for the account's LLM: why (outage, auth, credits, model, budget); absent otherwise. */
export const InboxLlmPaused = defineSearchAttributeKey('InboxLlmPaused', SearchAttributeType.KEYWORD);
/** When a thread wakes next (its earliest follow-up, snooze, reminder or scheduled send); absent without a timer. */
export const WakeAt = defineSearchAttributeKey('WakeAt', SearchAttributeType.DATETIME);
export const BackfillSlicesDone = defineSearchAttributeKey('BackfillSlicesDone', SearchAttributeType.INT);
export const BackfillSlicesTotal = defineSearchAttributeKey('BackfillSlicesTotal', SearchAttributeType.INT);
export const BackfillMessagesStored = defineSearchAttributeKey('BackfillMessagesStored', SearchAttributeType.INT);
// DOUBLE, not INT: SQL visibility stores (SQLite dev server, PostgreSQL, MySQL) allow only 3 custom
// Int attributes per namespace, and the server refuses to start with a 4th. A double holds counts exactly.
export const BackfillBadCount = defineSearchAttributeKey('BackfillBadCount', SearchAttributeType.DOUBLE);
export const BackfillRate = defineSearchAttributeKey('BackfillRate', SearchAttributeType.DOUBLE);

/** name → CLI type, as `temporal server start-dev --search-attribute Name=Type` expects. */
export const searchAttributeDefinitions: Record<string, 'Keyword' | 'Int' | 'Double' | 'Datetime'> = {
  InboxAccountId: 'Keyword',
  InboxState: 'Keyword',
  InboxCategory: 'Keyword',
  InboxLlmPaused: 'Keyword',
  WakeAt: 'Datetime',
  BackfillSlicesDone: 'Int',
  BackfillSlicesTotal: 'Int',
  BackfillMessagesStored: 'Int',
  BackfillBadCount: 'Double',
  BackfillRate: 'Double',
};
