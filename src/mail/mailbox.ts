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
}

/** A draft's content: a base64url RFC 5322 message (buildReply()), in a thread. */
export interface DraftContent {
  threadId: string;
  raw: string;
}

/** A search in the mailbox: every field given narrows (AND). Each provider writes it in its own syntax. */
export interface MailSearch {
  /** A plain address (addr-spec); a value that is not one matches nothing, so mail text never becomes search syntax. */
  from?: string;
  to?: string;
  subject?: string;
  /** Received on or after this time (IMAP SEARCH has day precision: the day it falls on). */
  since?: Date;
  before?: Date;
  unread?: boolean;
  /** A label id (opaque: Gmail's id, IMAP's name) the messages carry. */
  labelId?: string;
  /** Where to look (default INBOX). ALL: everywhere but spam and trash. */
  in?: 'INBOX' | 'SENT' | 'DRAFT' | 'TRASH' | 'SPAM' | 'ALL';
  maxResults?: number;
  /** The previous page's nextPageToken (providers that page). */
  pageToken?: string;
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
  getMessage(messageId: string): Promise<ThreadMessage>;
  /** Newest first; ids and thread ids only. */
  searchMessages(search: MailSearch): Promise<MessageList>;
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
}

/** A plain addr-spec, safe to put in any provider's search syntax; undefined for anything else. */
export function searchableAddress(address: string): string | undefined {
  return /^[^\s"\\(){}<>@]+@[^\s"\\(){}<>@]+$/.test(address) ? address : undefined;
}
