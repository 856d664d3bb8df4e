// One mailbox, whichever provider serves it: the Gmail API (src/gmail/gmail-service.ts) or IMAP and
// SMTP (src/imap/imap-mailbox.ts). The operations both providers share, in the product's own shapes,
// and what each provider declares where they differ, so that the code above reads the declaration
// instead of asking which provider it talks to. Label ids are opaque: Gmail's ids, IMAP's names.
import type { DraftInfo, DraftRef, LabelChange, ThreadMessage, ThreadSnapshot } from './message.js';

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

export interface Mailbox {
  readonly capabilities: MailboxCapabilities;
  getThread(threadId: string): Promise<ThreadSnapshot>;
  getThreadLabelIds(threadId: string): Promise<string[]>;
  getMessage(messageId: string): Promise<ThreadMessage>;
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
