// One mailbox, whichever provider serves it: the Gmail API (src/gmail/gmail-service.ts) or IMAP and
// SMTP (src/imap/imap-mailbox.ts). The operations both providers share, in the product's own shapes,
// and what each provider declares where they differ, so that the code above reads the declaration
// instead of asking which provider it talks to. Label ids are opaque: Gmail's ids, IMAP's names.
import type { DraftInfo, DraftRef, HistoryPage, LabelChange, MailboxLabel, MessageList, ThreadMessage, ThreadSnapshot } from './message.js';

/** What a provider declares about itself where mailboxes differ. */
export interface MailboxCapabilities {
  provider: 'gmail' | 'imap';
  /** Where our labels (Outbox, Done, Snooze/…) live: Gmail labels, IMAP keywords, or IMAP folders. */
  labels: 'labels' | 'keywords' | 'folders';
  /** Thread ids from the server (Gmail's threadId, X-GM-THRID) or computed from References/In-Reply-To. */
  threadIds: 'server' | 'computed';
  /** How changes reach the sync: pushed (Pub/Sub watch), signalled on an open connection (IDLE), or polled. */
  changes: 'push' | 'idle' | 'poll';
  /** Whether the server files a sent message in Sent itself, or the provider appends the copy. */
  sentCopy: 'server' | 'appended';
  /**
   * Who reads a Gmail-syntax query (MailSearch.query): the server itself (Gmail; Gmail's IMAP through
   * X-GM-RAW), or the provider, into IMAP SEARCH (src/mail/mail-query.ts), which cannot say all of it.
   */
  query: 'server' | 'read';
}

/** A draft's content: a base64url RFC 5322 message (buildReply()), in a thread. */
export interface DraftContent {
  threadId: string;
  raw: string;
}

/** A search in the mailbox: every field given narrows (AND). Each provider writes it in its own syntax. */
export interface MailSearch {
  /**
   * A plain address (addr-spec); a value that is not one matches nothing, so mail text never becomes
   * search syntax. On IMAP the message's one sender, as the reader reads From, must be this address
   * (SEARCH FROM alone matches substrings and display names); `to` likewise in To or Cc.
   */
  from?: string;
  to?: string;
  /** Mail from this domain (a plain domain name, else nothing matches): the provider's match on From; on IMAP the reader's sender at exactly this domain. */
  fromDomain?: string;
  subject?: string;
  /** Received on or after this time (IMAP SEARCH has day precision: the day it falls on). */
  since?: Date;
  before?: Date;
  unread?: boolean;
  /** A label id (opaque: Gmail's id, IMAP's name) the messages carry. */
  labelId?: string;
  /**
   * A label of ours, by name, the messages do not carry (a bulk label's "not labelled yet"): a
   * searchableLabelName (src/gmail/label-search.ts), else nothing matches. Gmail: -label:; IMAP: UNKEYWORD (Gmail's IMAP: its
   * X-GM-RAW); a server in folders mode keeps no such label and refuses it.
   */
  withoutLabel?: string;
  /**
   * A search as Gmail reads it (from:, subject:, newer_than:, is:unread, words…), the agent's: Gmail
   * runs it as is (with the fields above); IMAP reads what it can say of it (src/mail/mail-query.ts).
   */
  query?: string;
  /** The message with this Message-ID header (angle brackets or not). */
  messageId?: string;
  /** Where to look (default INBOX). ALL: everywhere but spam and trash; ANYWHERE: spam and trash too. */
  in?: 'INBOX' | 'SENT' | 'DRAFT' | 'TRASH' | 'SPAM' | 'ALL' | 'ANYWHERE';
  maxResults?: number;
  /** The previous page's nextPageToken (providers that page). */
  pageToken?: string;
}

/** One page of the messages received in a time range (the backfill's listing of a slice). */
export interface ReceivedRequest {
  /** Epoch ms, inclusive. */
  after: number;
  /** Epoch ms, exclusive. */
  before: number;
  /** Ids per page at most (a provider may return fewer, even none, with a next page). */
  pageSize: number;
  pageToken?: string;
}

export interface ReceivedPage {
  ids: string[];
  nextPageToken?: string;
}

/** Where the sync reads changes from: the cursor it holds (Gmail's history id, IMAP's folder states), a page at a time. */
export interface ChangesRequest {
  cursor: string;
  pageSize?: number;
  pageToken?: string;
}

export interface Mailbox {
  readonly capabilities: MailboxCapabilities;
  /** The account's address and the current change cursor (historyId). */
  getProfile(): Promise<{ emailAddress: string; historyId: string }>;
  /** The user's signature for replies, when the provider keeps one. */
  getSignature(): Promise<string | undefined>;
  getThread(threadId: string): Promise<ThreadSnapshot>;
  getThreadLabelIds(threadId: string): Promise<string[]>;
  /** A message; `metadata`: its headers without the body where the provider can leave it out. */
  getMessage(messageId: string, format?: 'full' | 'metadata'): Promise<ThreadMessage>;
  /** Newest first; ids and thread ids only. */
  searchMessages(search: MailSearch): Promise<MessageList>;
  /**
   * The backfill's reading of the whole mailbox (docs/backfill.md): every message but spam and trash
   * received in [after, before). How exact the bounds are is the provider's (Gmail: to the second, its
   * bounds' inclusiveness unverified, so the backfill widens them by its overlap; IMAP: exact, by
   * INTERNALDATE). The same message in two places is listed once per page at least; callers dedupe.
   */
  listReceived(request: ReceivedRequest): Promise<ReceivedPage>;
  /** When the oldest such message was received, if any before `before` (epoch ms; Gmail: the start of its UTC day). */
  oldestReceived(before: number): Promise<number | undefined>;
  /** How many messages the mailbox holds, roughly (what the backfill sizes its slices by). */
  countMessages(): Promise<number>;
  /**
   * What changed after `cursor`, as history records; `historyId` of the page is the cursor of now.
   * MailboxCursorExpiredError (src/mail/mailbox-errors.ts) when the cursor is void: read the mailbox again.
   */
  listChanges(request: ChangesRequest): Promise<HistoryPage>;
  listLabels(): Promise<MailboxLabel[]>;
  /** Label ids by name, created when missing. */
  ensureLabels(names: string[]): Promise<Map<string, string>>;
  modifyThread(threadId: string, change: LabelChange): Promise<void>;
  /** The message's labels after the change. */
  modifyMessage(messageId: string, change: LabelChange): Promise<string[]>;
  batchModify(messageIds: string[], change: LabelChange): Promise<void>;
  archiveThread(threadId: string): Promise<void>;
  trashThread(threadId: string): Promise<void>;
  untrashThread(threadId: string): Promise<void>;
  createDraft(content: DraftContent): Promise<DraftRef>;
  updateDraft(draftId: string, content: DraftContent): Promise<DraftRef>;
  getDraft(draftId: string): Promise<DraftInfo | null>;
  getDraftRaw(draftId: string): Promise<{ draftId: string; messageId: string; raw: string } | null>;
  /** False when the draft was gone already. */
  deleteDraft(draftId: string): Promise<boolean>;
  listDraftsForThread(threadId: string): Promise<DraftRef[]>;
  /** Sends a base64url RFC 5322 message, in the thread when given. */
  sendMessage(raw: string, threadId?: string): Promise<{ id: string; threadId: string }>;
  /**
   * Puts a message of ours (base64url RFC 5322) into the mailbox without sending it: our reminders,
   * reports and alerts. INBOX and UNREAD among the labels put it in the inbox unread; with threadId
   * it joins that thread where the provider threads by id (IMAP threads by its References).
   */
  insertMessage(raw: string, labelIds: string[], threadId?: string): Promise<{ id: string; threadId: string }>;
  /** A thread's first subject and sender and its newest snippet (the digest's lines). */
  getThreadSummary(threadId: string): Promise<{ subject: string; from: string; snippet: string }>;
}

/** A plain domain name, safe to put in any provider's search syntax; undefined for anything else. */
export function searchableDomain(domain: string): string | undefined {
  const d = domain.trim().toLowerCase().replace(/^@/, '');
  return /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?)+$/.test(d) ? d : undefined;
}

/** A plain addr-spec, safe to put in any provider's search syntax; undefined for anything else. */
export function searchableAddress(address: string): string | undefined {
  return /^[^\s"\\(){}<>@]+@[^\s"\\(){}<>@]+$/.test(address) ? address : undefined;
}

/** A Message-ID's id-left@id-right without its angle brackets, safe in any search syntax; undefined for anything else. */
export function searchableMessageId(messageId: string): string | undefined {
  const inner = messageId.trim().replace(/^<|>$/g, '');
  return /^[^\s<>"\\()]+@[^\s<>"\\()]+$/.test(inner) ? inner : undefined;
}
