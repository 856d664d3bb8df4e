// The Gmail calls durable-inbox makes. Each method wraps one Gmail API call (paging loops and chunking are the
// documented exceptions), parses the answer into our own types, and maps failures to typed GmailErrors so a
// Temporal activity can hand them to its retry policy unchanged.

import { gmailLabelTerm } from './label-search.js';
import type { gmail_v1 } from 'googleapis';
import { GmailConflictError, GmailNotFoundError, mapGmailError, type GmailResource } from './errors.js';
import { bodyOnlyInRaw, parseGmailMessage } from './mime.js';
import { decodeBase64Url } from './mime-encoding.js';
import { htmlToText } from './html-text.js';
import { inSpan } from '../temporal/tracing.js';
import type {
  DraftInfo,
  DraftRef,
  MailboxLabel,
  GmailProfile,
  HistoryPage,
  HistoryRecord,
  HistoryType,
  LabelChange,
  LabelHistoryChange,
  MessageList,
  MessageRef,
  ThreadMessage,
  ThreadSnapshot,
  WatchResult,
} from '../mail/message.js';
import { searchableAddress, searchableDomain, searchableMessageId, type ChangesRequest, type DraftContent, type Mailbox, type MailboxCapabilities, type MailSearch, type ReceivedPage, type ReceivedRequest } from '../mail/mailbox.js';
import { MailboxCursorExpiredError } from '../mail/mailbox-errors.js';

/** users.messages.batchModify accepts at most this many ids per call. */
export const BATCH_MODIFY_MAX_IDS = 1000;

export type MessageFormat = 'full' | 'metadata' | 'minimal';

export interface ListMessagesOptions {
  q?: string;
  labelIds?: string[];
  pageToken?: string;
  /** ≤ 500. */
  maxResults?: number;
  includeSpamTrash?: boolean;
}

export interface ListHistoryOptions {
  startHistoryId: string;
  historyTypes?: HistoryType[];
  labelId?: string;
  pageToken?: string;
  /** ≤ 500. */
  maxResults?: number;
}

export interface WatchOptions {
  topicName: string;
  labelIds?: string[];
  labelFilterBehavior?: 'include' | 'exclude';
}

/**
 * Runs every API call of a service, given the method name (as in the quota table, e.g.
 * 'threads.get'): the hook through which the shared quota limiter meters them.
 */
export type GmailCallGate = <T>(method: string, call: () => Promise<T>) => Promise<T>;

/** What the Gmail API is, as a mailbox: labels and thread ids of its own, push through Pub/Sub, Sent filed by Gmail. */
export const GMAIL_CAPABILITIES: MailboxCapabilities = { provider: 'gmail', labels: 'labels', threadIds: 'server', changes: 'push', sentCopy: 'server', query: 'server' };

const DAY_MS = 86_400_000;

export class GmailService implements Mailbox {
  readonly capabilities = GMAIL_CAPABILITIES;

  constructor(
    private readonly gmail: gmail_v1.Gmail,
    private readonly userId: string = 'me',
    private readonly gate?: GmailCallGate,
  ) {}

  /** The signature of the primary send-as address, as plain text; undefined when there is none. */
  async getSignature(): Promise<string | undefined> {
    const data = await this.call('settings.sendAs.list', 'settings', () =>
      this.gmail.users.settings.sendAs.list({ userId: this.userId }),
    );
    const primary = data.sendAs?.find((s) => s.isPrimary) ?? data.sendAs?.[0];
    const text = primary?.signature ? htmlToText(primary.signature).trim() : '';
    return text || undefined;
  }

  async getProfile(): Promise<GmailProfile> {
    const data = await this.call('users.getProfile', 'profile', () => this.gmail.users.getProfile({ userId: this.userId }));
    return {
      emailAddress: data.emailAddress ?? '',
      historyId: data.historyId ?? '',
      messagesTotal: data.messagesTotal ?? 0,
      threadsTotal: data.threadsTotal ?? 0,
    };
  }

  async getThread(threadId: string): Promise<ThreadSnapshot> {
    const data = await this.call('threads.get', 'thread', () =>
      this.gmail.users.threads.get({ userId: this.userId, id: threadId, format: 'full' }),
    );
    return {
      threadId: data.id ?? threadId,
      historyId: data.historyId ?? '',
      messages: await Promise.all((data.messages ?? []).map((m) => this.parseFull(m))),
    };
  }

  /**
   * A format=full message as ours. One whose body Gmail gave neither parts nor bytes of (a multipart whose
   * boundary never appears) is read again in the raw format, so its body can be read as text.
   */
  private async parseFull(message: gmail_v1.Schema$Message): Promise<ThreadMessage> {
    const id = message.id;
    if (!id || !bodyOnlyInRaw(message.payload)) return parseGmailMessage(message);
    try {
      const data = await this.call('messages.get', 'message', () => this.gmail.users.messages.get({ userId: this.userId, id, format: 'raw' }));
      return parseGmailMessage(message, decodeBase64Url(data.raw ?? ''));
    } catch (err) {
      if (err instanceof GmailNotFoundError) return parseGmailMessage(message); // deleted meanwhile: read what we have
      throw err;
    }
  }

  /** Subject and sender of the thread's first message, the snippet of its newest (threads.get, format metadata). */
  async getThreadSummary(threadId: string): Promise<{ subject: string; from: string; snippet: string }> {
    const data = await this.call('threads.get', 'thread', () =>
      this.gmail.users.threads.get({ userId: this.userId, id: threadId, format: 'metadata', metadataHeaders: ['Subject', 'From'] }),
    );
    const messages = data.messages ?? [];
    const header = (name: string) => messages[0]?.payload?.headers?.find((h) => h.name?.toLowerCase() === name.toLowerCase())?.value ?? '';
    return { subject: header('Subject'), from: header('From'), snippet: messages.at(-1)?.snippet ?? '' };
  }

  /** The label ids on any message of the thread (threads.get, format minimal). */
  async getThreadLabelIds(threadId: string): Promise<string[]> {
    const data = await this.call('threads.get', 'thread', () =>
      this.gmail.users.threads.get({ userId: this.userId, id: threadId, format: 'minimal' }),
    );
    return [...new Set((data.messages ?? []).flatMap((m) => m.labelIds ?? []))];
  }

  async listLabels(): Promise<MailboxLabel[]> {
    const data = await this.call('labels.list', 'label', () => this.gmail.users.labels.list({ userId: this.userId }));
    return (data.labels ?? []).flatMap((label) =>
      label.id && label.name ? [{ id: label.id, name: label.name, type: label.type === 'system' ? 'system' : 'user' } as const] : [],
    );
  }

  /**
   * Label name → id for every name, creating the missing ones. Safe to run concurrently with another worker
   * doing the same: a 409 from labels.create means someone else just created it, so we look it up again.
   * Gmail compares label names case-insensitively, so an existing "outbox" satisfies "Outbox".
   */
  async ensureLabels(names: string[]): Promise<Map<string, string>> {
    const wanted = [...new Set(names)];
    let labels = await this.listLabels();
    const result = new Map<string, string>();
    for (const name of wanted) {
      const existing = findLabel(labels, name);
      if (existing) {
        result.set(name, existing.id);
        continue;
      }
      try {
        const created = await this.call('labels.create', 'label', () =>
          this.gmail.users.labels.create({
            userId: this.userId,
            requestBody: { name, labelListVisibility: 'labelShow', messageListVisibility: 'show' },
          }),
        );
        if (!created.id) throw mapGmailError(new Error('labels.create returned no id'), { operation: 'labels.create' });
        result.set(name, created.id);
      } catch (err) {
        if (!(err instanceof GmailConflictError)) throw err;
        labels = await this.listLabels();
        const raced = findLabel(labels, name);
        if (!raced) throw err;
        result.set(name, raced.id);
      }
    }
    return result;
  }

  /** Adds/removes label ids on every message of the thread. A no-op without changes. */
  async modifyThread(threadId: string, change: LabelChange): Promise<void> {
    if (isEmptyChange(change)) return;
    await this.call('threads.modify', 'thread', () =>
      this.gmail.users.threads.modify({
        userId: this.userId,
        id: threadId,
        requestBody: { addLabelIds: change.add ?? [], removeLabelIds: change.remove ?? [] },
      }),
    );
  }

  /** Returns the message's label ids after the change. Gmail refuses an empty change (400), so that one only reads them. */
  async modifyMessage(messageId: string, change: LabelChange): Promise<string[]> {
    if (isEmptyChange(change)) return (await this.getMessage(messageId, 'minimal')).labelIds;
    const data = await this.call('messages.modify', 'message', () =>
      this.gmail.users.messages.modify({
        userId: this.userId,
        id: messageId,
        requestBody: { addLabelIds: change.add ?? [], removeLabelIds: change.remove ?? [] },
      }),
    );
    return data.labelIds ?? [];
  }

  /**
   * One batchModify per 1000 ids. Label changes are idempotent, so if a later chunk fails the whole call can
   * simply be retried.
   */
  async batchModify(messageIds: string[], change: LabelChange): Promise<void> {
    if (messageIds.length === 0 || isEmptyChange(change)) return;
    for (let start = 0; start < messageIds.length; start += BATCH_MODIFY_MAX_IDS) {
      const ids = messageIds.slice(start, start + BATCH_MODIFY_MAX_IDS);
      await this.call('messages.batchModify', 'message', () =>
        this.gmail.users.messages.batchModify({
          userId: this.userId,
          requestBody: { ids, addLabelIds: change.add ?? [], removeLabelIds: change.remove ?? [] },
        }),
      );
    }
  }

  /** Sends a message (raw RFC 2822, base64url); with threadId it joins that thread. */
  async sendMessage(raw: string, threadId?: string): Promise<{ id: string; threadId: string }> {
    const data = await this.call('messages.send', 'message', () =>
      this.gmail.users.messages.send({ userId: this.userId, requestBody: { raw, ...(threadId ? { threadId } : {}) } }),
    );
    return { id: data.id ?? '', threadId: data.threadId ?? threadId ?? '' };
  }

  /** Puts a message (raw RFC 2822, base64url) straight into the mailbox, without sending it; with threadId, into that thread. */
  async insertMessage(raw: string, labelIds: string[], threadId?: string): Promise<{ id: string; threadId: string }> {
    const data = await this.call('messages.insert', 'message', () =>
      this.gmail.users.messages.insert({
        userId: this.userId,
        internalDateSource: 'receivedTime',
        requestBody: { raw, labelIds, ...(threadId ? { threadId } : {}) },
      }),
    );
    return { id: data.id ?? '', threadId: data.threadId ?? '' };
  }

  async trashThread(threadId: string): Promise<void> {
    await this.call('threads.trash', 'thread', () => this.gmail.users.threads.trash({ userId: this.userId, id: threadId }));
  }

  /** Gmail puts the messages back where they were (INBOX included). */
  async untrashThread(threadId: string): Promise<void> {
    await this.call('threads.untrash', 'thread', () => this.gmail.users.threads.untrash({ userId: this.userId, id: threadId }));
  }

  async archiveThread(threadId: string): Promise<void> {
    await this.modifyThread(threadId, { remove: ['INBOX'] });
  }

  /** Look first with listDraftsForThread: Gmail happily keeps two drafts in one thread. */
  async createDraft(content: DraftContent): Promise<DraftRef> {
    const data = await this.call('drafts.create', 'thread', () =>
      this.gmail.users.drafts.create({
        userId: this.userId,
        // raw in the JSON body, not a media upload: media uploads ignore rootUrl (see gmail-api.md).
        requestBody: { message: { raw: content.raw, threadId: content.threadId } },
      }),
    );
    return draftRef(data, content.threadId);
  }

  /** null when the draft no longer exists (sent or deleted by the user). */
  async getDraft(draftId: string): Promise<DraftInfo | null> {
    try {
      const data = await this.call('drafts.get', 'draft', () =>
        this.gmail.users.drafts.get({ userId: this.userId, id: draftId, format: 'full' }),
      );
      const message = parseGmailMessage(data.message ?? {});
      return { draftId: data.id ?? draftId, messageId: message.id, threadId: message.threadId, body: message.body, message };
    } catch (err) {
      if (err instanceof GmailNotFoundError) return null;
      throw err;
    }
  }

  /** The draft's message as Gmail holds it (raw RFC 2822, base64url): every part and attachment; null when it is gone. */
  async getDraftRaw(draftId: string): Promise<{ draftId: string; messageId: string; raw: string } | null> {
    try {
      const data = await this.call('drafts.get', 'draft', () => this.gmail.users.drafts.get({ userId: this.userId, id: draftId, format: 'raw' }));
      return { draftId: data.id ?? draftId, messageId: data.message?.id ?? '', raw: data.message?.raw ?? '' };
    } catch (err) {
      if (err instanceof GmailNotFoundError) return null;
      throw err;
    }
  }

  /** Replaces the draft's message: same draft id, new message id. */
  async updateDraft(draftId: string, content: DraftContent): Promise<DraftRef> {
    const data = await this.call('drafts.update', 'draft', () =>
      this.gmail.users.drafts.update({
        userId: this.userId,
        id: draftId,
        requestBody: { id: draftId, message: { raw: content.raw, threadId: content.threadId } },
      }),
    );
    return draftRef(data, content.threadId);
  }

  /**
   * true when this call deleted it, false when it was already gone — so a retried activity whose first
   * attempt succeeded (but lost the response) does not fail.
   */
  async deleteDraft(draftId: string): Promise<boolean> {
    try {
      await this.call('drafts.delete', 'draft', () => this.gmail.users.drafts.delete({ userId: this.userId, id: draftId }));
      return true;
    } catch (err) {
      if (err instanceof GmailNotFoundError) return false;
      throw err;
    }
  }

  /**
   * The drafts whose message is in the thread. Gmail search has no thread filter, so this pages through
   * drafts.list (500 at a time; mailboxes rarely hold more than a handful of drafts).
   */
  async listDraftsForThread(threadId: string): Promise<DraftRef[]> {
    const found: DraftRef[] = [];
    let pageToken: string | undefined;
    do {
      const data = await this.call('drafts.list', 'draft', () =>
        this.gmail.users.drafts.list({ userId: this.userId, maxResults: 500, ...(pageToken ? { pageToken } : {}) }),
      );
      for (const draft of data.drafts ?? []) {
        if (draft.id && draft.message?.threadId === threadId) {
          found.push({ draftId: draft.id, messageId: draft.message.id ?? '', threadId });
        }
      }
      pageToken = data.nextPageToken ?? undefined;
    } while (pageToken);
    return found;
  }

  /** One page of messages.list. */
  async listMessages(options: ListMessagesOptions = {}): Promise<MessageList> {
    const data = await this.call('messages.list', 'message', () =>
      this.gmail.users.messages.list({
        userId: this.userId,
        q: options.q,
        labelIds: options.labelIds,
        pageToken: options.pageToken,
        maxResults: options.maxResults,
        includeSpamTrash: options.includeSpamTrash,
      }),
    );
    return {
      messages: (data.messages ?? []).flatMap(messageRef),
      ...(data.nextPageToken ? { nextPageToken: data.nextPageToken } : {}),
      resultSizeEstimate: data.resultSizeEstimate ?? 0,
    };
  }

  /** messages.list with `after:`/`before:` in epoch seconds, widened to whole seconds (Gmail's search has no finer bound). */
  async listReceived({ after, before, pageSize, pageToken }: ReceivedRequest): Promise<ReceivedPage> {
    const q = `after:${Math.max(0, Math.floor(after / 1000))} before:${Math.ceil(before / 1000)}`;
    const page = await this.listMessages({ q, maxResults: pageSize, ...(pageToken ? { pageToken } : {}) });
    return { ids: page.messages.map((m) => m.id), ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}) };
  }

  /**
   * The UTC day of the oldest message, by bisection on `before:` (Gmail lists newest first and has no
   * "oldest" order): ~15 one-result list calls instead of paging the mailbox.
   */
  async oldestReceived(before: number): Promise<number | undefined> {
    const any = async (beforeMs: number) => (await this.listMessages({ q: `before:${Math.floor(beforeMs / 1000)}`, maxResults: 1 })).messages.length > 0;
    let lo = 0; // day index: nothing before lo*DAY
    let hi = Math.ceil(before / DAY_MS); // something before hi*DAY, if anything at all
    if (!(await any(hi * DAY_MS))) return undefined;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (await any(mid * DAY_MS)) hi = mid;
      else lo = mid;
    }
    return lo * DAY_MS;
  }

  async countMessages(): Promise<number> {
    return (await this.getProfile()).messagesTotal;
  }

  /** A neutral search as a Gmail query (quoted terms only: an address that is not plain matches nothing). */
  async searchMessages(search: MailSearch): Promise<MessageList> {
    const q = gmailQuery(search);
    if (q === null) return { messages: [], resultSizeEstimate: 0 };
    return this.listMessages({
      ...(q ? { q } : {}),
      ...(search.labelId ? { labelIds: [search.labelId] } : {}),
      ...(search.maxResults ? { maxResults: search.maxResults } : {}),
      ...(search.pageToken ? { pageToken: search.pageToken } : {}),
      ...(search.in === 'TRASH' || search.in === 'SPAM' || search.in === 'ANYWHERE' ? { includeSpamTrash: true } : {}),
    });
  }

  /** history.list from the cursor (the types the sync follows); an expired history id is MailboxCursorExpiredError. */
  async listChanges({ cursor, pageSize, pageToken }: ChangesRequest): Promise<HistoryPage> {
    try {
      return await this.listHistory({
        startHistoryId: cursor,
        historyTypes: ['messageAdded', 'messageDeleted', 'labelAdded', 'labelRemoved'],
        ...(pageSize ? { maxResults: pageSize } : {}),
        ...(pageToken ? { pageToken } : {}),
      });
    } catch (err) {
      if (err instanceof GmailNotFoundError && err.resource === 'history') {
        throw new MailboxCursorExpiredError(`Gmail history id ${cursor.slice(0, 40)} has expired: the mailbox must be read again.`);
      }
      throw err;
    }
  }

  async getMessage(messageId: string, format: MessageFormat = 'full', metadataHeaders?: string[]): Promise<ThreadMessage> {
    const data = await this.call('messages.get', 'message', () =>
      this.gmail.users.messages.get({
        userId: this.userId,
        id: messageId,
        format,
        ...(format === 'metadata' && metadataHeaders ? { metadataHeaders } : {}),
      }),
    );
    return format === 'full' ? this.parseFull(data) : parseGmailMessage(data);
  }

  /**
   * One page of history.list. A GmailNotFoundError with resource 'history' means startHistoryId is too old:
   * the caller must run a full sync for the gap, never skip it.
   */
  async listHistory(options: ListHistoryOptions): Promise<HistoryPage> {
    const data = await this.call('history.list', 'history', () =>
      this.gmail.users.history.list({
        userId: this.userId,
        startHistoryId: options.startHistoryId,
        historyTypes: options.historyTypes,
        labelId: options.labelId,
        pageToken: options.pageToken,
        maxResults: options.maxResults,
      }),
    );
    return {
      records: (data.history ?? []).map(historyRecord),
      ...(data.nextPageToken ? { nextPageToken: data.nextPageToken } : {}),
      historyId: data.historyId ?? '',
    };
  }

  async watch(options: WatchOptions): Promise<WatchResult> {
    const data = await this.call('users.watch', 'unknown', () =>
      this.gmail.users.watch({
        userId: this.userId,
        requestBody: {
          topicName: options.topicName,
          labelIds: options.labelIds,
          labelFilterBehavior: options.labelFilterBehavior,
        },
      }),
    );
    return { historyId: data.historyId ?? '', expiration: Number(data.expiration ?? 0) };
  }

  async stop(): Promise<void> {
    await this.call('users.stop', 'unknown', () => this.gmail.users.stop({ userId: this.userId }));
  }

  private async call<T>(operation: string, resource: GmailResource, request: () => Promise<{ data: T }>): Promise<T> {
    const run = async () => {
      try {
        const response = await request();
        return response.data;
      } catch (err) {
        throw mapGmailError(err, { operation, resource });
      }
    };
    // The span is the HTTP call itself, after the quota gate let it through.
    const traced = () => inSpan(`gmail ${operation}`, { 'gmail.operation': operation }, run);
    return this.gate ? this.gate(operation, traced) : traced();
  }
}

function findLabel(labels: MailboxLabel[], name: string): MailboxLabel | undefined {
  return labels.find((l) => l.name === name) ?? labels.find((l) => l.name.toLowerCase() === name.toLowerCase());
}

function isEmptyChange(change: LabelChange): boolean {
  return (change.add ?? []).length === 0 && (change.remove ?? []).length === 0;
}

function draftRef(data: gmail_v1.Schema$Draft, threadId: string): DraftRef {
  return { draftId: data.id ?? '', messageId: data.message?.id ?? '', threadId: data.message?.threadId ?? threadId };
}

function messageRef(message: gmail_v1.Schema$Message | null | undefined): MessageRef[] {
  return message?.id ? [{ id: message.id, threadId: message.threadId ?? '' }] : [];
}

function messageRefWithLabels(message: gmail_v1.Schema$Message | null | undefined): Array<MessageRef & { labelIds: string[] }> {
  return message?.id ? [{ id: message.id, threadId: message.threadId ?? '', labelIds: message.labelIds ?? [] }] : [];
}

function labelChanges(entries: Array<{ message?: gmail_v1.Schema$Message; labelIds?: string[] | null }> | undefined): LabelHistoryChange[] {
  return (entries ?? []).flatMap((entry) =>
    messageRefWithLabels(entry.message).map((message) => ({ message, labelIds: entry.labelIds ?? [] })),
  );
}

function historyRecord(record: gmail_v1.Schema$History): HistoryRecord {
  return {
    id: record.id ?? '',
    messages: (record.messages ?? []).flatMap(messageRef),
    messagesAdded: (record.messagesAdded ?? []).flatMap((a) => messageRefWithLabels(a.message)),
    messagesDeleted: (record.messagesDeleted ?? []).flatMap((d) => messageRef(d.message)),
    labelsAdded: labelChanges(record.labelsAdded),
    labelsRemoved: labelChanges(record.labelsRemoved),
  };
}

const GMAIL_IN: Record<NonNullable<MailSearch['in']>, string> = {
  INBOX: 'in:inbox',
  SENT: 'in:sent',
  DRAFT: 'in:drafts',
  TRASH: 'in:trash',
  SPAM: 'in:spam',
  ALL: '',
  ANYWHERE: '',
};

/** A neutral search in Gmail's syntax; null when it can match nothing (an address that is not plain). */
export function gmailQuery(search: MailSearch): string | null {
  // A query of its own says where it looks (in:…), as Gmail reads it: everywhere but spam and trash unless it says.
  const terms = [search.query !== undefined && search.in === undefined ? '' : GMAIL_IN[search.in ?? 'INBOX'], search.query ?? ''];
  for (const field of ['from', 'to'] as const) {
    const value = search[field];
    if (value === undefined) continue;
    const address = searchableAddress(value);
    if (!address) return null;
    terms.push(`${field}:"${address}"`);
  }
  if (search.fromDomain !== undefined) {
    const domain = searchableDomain(search.fromDomain);
    if (!domain) return null;
    terms.push(`from:"@${domain}"`);
  }
  if (search.messageId !== undefined) {
    const id = searchableMessageId(search.messageId);
    if (!id) return null;
    terms.push(`rfc822msgid:${id}`);
  }
  if (search.subject !== undefined) terms.push(`subject:"${search.subject.replace(/["\\\s]+/g, ' ').trim()}"`);
  if (search.since) terms.push(`after:${Math.floor(search.since.getTime() / 1000)}`);
  if (search.before) terms.push(`before:${Math.floor(search.before.getTime() / 1000)}`);
  if (search.unread !== undefined) terms.push(search.unread ? 'is:unread' : '-is:unread');
  if (search.withoutLabel !== undefined) {
    const label = gmailLabelTerm(search.withoutLabel);
    if (!label) return null;
    terms.push(`-label:${label}`);
  }
  return terms.filter(Boolean).join(' ');
}
