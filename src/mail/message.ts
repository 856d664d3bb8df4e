// The product's own shapes of mail, whichever mailbox it comes from (the Gmail API, IMAP): messages,
// threads, drafts, label changes and the change records the sync reads. Everything here is plain JSON
// so it can cross the Temporal activity boundary unchanged (no Dates, no Maps, no class instances).
// A few shapes are the Gmail API's alone (profile, labels list, watch) and say so.

/** An RFC 5322 mailbox: `name` is decoded display text, `address` the bare addr-spec. */
export interface EmailAddress {
  name?: string;
  address: string;
}

export interface AttachmentInfo {
  filename: string;
  mimeType: string;
  /** Bytes as Gmail reports them (size of the decoded content). */
  size: number;
  /** Present when the content must be fetched with messages.attachments.get; we never download it here. */
  attachmentId?: string;
  partId?: string;
}

/** Where the body text came from: a text/plain part, a crude text rendering of text/html, or nothing usable. */
export type BodySource = 'text/plain' | 'text/html' | 'none';

export interface ThreadMessage {
  id: string;
  threadId: string;
  labelIds: string[];
  /** Epoch ms when Gmail accepted the message; more reliable for ordering than the Date header. */
  internalDate: number;
  historyId: string;
  /** Gmail's estimate of the message's size in bytes; absent when Gmail gave none. */
  sizeEstimate?: number;
  snippet: string;
  /** RFC 5322 Message-ID including angle brackets, or '' when the message has none. */
  messageId: string;
  /** Message-IDs from the References header, oldest first. */
  references: string[];
  inReplyTo: string;
  from: EmailAddress | null;
  to: EmailAddress[];
  cc: EmailAddress[];
  replyTo: EmailAddress[];
  /** The Subject, decoded, line breaks read as spaces: for showing. */
  subject: string;
  /**
   * The Subject exactly as Gmail holds it, when that differs from `subject` (a line break or NUL an
   * encoded word held): what a reply repeats, since Gmail keeps a reply in its thread only when the
   * subjects match.
   */
  exactSubject?: string;
  /** The Date header as written by the sender (unparsed; use internalDate for ordering). */
  date: string;
  body: string;
  bodySource: BodySource;
  attachments: AttachmentInfo[];
  /** Top-level headers, keys lower-cased, values RFC 2047-decoded; the first occurrence wins. */
  headers: Record<string, string>;
  /** Gmail marks everything the account sent with SENT; drafts carry only DRAFT. */
  isFromUser: boolean;
  isDraft: boolean;
  /** Everything odd the MIME walker noticed; parsing never throws. */
  parseWarnings: string[];
  /** Set when the body was read as text despite its MIME (a multipart whose boundary never appears): what was wrong. */
  bodyDefect?: string;
}

export interface ThreadSnapshot {
  threadId: string;
  historyId: string;
  /** In the order Gmail returns them (oldest first). */
  messages: ThreadMessage[];
}

/** What drafts.create / update / list tell us: ids only, no content. */
export interface DraftRef {
  draftId: string;
  messageId: string;
  threadId: string;
}

export interface DraftInfo extends DraftRef {
  body: string;
  message: ThreadMessage;
}

export interface GmailProfile {
  emailAddress: string;
  historyId: string;
  messagesTotal: number;
  threadsTotal: number;
}

export interface MailboxLabel {
  id: string;
  name: string;
  type: 'system' | 'user';
}

export interface LabelChange {
  /** Label ids (not names) to add. */
  add?: string[];
  /** Label ids (not names) to remove. */
  remove?: string[];
}

export interface MessageRef {
  id: string;
  threadId: string;
}

export interface MessageList {
  messages: MessageRef[];
  nextPageToken?: string;
  resultSizeEstimate: number;
}

export interface LabelHistoryChange {
  message: MessageRef & { labelIds: string[] };
  labelIds: string[];
}

export interface HistoryRecord {
  id: string;
  messages: MessageRef[];
  messagesAdded: Array<MessageRef & { labelIds: string[] }>;
  messagesDeleted: MessageRef[];
  labelsAdded: LabelHistoryChange[];
  labelsRemoved: LabelHistoryChange[];
}

export type HistoryType = 'messageAdded' | 'messageDeleted' | 'labelAdded' | 'labelRemoved';

export interface HistoryPage {
  records: HistoryRecord[];
  nextPageToken?: string;
  /** The mailbox's current history id at the time of the call. */
  historyId: string;
}

export interface WatchResult {
  historyId: string;
  /** Epoch ms. */
  expiration: number;
}
