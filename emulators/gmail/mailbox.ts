// One Gmail mailbox in memory: messages by id, threads, labels, drafts, the history log, and a
// date-ordered index for list/search and after:/before: slices. Every change goes through
// `record()`, which assigns the next history id and tells the push layer.
import { ByteArena, ownString } from './arena.js';
import { badRequest, notFound } from './errors.js';
import { HistoryLog, type HistoryRecord, type HistoryType } from './history.js';
import type { IdSource } from './ids.js';
import { LabelTable } from './labels.js';
import { describeRaw, type StoredMessage } from './message.js';
import { headerValue, parseTopHeaders } from './mime.js';
import { compileQuery } from './query.js';

export interface MailboxContext {
  ids: IdSource;
  now: () => number;
  historyRetentionMs: number;
}

export interface InsertOptions {
  labelIds: string[];
  internalDate?: number;
  /**
   * How to choose the thread: `api` joins `threadId` only when Gmail would (subject matches and the
   * message carries In-Reply-To/References); `incoming` follows In-Reply-To/References; `exact`
   * joins `threadId` unconditionally (a draft being sent stays in its thread).
   */
  threading: 'api' | 'incoming' | 'exact';
  threadId?: string;
  /** Seeding and imports do not write history (their ids are "older than retention"). */
  recordHistory?: boolean;
}

export interface ListOptions {
  q?: string;
  labelIds?: string[];
  includeSpamTrash?: boolean;
  maxResults: number;
  pageToken?: string;
}

export interface Draft {
  id: string;
  messageId: string;
}

/** A mailbox as plain data (the emulator's state file): messages oldest first, raw bytes in base64. */
export interface MailboxSnapshot {
  historyId: number;
  signature: string;
  labels: ReturnType<LabelTable['snapshot']>;
  history: ReturnType<HistoryLog['snapshot']>;
  messages: Array<Omit<StoredMessage, 'raw'> & { raw: string }>;
  drafts: Draft[];
  threadByRfc822Id: Array<[string, string]>;
}

type Cursor = { d: number; i: string };

function compareMessages(a: { internalDate: number; id: string }, b: { internalDate: number; id: string }): number {
  return a.internalDate - b.internalDate || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function encodeCursor(msg: StoredMessage): string {
  return Buffer.from(JSON.stringify({ d: msg.internalDate, i: msg.id } satisfies Cursor)).toString('base64url');
}

function decodeCursor(token: string): Cursor {
  try {
    const cursor = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Cursor;
    if (typeof cursor.d === 'number' && typeof cursor.i === 'string') return cursor;
  } catch {
    // fall through
  }
  throw badRequest('Invalid pageToken');
}

/** Subject as Gmail compares it for threading: reply/forward prefixes dropped, case folded. */
export function normalizeSubject(subject: string): string {
  return subject
    .replace(/^(\s*(re|fw|fwd|aw|sv|wg|tr)(\[\d+\])?\s*:\s*)+/i, '')
    .trim()
    .toLowerCase();
}

export class Mailbox {
  readonly labels = new LabelTable();
  readonly history: HistoryLog;
  historyId: number;
  /** The primary send-as address's signature (HTML), as users.settings.sendAs.list shows it. */
  signature = '';
  /** Called after every recorded change (the push layer listens). */
  onChange?: (record: HistoryRecord) => void;

  private readonly messages = new Map<string, StoredMessage>();
  /** Thread id → its messages, oldest first. */
  private readonly threads = new Map<string, StoredMessage[]>();
  /** All messages ascending by (internalDate, id). */
  private readonly byDate: StoredMessage[] = [];
  /** RFC 2822 Message-ID → thread id, for threading replies. */
  private readonly threadByRfc822Id = new Map<string, string>();
  private readonly drafts = new Map<string, Draft>();
  private readonly draftByMessageId = new Map<string, string>();
  private readonly estimateCache = new Map<string, number>();
  private estimateCacheVersion = -1;
  /** Bumped by every change to messages or labels (seeding included, which writes no history). */
  private version = 0;
  /** Raw bytes of this mailbox's messages (space of deleted messages is not reclaimed). */
  private readonly arena = new ByteArena();

  constructor(
    readonly email: string,
    private readonly ctx: MailboxContext,
    initialHistoryId: number,
  ) {
    this.historyId = initialHistoryId;
    this.history = new HistoryLog(initialHistoryId);
  }

  get messagesTotal(): number {
    return this.messages.size;
  }

  get threadsTotal(): number {
    return this.threads.size;
  }

  // ------------------------------------------------------------ snapshot

  snapshot(): MailboxSnapshot {
    return {
      historyId: this.historyId,
      signature: this.signature,
      labels: this.labels.snapshot(),
      history: this.history.snapshot(),
      messages: this.byDate.map((m) => ({ ...m, raw: m.raw.toString('base64') })),
      drafts: [...this.drafts.values()].map((d) => ({ ...d })),
      threadByRfc822Id: [...this.threadByRfc822Id],
    };
  }

  /** Fills this (new, empty) mailbox from a snapshot. */
  restore(state: MailboxSnapshot): void {
    if (this.messages.size > 0) throw new Error(`mailbox ${this.email} is not empty: cannot restore into it`);
    this.historyId = state.historyId;
    this.signature = state.signature;
    this.labels.restore(state.labels);
    this.history.restore(state.history);
    // Oldest first: byDate and every thread come out in their sorted order.
    for (const saved of state.messages) {
      const msg: StoredMessage = { ...saved, labelIds: [...saved.labelIds], raw: this.arena.keep(Buffer.from(saved.raw, 'base64')) };
      this.messages.set(msg.id, msg);
      this.byDate.push(msg);
      const thread = this.threads.get(msg.threadId);
      if (thread) thread.push(msg);
      else this.threads.set(msg.threadId, [msg]);
    }
    for (const [rfc822Id, threadId] of state.threadByRfc822Id) this.threadByRfc822Id.set(rfc822Id, threadId);
    for (const draft of state.drafts) {
      this.drafts.set(draft.id, { ...draft });
      this.draftByMessageId.set(draft.messageId, draft.id);
    }
    this.version++;
  }

  // ------------------------------------------------------------ reads

  findMessage(id: string): StoredMessage | undefined {
    return this.messages.get(id);
  }

  getMessage(id: string): StoredMessage {
    const msg = this.messages.get(id);
    if (!msg) throw notFound();
    return msg;
  }

  getThread(id: string): StoredMessage[] {
    const thread = this.threads.get(id);
    if (!thread) throw notFound();
    return thread;
  }

  threadHistoryId(thread: readonly StoredMessage[]): number {
    let max = 0;
    for (const m of thread) max = Math.max(max, m.historyId);
    return max;
  }

  allMessages(): readonly StoredMessage[] {
    return this.byDate;
  }

  labelCounts(labelId: string): { messagesTotal: number; messagesUnread: number; threadsTotal: number; threadsUnread: number } {
    let messagesTotal = 0;
    let messagesUnread = 0;
    const threads = new Set<string>();
    const unreadThreads = new Set<string>();
    for (const msg of this.byDate) {
      if (!msg.labelIds.includes(labelId)) continue;
      messagesTotal++;
      threads.add(msg.threadId);
      if (msg.labelIds.includes('UNREAD')) {
        messagesUnread++;
        unreadThreads.add(msg.threadId);
      }
    }
    return { messagesTotal, messagesUnread, threadsTotal: threads.size, threadsUnread: unreadThreads.size };
  }

  // ------------------------------------------------------------ search

  private compileFilter(opts: Pick<ListOptions, 'q' | 'labelIds' | 'includeSpamTrash'>) {
    const query = compileQuery(opts.q, this.labels, this.ctx.now());
    const labelIds = opts.labelIds ?? [];
    const hideSpamTrash = !opts.includeSpamTrash && !query.touchesSpamTrash && !labelIds.includes('SPAM') && !labelIds.includes('TRASH');
    const matches = (msg: StoredMessage): boolean => {
      for (const id of labelIds) if (!msg.labelIds.includes(id)) return false;
      if (hideSpamTrash && (msg.labelIds.includes('SPAM') || msg.labelIds.includes('TRASH'))) return false;
      return query.predicate(msg);
    };
    return { matches, query };
  }

  /** First index in byDate whose (date, id) is >= the given key. */
  private lowerBound(key: { internalDate: number; id: string }): number {
    let lo = 0;
    let hi = this.byDate.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareMessages(this.byDate[mid] as StoredMessage, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Walks matching messages newest first, starting after the page cursor, until `visit`
   * returns false. `filter` narrows matches further (threads.list: newest match per thread).
   */
  private scan(opts: ListOptions, visit: (msg: StoredMessage) => boolean, filter?: (msg: StoredMessage) => boolean): void {
    const { matches, query } = this.compileFilter(opts);
    const lo = this.lowerBound({ internalDate: query.afterMs, id: '' });
    let start = this.lowerBound({ internalDate: query.beforeMs, id: '' }) - 1;
    if (opts.pageToken) {
      const cursor = decodeCursor(opts.pageToken);
      start = Math.min(start, this.lowerBound({ internalDate: cursor.d, id: cursor.i }) - 1);
    }
    for (let i = start; i >= lo; i--) {
      const msg = this.byDate[i] as StoredMessage;
      if (matches(msg) && (!filter || filter(msg)) && !visit(msg)) return;
    }
  }

  /**
   * resultSizeEstimate: the exact number of matches, cached per query while the mailbox is
   * unchanged, so paging through a large mailbox does not recount it for every page.
   */
  private estimate(kind: string, opts: ListOptions, filter?: (msg: StoredMessage) => boolean): number {
    const key = `${kind}\u0000${opts.q ?? ''}\u0000${(opts.labelIds ?? []).join(',')}\u0000${opts.includeSpamTrash ? 1 : 0}`;
    if (this.estimateCacheVersion !== this.version) {
      this.estimateCache.clear();
      this.estimateCacheVersion = this.version;
    }
    const cached = this.estimateCache.get(key);
    if (cached !== undefined) return cached;
    let count = 0;
    this.scan(
      { ...opts, pageToken: undefined },
      () => {
        count++;
        return true;
      },
      filter,
    );
    if (this.estimateCache.size >= 64) this.estimateCache.clear();
    this.estimateCache.set(key, count);
    return count;
  }

  listMessages(opts: ListOptions): { messages: StoredMessage[]; nextPageToken?: string; resultSizeEstimate: number } {
    const page: StoredMessage[] = [];
    let more = false;
    this.scan(opts, (msg) => {
      if (page.length === opts.maxResults) {
        more = true;
        return false;
      }
      page.push(msg);
      return true;
    });
    const last = page[page.length - 1];
    return { messages: page, resultSizeEstimate: this.estimate('messages', opts), ...(more && last ? { nextPageToken: encodeCursor(last) } : {}) };
  }

  /** Threads ordered by their newest matching message; a thread appears once, at that message. */
  listThreads(opts: ListOptions): { threads: StoredMessage[][]; nextPageToken?: string; resultSizeEstimate: number } {
    const { matches } = this.compileFilter(opts);
    const isNewestMatchInThread = (msg: StoredMessage): boolean => {
      const thread = this.threads.get(msg.threadId) ?? [];
      for (let i = thread.length - 1; i >= 0; i--) {
        const other = thread[i] as StoredMessage;
        if (other === msg) return true;
        if (compareMessages(other, msg) > 0 && matches(other)) return false;
      }
      return true;
    };
    const page: StoredMessage[][] = [];
    let lastAnchor: StoredMessage | undefined;
    let more = false;
    this.scan(
      opts,
      (msg) => {
        if (page.length === opts.maxResults) {
          more = true;
          return false;
        }
        page.push(this.threads.get(msg.threadId) ?? [msg]);
        lastAnchor = msg;
        return true;
      },
      isNewestMatchInThread,
    );
    return {
      threads: page,
      resultSizeEstimate: this.estimate('threads', opts, isNewestMatchInThread),
      ...(more && lastAnchor ? { nextPageToken: encodeCursor(lastAnchor) } : {}),
    };
  }

  // ------------------------------------------------------------ changes

  private record(type: HistoryType, msg: StoredMessage, changedLabelIds?: string[]): HistoryRecord {
    this.version++;
    this.historyId += this.ctx.ids.historyGap();
    msg.historyId = this.historyId;
    const record: HistoryRecord = {
      id: this.historyId,
      at: this.ctx.now(),
      type,
      messageId: msg.id,
      threadId: msg.threadId,
      labelIds: [...msg.labelIds],
      ...(changedLabelIds ? { changedLabelIds } : {}),
    };
    this.history.append(record);
    if ((this.history.size & 0xff) === 0) this.pruneHistory();
    this.onChange?.(record);
    return record;
  }

  pruneHistory(): void {
    this.history.pruneBefore(this.ctx.now() - this.ctx.historyRetentionMs);
  }

  /** Raises the history floor to the current id: no earlier start id is answerable (also used after seeding). */
  expireHistory(): void {
    this.history.expireAll(this.historyId);
  }

  private chooseThread(headers: ReturnType<typeof parseTopHeaders>, opts: InsertOptions): string | undefined {
    if (opts.threading === 'exact') {
      if (opts.threadId && this.threads.has(opts.threadId)) return opts.threadId;
      return undefined;
    }
    const subject = normalizeSubject(headerValue(headers, 'subject') ?? '');
    const subjectMatches = (threadId: string): boolean => {
      const first = this.threads.get(threadId)?.[0];
      return first !== undefined && normalizeSubject(first.subject) === subject;
    };
    const referenced = [headerValue(headers, 'in-reply-to') ?? '', headerValue(headers, 'references') ?? '']
      .join(' ')
      .match(/<[^>]+>/g);
    if (opts.threading === 'api') {
      if (!opts.threadId) return undefined;
      if (!this.threads.has(opts.threadId)) throw notFound();
      return referenced && subjectMatches(opts.threadId) ? opts.threadId : undefined;
    }
    for (const ref of (referenced ?? []).reverse()) {
      const threadId = this.threadByRfc822Id.get(ref);
      if (threadId && subjectMatches(threadId)) return threadId;
    }
    return undefined;
  }

  insert(raw: Buffer, opts: InsertOptions): StoredMessage {
    const described = describeRaw(raw);
    const internalDate = opts.internalDate ?? this.ctx.now();
    let id = this.ctx.ids.messageId(internalDate);
    while (this.messages.has(id)) id = this.ctx.ids.messageId(internalDate);
    const threadId = this.chooseThread(described.headers, opts) ?? id;
    const msg: StoredMessage = {
      id,
      threadId,
      labelIds: [...new Set(opts.labelIds)],
      internalDate,
      historyId: this.historyId,
      raw: this.arena.keep(raw),
      from: ownString(described.from),
      to: ownString(described.to),
      subject: ownString(described.subject),
      snippet: ownString(described.snippet),
      rfc822MessageId: ownString(described.rfc822MessageId),
      hasAttachment: described.hasAttachment,
      attachmentNames: ownString(described.attachmentNames),
    };
    this.messages.set(id, msg);
    const thread = this.threads.get(threadId);
    if (thread) {
      thread.push(msg);
      if (thread.length > 1 && compareMessages(thread[thread.length - 2] as StoredMessage, msg) > 0) thread.sort(compareMessages);
    } else this.threads.set(threadId, [msg]);
    const at = this.lowerBound(msg);
    if (at === this.byDate.length) this.byDate.push(msg);
    else this.byDate.splice(at, 0, msg);
    if (msg.rfc822MessageId && !this.threadByRfc822Id.has(msg.rfc822MessageId)) this.threadByRfc822Id.set(msg.rfc822MessageId, threadId);
    if (opts.recordHistory !== false) this.record('messageAdded', msg);
    else {
      msg.historyId = this.historyId;
      this.version++;
    }
    return msg;
  }

  /** Draft messages carry only DRAFT, whatever happens to their thread. */
  isDraft(msg: StoredMessage): boolean {
    return this.draftByMessageId.has(msg.id);
  }

  /**
   * Adds and removes labels (no effect on a draft message). Adding TRASH remembers what the same
   * change removed (INBOX, SPAM), and removing TRASH puts that back: untrash returns a message
   * to where it was.
   */
  modifyLabels(msg: StoredMessage, add: readonly string[], remove: readonly string[]): void {
    if (this.isDraft(msg)) return;
    const trashing = add.includes('TRASH') && !msg.labelIds.includes('TRASH') && !remove.includes('TRASH');
    const untrashing = remove.includes('TRASH') && msg.labelIds.includes('TRASH');
    const restored = untrashing ? (msg.beforeTrash ?? []).filter((id) => !remove.includes(id) && this.labels.get(id)) : [];
    const added = [...new Set([...add, ...restored])].filter((id) => !msg.labelIds.includes(id) && !remove.includes(id));
    const removed = remove.filter((id) => msg.labelIds.includes(id));
    if (trashing) msg.beforeTrash = removed.filter((id) => id !== 'TRASH');
    if (untrashing) delete msg.beforeTrash;
    if (added.length > 0) {
      msg.labelIds.push(...added);
      this.record('labelAdded', msg, added);
    }
    if (removed.length > 0) {
      msg.labelIds = msg.labelIds.filter((id) => !removed.includes(id));
      this.record('labelRemoved', msg, removed);
    }
  }

  trash(msg: StoredMessage): void {
    this.modifyLabels(msg, ['TRASH'], ['INBOX', 'SPAM']);
  }

  untrash(msg: StoredMessage): void {
    this.modifyLabels(msg, [], ['TRASH']);
  }

  deleteMessage(msg: StoredMessage): void {
    if (!this.messages.delete(msg.id)) return;
    const thread = this.threads.get(msg.threadId);
    if (thread) {
      const rest = thread.filter((m) => m !== msg);
      if (rest.length === 0) this.threads.delete(msg.threadId);
      else this.threads.set(msg.threadId, rest);
    }
    const at = this.lowerBound(msg);
    if (this.byDate[at] === msg) this.byDate.splice(at, 1);
    if (this.threadByRfc822Id.get(msg.rfc822MessageId) === msg.threadId && !this.threads.has(msg.threadId)) {
      this.threadByRfc822Id.delete(msg.rfc822MessageId);
    }
    const draftId = this.draftByMessageId.get(msg.id);
    if (draftId) {
      this.drafts.delete(draftId);
      this.draftByMessageId.delete(msg.id);
    }
    this.record('messageDeleted', msg);
  }

  /** Removes every label from a user label that is being deleted. */
  removeLabelEverywhere(labelId: string): void {
    for (const msg of this.byDate) if (msg.labelIds.includes(labelId)) this.modifyLabels(msg, [], [labelId]);
  }

  // ------------------------------------------------------------ drafts

  listDrafts(): Draft[] {
    return [...this.drafts.values()].sort((a, b) => compareMessages(this.getMessage(b.messageId), this.getMessage(a.messageId)));
  }

  getDraft(id: string): Draft {
    const draft = this.drafts.get(id);
    if (!draft) throw notFound();
    return draft;
  }

  findDraftByMessageId(messageId: string): Draft | undefined {
    const id = this.draftByMessageId.get(messageId);
    return id === undefined ? undefined : this.drafts.get(id);
  }

  createDraft(raw: Buffer, threadId: string | undefined): Draft {
    const msg = this.insert(raw, { labelIds: ['DRAFT'], threading: 'api', threadId });
    const draft: Draft = { id: this.ctx.ids.draftId(), messageId: msg.id };
    this.drafts.set(draft.id, draft);
    this.draftByMessageId.set(msg.id, draft.id);
    return draft;
  }

  /** Replaces the draft's message: a new message id under the same draft id, as Gmail does. */
  updateDraft(id: string, raw: Buffer, threadId: string | undefined): Draft {
    const draft = this.getDraft(id);
    const old = this.getMessage(draft.messageId);
    const next = this.insert(raw, { labelIds: ['DRAFT'], threading: 'api', threadId: threadId ?? old.threadId });
    this.draftByMessageId.delete(old.id);
    this.deleteMessage(old);
    draft.messageId = next.id;
    this.drafts.set(draft.id, draft);
    this.draftByMessageId.set(next.id, draft.id);
    return draft;
  }

  deleteDraft(id: string): void {
    const draft = this.getDraft(id);
    this.deleteMessage(this.getMessage(draft.messageId));
    this.drafts.delete(id);
  }

  /** Sends a draft: the draft and its message go away, a new SENT message (new id) joins the thread. */
  sendDraft(id: string, prepare: (raw: Buffer) => Buffer): StoredMessage {
    const draft = this.getDraft(id);
    const draftMessage = this.getMessage(draft.messageId);
    const raw = prepare(draftMessage.raw);
    const sent = this.insert(raw, { labelIds: ['SENT'], threading: 'exact', threadId: draftMessage.threadId });
    this.deleteMessage(draftMessage);
    this.drafts.delete(id);
    return sent;
  }
}
