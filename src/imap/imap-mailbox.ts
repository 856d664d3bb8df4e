// One IMAP/SMTP account as the product's mailbox: the operations GmailService offers (read a message
// or a thread, labels, changes since a cursor, drafts, send, archive/trash) on IMAP and SMTP, in the
// product's own shapes (src/gmail/types.ts). How ids, threads, labels and the cursor map onto IMAP is
// in docs/imap.md "Mapping" and in mail-ids.ts.
import { createHash, randomUUID } from 'node:crypto';
import type { ImapFlow, SearchObject } from 'imapflow';
import { decodeBase64Url } from '../gmail/mime-encoding.js';
import { withTopHeader } from '../gmail/mime.js';
import type {
  MailboxLabel,
  DraftInfo,
  DraftRef,
  HistoryPage,
  HistoryRecord,
  LabelChange,
  LabelHistoryChange,
  MessageList,
  MessageRef,
  ThreadMessage,
  ThreadSnapshot,
} from '../mail/message.js';
import { failureContext, openImapSession, type ImapSession, type MailConnectDeps } from './connect.js';
import type { ImapCapabilities, MailCredentials, MailServerAddress } from './contracts.js';
import {
  decodeCursor,
  decodeMessageRef,
  encodeCursor,
  keywordToLabel,
  labelToKeyword,
  locationIdOf,
  messageIdOf,
  threadIdOf,
  threadingHeaders,
  threadRootOf,
  type ChangeCursor,
  type FolderCursor,
} from './mail-ids.js';
import { MailboxNotFoundError, MailboxResetError, MailboxUnsupportedError, imapOperationFailure } from './mailbox-errors.js';
import { readRawMessage } from './raw-message.js';
import { headerBlock, rawHeader, recipientsOf, withoutHeader } from './raw-headers.js';
import { createSmtpTransport, smtpSendFailure, type SmtpTransport } from './smtp.js';
import { searchableAddress, type ChangesRequest, type Mailbox, type MailboxCapabilities, type MailSearch } from '../mail/mailbox.js';

export interface ImapMailboxSettings {
  /** The account's address: the sender of what it sends, the domain of the Message-IDs it makes. */
  address: string;
  imap: { server: MailServerAddress; credentials: MailCredentials };
  smtp: { server: MailServerAddress; credentials: MailCredentials };
  /** Remembers each message's labels between listChanges calls (default: in memory, this process). */
  memory?: LabelMemory;
}

/** The neutral search (src/mail/mailbox.ts), plus what only IMAP can ask. */
export interface ImapSearch extends Omit<MailSearch, 'in'> {
  /** Anywhere in headers or body. */
  text?: string;
  /** Where to look: a system label (default INBOX); ARCHIVE is the \\Archive folder. */
  in?: MailSearch['in'] | 'ARCHIVE';
  /** On Gmail's IMAP: a Gmail search (X-GM-RAW) instead of the fields above. */
  gmailRaw?: string;
}

/** What the mailbox remembers of a message seen in a folder (for label diffs and for naming vanished UIDs). */
export interface RememberedMessage {
  id: string;
  threadId: string;
  labels: string[];
  /** The message's MODSEQ when its labels were seen. */
  modseq: string;
  /** 'changes': listChanges saw it; 'read': a read saw it first (kept until listChanges sees it). */
  seenBy: 'changes' | 'read';
}

/** Where listChanges keeps the last labels it saw per (folder, UIDVALIDITY, UID). A store may back it. */
export interface LabelMemory {
  get(folder: string, uidValidity: string, uid: number): RememberedMessage | undefined;
  set(folder: string, uidValidity: string, uid: number, message: RememberedMessage): void;
  delete(folder: string, uidValidity: string, uid: number): void;
  /** UIDs remembered in the folder (for servers without QRESYNC, which name no expunged UIDs). */
  uids(folder: string, uidValidity: string): number[];
}

export function inMemoryLabelMemory(): LabelMemory {
  const folders = new Map<string, Map<number, RememberedMessage>>();
  const key = (folder: string, uidValidity: string) => `${uidValidity}:${folder}`;
  const of = (folder: string, uidValidity: string) => {
    let map = folders.get(key(folder, uidValidity));
    if (!map) folders.set(key(folder, uidValidity), (map = new Map()));
    return map;
  };
  return {
    get: (folder, uidValidity, uid) => folders.get(key(folder, uidValidity))?.get(uid),
    set: (folder, uidValidity, uid, message) => void of(folder, uidValidity).set(uid, message),
    delete: (folder, uidValidity, uid) => void folders.get(key(folder, uidValidity))?.delete(uid),
    uids: (folder, uidValidity) => [...(folders.get(key(folder, uidValidity))?.keys() ?? [])],
  };
}

/** A page of changes: Gmail's history page shape (historyId is the next cursor), one record per folder. */
export interface ImapChangePage extends HistoryPage {
  /** The cursor to pass next time (same as historyId). */
  cursor: string;
}

type FolderRole = 'inbox' | 'sent' | 'drafts' | 'archive' | 'trash' | 'junk' | 'all' | 'other';

interface Located {
  folder: string;
  uid: number;
  uidValidity: string;
}

interface FetchedMessage {
  uid: number;
  flags: Set<string>;
  modseq?: bigint;
  source?: Buffer;
  headers?: Buffer;
  internalDate?: Date | string;
  size?: number;
  threadId?: string;
}

const SEEN = '\\Seen';
const FLAGGED = '\\Flagged';
const DRAFT = '\\Draft';

export class ImapMailbox implements Mailbox {
  private session: ImapSession | undefined;
  private readonly memory: LabelMemory;
  private readonly smtp: SmtpTransport;
  /** Thread ids that cannot be searched for (hashed roots): where their messages were seen. */
  private readonly hashedThreads = new Map<string, Set<string>>();

  private constructor(
    private readonly settings: ImapMailboxSettings,
    private readonly deps: MailConnectDeps,
    session: ImapSession,
  ) {
    this.session = session;
    this.memory = settings.memory ?? inMemoryLabelMemory();
    this.smtp = createSmtpTransport(settings.smtp.server, settings.smtp.credentials, deps);
  }

  /** Connects and logs in (openImapSession: CONDSTORE required). Throws a MailServerError. */
  static async open(settings: ImapMailboxSettings, deps: MailConnectDeps = {}): Promise<ImapMailbox> {
    const session = await openImapSession(settings.imap.server, settings.imap.credentials, deps);
    return new ImapMailbox(settings, deps, session);
  }

  /** What the server offers (CONDSTORE, QRESYNC, IDLE, keywords, special-use folders, Gmail's extensions). */
  get server(): ImapCapabilities {
    return this.requireSession().capabilities;
  }

  /** What this mailbox declares to the product, from what the server offers. */
  get capabilities(): MailboxCapabilities {
    const server = this.server;
    return {
      provider: 'imap',
      labels: server.stateIn,
      threadIds: server.gmail ? 'server' : 'computed',
      changes: server.idle ? 'idle' : 'poll',
      sentCopy: server.gmail ? 'server' : 'appended',
    };
  }

  async close(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    this.smtp.close();
    await session?.close();
  }

  // ------------------------------------------------------------------------------------------------
  // Reading
  // ------------------------------------------------------------------------------------------------

  /** The account's address and the current change cursor (as Gmail's profile gives historyId). */
  async getProfile(): Promise<{ emailAddress: string; historyId: string }> {
    return { emailAddress: this.settings.address, historyId: await this.getCursor() };
  }

  /** IMAP keeps no signature: replies go without one (the user's client adds its own when they send). */
  async getSignature(): Promise<string | undefined> {
    return undefined;
  }

  /** A message by id, read in full. MailboxNotFoundError when it is in no folder. */
  async getMessage(id: string): Promise<ThreadMessage> {
    return this.run('reading a message', async (client) => {
      const [where] = await this.locate(client, id);
      if (!where) throw new MailboxNotFoundError('message', id);
      const message = await this.readAt(client, where);
      if (!message) throw new MailboxNotFoundError('message', id);
      return message;
    });
  }

  /** Every message of the thread in the folders the product reads, oldest first (INTERNALDATE). */
  async getThread(threadId: string): Promise<ThreadSnapshot> {
    return this.run('reading a thread', async (client) => {
      const found = await this.threadLocations(client, threadId);
      const messages: ThreadMessage[] = [];
      const seen = new Set<string>();
      for (const where of found) {
        const message = await this.readAt(client, where);
        if (!message || message.threadId !== threadId) continue;
        // The same message in two folders (a copy sent to oneself) is listed once; the first folder wins.
        if (seen.has(message.id)) continue;
        seen.add(message.id);
        messages.push(message);
      }
      if (messages.length === 0) throw new MailboxNotFoundError('thread', threadId);
      messages.sort((a, b) => a.internalDate - b.internalDate);
      const historyId = messages.reduce((max, m) => (BigInt(m.historyId || '0') > BigInt(max) ? m.historyId : max), '0');
      return { threadId, historyId, messages };
    });
  }

  /** The labels on any message of the thread (Gmail's getThreadLabelIds). */
  async getThreadLabelIds(threadId: string): Promise<string[]> {
    const thread = await this.getThread(threadId);
    return [...new Set(thread.messages.flatMap((m) => m.labelIds))];
  }

  /** Messages matching a search, newest first (ids and thread ids only, like messages.list); one page. */
  async searchMessages(search: ImapSearch = {}): Promise<MessageList> {
    const query = searchQuery(search);
    if (!query) return { messages: [], resultSizeEstimate: 0 };
    return this.run('searching', async (client) => {
      const caps = this.server;
      const folders = this.searchFolders(search.in ?? 'INBOX');
      const refs: Array<MessageRef & { date: number }> = [];
      for (const folder of folders) {
        await this.inFolder(client, folder, async (uidValidity) => {
          const uids = (await client.search(caps.gmail && search.gmailRaw ? { gmraw: search.gmailRaw } : query, { uid: true })) || [];
          if (uids.length === 0) return;
          const newest = uids.sort((a, b) => b - a).slice(0, search.maxResults ?? 100);
          for await (const m of client.fetch(newest.join(','), { uid: true, headers: true, internalDate: true }, { uid: true })) {
            const ids = this.idsOf(m.headers ?? Buffer.alloc(0), { folder, uid: m.uid, uidValidity });
            refs.push({ ...ids, date: new Date(m.internalDate ?? 0).getTime() });
          }
        });
      }
      refs.sort((a, b) => b.date - a.date);
      const limited = refs.slice(0, search.maxResults ?? 100);
      return { messages: limited.map(({ id, threadId }) => ({ id, threadId })), resultSizeEstimate: refs.length };
    });
  }

  // ------------------------------------------------------------------------------------------------
  // Labels
  // ------------------------------------------------------------------------------------------------

  /**
   * The labels in use: the system labels the folders stand for, and ours from the keywords the watched
   * folders have defined (their FLAGS). An id is the name.
   */
  async listLabels(): Promise<MailboxLabel[]> {
    return this.run('listing labels', async (client) => {
      const names = new Set<string>();
      for (const folder of this.watchedFolders()) {
        const lock = await this.openFolder(client, folder);
        if (!lock) continue;
        try {
          for (const flag of client.mailbox ? client.mailbox.flags : []) {
            const label = keywordToLabel(flag);
            if (label !== undefined) names.add(label);
          }
        } finally {
          lock.release();
        }
      }
      const system = ['INBOX', 'SENT', 'DRAFT', 'TRASH', 'SPAM', 'UNREAD', 'STARRED'].map((id) => ({ id, name: id, type: 'system' as const }));
      return [...system, ...[...names].map((name) => ({ id: name, name, type: 'user' as const }))];
    });
  }

  /** On IMAP a label's id is its name; nothing needs creating in keywords mode. */
  async ensureLabels(names: string[]): Promise<Map<string, string>> {
    return new Map(names.map((n) => [n, n]));
  }

  /** Adds/removes labels on one message; returns its labels after the change. */
  async modifyMessage(id: string, change: LabelChange): Promise<string[]> {
    await this.modifyAll([id], change);
    return (await this.getMessage(id)).labelIds;
  }

  /** Adds/removes labels on every message of the thread. */
  async modifyThread(threadId: string, change: LabelChange): Promise<void> {
    const locations = await this.run('reading a thread', (client) => this.threadLocations(client, threadId));
    await this.modifyLocations(locations, change);
  }

  async batchModify(ids: string[], change: LabelChange): Promise<void> {
    await this.modifyAll(ids, change);
  }

  private async modifyAll(ids: string[], change: LabelChange): Promise<void> {
    const locations = await this.run('finding messages', async (client) => {
      const all: Located[] = [];
      for (const id of ids) all.push(...(await this.locate(client, id)));
      return all;
    });
    await this.modifyLocations(locations, change);
  }

  /**
   * Our labels are keywords; UNREAD and STARRED are \Seen (inverted) and \Flagged; INBOX and TRASH are
   * folders (removing INBOX archives, adding it brings back, adding TRASH trashes). Other system labels
   * (SENT, DRAFT, SPAM, IMPORTANT, CATEGORY_*) cannot be set and are ignored, as Gmail ignores some.
   */
  private async modifyLocations(locations: Located[], change: LabelChange): Promise<void> {
    const add = change.add ?? [];
    const remove = change.remove ?? [];
    if (add.length === 0 && remove.length === 0) return;
    const flagsAdd: string[] = [];
    const flagsRemove: string[] = [];
    for (const label of add) {
      if (label === 'UNREAD') flagsRemove.push(SEEN);
      else if (label === 'STARRED') flagsAdd.push(FLAGGED);
      else if (!SYSTEM_LABELS.has(label)) flagsAdd.push(this.keywordFor(label));
    }
    for (const label of remove) {
      if (label === 'UNREAD') flagsAdd.push(SEEN);
      else if (label === 'STARRED') flagsRemove.push(FLAGGED);
      else if (!SYSTEM_LABELS.has(label)) flagsRemove.push(this.keywordFor(label));
    }
    await this.run('changing labels', async (client) => {
      for (const [folder, uids] of byFolder(locations)) {
        await this.inFolder(client, folder, async () => {
          const range = uids.join(',');
          if (flagsAdd.length > 0) await client.messageFlagsAdd(range, flagsAdd, { uid: true });
          if (flagsRemove.length > 0) await client.messageFlagsRemove(range, flagsRemove, { uid: true });
        });
      }
    });
    if (add.includes('TRASH')) await this.moveLocations(locations, 'trash');
    else if (remove.includes('INBOX')) await this.moveLocations(locations.filter((l) => this.roleOf(l.folder) === 'inbox'), 'archive');
    else if (add.includes('INBOX')) await this.moveLocations(locations.filter((l) => this.roleOf(l.folder) !== 'inbox'), 'inbox');
  }

  private keywordFor(label: string): string {
    if (this.server.stateIn !== 'keywords') {
      throw new MailboxUnsupportedError(
        `The IMAP server keeps no keywords (its PERMANENTFLAGS lack \\*), so the label ${JSON.stringify(label.slice(0, 80))} cannot be kept on a message; folders mode is not built yet.`,
      );
    }
    return labelToKeyword(label);
  }

  // ------------------------------------------------------------------------------------------------
  // Changes
  // ------------------------------------------------------------------------------------------------

  /** Folders listChanges follows: INBOX, Sent, Drafts, and Archive and Trash when the server has them. */
  watchedFolders(): string[] {
    const f = this.server.folders;
    return unique([this.server.inbox, f.sent?.path, f.drafts?.path, f.archive?.path, f.trash?.path]);
  }

  /** The cursor of now: each watched folder's UIDVALIDITY, HIGHESTMODSEQ and UIDNEXT (STATUS). */
  async getCursor(): Promise<string> {
    return this.run('reading folder states', async (client) => {
      const cursor: ChangeCursor = {};
      for (const folder of this.watchedFolders()) {
        const status = await client.status(folder, { uidValidity: true, highestModseq: true, uidNext: true });
        if (!status) continue;
        cursor[folder] = { uidValidity: String(status.uidValidity ?? 0n), highestModseq: String(status.highestModseq ?? 0n), uidNext: status.uidNext ?? 1 };
      }
      return encodeCursor(cursor);
    });
  }

  /**
   * What changed since `cursor` (from getCursor or a previous page), as Gmail history records, one
   * per folder: messagesAdded (new UIDs), messagesDeleted (expunged UIDs: VANISHED with QRESYNC, else
   * the remembered UIDs no longer there), labelsAdded/labelsRemoved (keyword and \Seen/\Flagged
   * changes, against the labels remembered; a changed message not remembered is listed in `messages`).
   * A message moved between watched folders in one page is a label change (INBOX removed, say), as on
   * Gmail. MailboxResetError when a folder's UIDVALIDITY changed: read the mailbox again from the start.
   */
  async listChanges({ cursor: cursorText }: ChangesRequest): Promise<ImapChangePage> {
    const cursor = decodeCursor(cursorText);
    if (!cursor) throw new MailboxResetError('(cursor)', cursorText.slice(0, 40), undefined);
    return this.run('reading changes', async (client) => {
      const next: ChangeCursor = {};
      const records: HistoryRecord[] = [];
      for (const folder of this.watchedFolders()) {
        const from = cursor[folder];
        const { record, position } = await this.folderChanges(client, folder, from);
        next[folder] = position;
        if (record) records.push(record);
      }
      pairMoves(records, (folder) => this.roleLabel(folder));
      const nextCursor = encodeCursor(next);
      return { records: records.filter((r) => !isEmptyRecord(r)), historyId: nextCursor, cursor: nextCursor };
    });
  }

  private async folderChanges(client: ImapFlow, folder: string, from: FolderCursor | undefined): Promise<{ record?: HistoryRecord; position: FolderCursor }> {
    const lock = await this.openFolder(client, folder);
    if (!lock) {
      if (from) throw new MailboxResetError(folder, from.uidValidity, undefined);
      return { position: { uidValidity: '0', highestModseq: '0', uidNext: 1 } };
    }
    try {
      const box = client.mailbox;
      if (!box) throw new Error('no mailbox selected');
      const uidValidity = String(box.uidValidity);
      const position: FolderCursor = { uidValidity, highestModseq: String(box.highestModseq ?? 0n), uidNext: box.uidNext };
      // A folder that appeared since the cursor (created later) starts from its beginning.
      const start = from ?? { uidValidity, highestModseq: '0', uidNext: 1 };
      if (start.uidValidity !== uidValidity) throw new MailboxResetError(folder, start.uidValidity, uidValidity);
      if (from && position.highestModseq === start.highestModseq && position.uidNext === start.uidNext) return { position };
      const record: HistoryRecord = { id: position.highestModseq, messages: [], messagesAdded: [], messagesDeleted: [], labelsAdded: [], labelsRemoved: [] };
      (record as HistoryRecord & { folder: string }).folder = folder;
      const vanished: number[] = [];
      const onExpunge = (event: { path: string; uid?: number; vanished?: boolean }) => {
        if (event.path === folder && event.vanished && event.uid) vanished.push(event.uid);
      };
      client.on('expunge', onExpunge);
      const changed: FetchedMessage[] = [];
      try {
        for await (const m of client.fetch('1:*', { uid: true, flags: true, headers: true, ...(this.server.gmail ? { threadId: true } : {}) }, { uid: true, changedSince: BigInt(start.highestModseq) })) {
          changed.push(m as FetchedMessage);
        }
      } finally {
        client.off('expunge', onExpunge);
      }
      if (!this.server.qresync) {
        const present = new Set(((await client.search({ all: true }, { uid: true })) || []) as number[]);
        for (const uid of this.memory.uids(folder, uidValidity)) if (uid < start.uidNext && !present.has(uid)) vanished.push(uid);
      }
      for (const uid of vanished) {
        const known = this.memory.get(folder, uidValidity, uid);
        record.messagesDeleted.push(known ? { id: known.id, threadId: known.threadId } : { id: locationIdOf({ uidValidity, uid, folder }), threadId: '' });
        this.memory.delete(folder, uidValidity, uid);
      }
      for (const m of changed) {
        const where = { folder, uid: m.uid, uidValidity };
        const ids = this.idsOf(m.headers ?? Buffer.alloc(0), where, m.threadId);
        const labels = this.labelsOf(m.flags ?? new Set(), folder);
        const remembered = this.memory.get(folder, uidValidity, m.uid);
        // A baseline a read took after the cursor's point may already hold this change: not a baseline.
        const known = remembered && (remembered.seenBy === 'changes' || BigInt(remembered.modseq) <= BigInt(start.highestModseq)) ? remembered : undefined;
        this.memory.set(folder, uidValidity, m.uid, { ...ids, labels, modseq: String(m.modseq ?? 0n), seenBy: 'changes' });
        if (m.uid >= start.uidNext || (!known && !from)) {
          record.messagesAdded.push({ ...ids, labelIds: labels });
          continue;
        }
        record.messages.push(ids);
        if (!known) continue;
        const added = labels.filter((l) => !known.labels.includes(l));
        const removed = known.labels.filter((l) => !labels.includes(l));
        const message = { ...ids, labelIds: labels };
        if (added.length > 0) record.labelsAdded.push({ message, labelIds: added });
        if (removed.length > 0) record.labelsRemoved.push({ message, labelIds: removed });
      }
      return { record, position };
    } finally {
      lock.release();
    }
  }

  // ------------------------------------------------------------------------------------------------
  // Drafts
  // ------------------------------------------------------------------------------------------------

  /**
   * APPENDs the draft to \Drafts with \Draft and \Seen. A draft without a Message-ID gets one (its
   * identity: the draft id is its message id, kept across updates and by the sent message). A draft
   * for a thread that names no parent gets References: <root>, so it threads by headers.
   */
  async createDraft(content: { threadId: string; raw: string }): Promise<DraftRef> {
    const raw = this.prepareOutgoing(decodeBase64Url(content.raw), content.threadId);
    return this.run('saving a draft', async (client) => {
      const drafts = this.folder('drafts');
      await client.append(drafts, Buffer.from(raw), [DRAFT, SEEN]);
      return this.draftRefOf(raw);
    });
  }

  /** Replaces the draft: APPEND the new version (same Message-ID), then delete the old one(s). */
  async updateDraft(draftId: string, content: { threadId: string; raw: string }): Promise<DraftRef> {
    const messageId = this.draftMessageId(draftId);
    const raw = this.prepareOutgoing(withTopHeader(decodeBase64Url(content.raw), 'Message-ID', messageId), content.threadId);
    return this.run('replacing a draft', async (client) => {
      const drafts = this.folder('drafts');
      const old = await this.findByMessageId(client, drafts, messageId);
      const appended = await client.append(drafts, Buffer.from(raw), [DRAFT, SEEN]);
      const keep = appended && appended.uid !== undefined ? appended.uid : undefined;
      const stale = old.filter((l) => l.uid !== keep).map((l) => l.uid);
      if (stale.length > 0) await this.inFolder(client, drafts, () => client.messageDelete(stale.join(','), { uid: true }).then(() => undefined));
      return this.draftRefOf(raw);
    });
  }

  /** null when the draft is gone (sent or deleted by the user). */
  async getDraft(draftId: string): Promise<DraftInfo | null> {
    const messageId = this.draftMessageId(draftId);
    return this.run('reading a draft', async (client) => {
      const [where] = await this.findByMessageId(client, this.folder('drafts'), messageId);
      const message = where ? await this.readAt(client, where) : undefined;
      if (!message) return null;
      return { draftId, messageId: message.id, threadId: message.threadId, body: message.body, message };
    });
  }

  /** The draft's raw message (base64url, as Gmail's getDraftRaw); null when it is gone. */
  async getDraftRaw(draftId: string): Promise<{ draftId: string; messageId: string; raw: string } | null> {
    const messageId = this.draftMessageId(draftId);
    return this.run('reading a draft', async (client) => {
      const [where] = await this.findByMessageId(client, this.folder('drafts'), messageId);
      if (!where) return null;
      const source = await this.inFolder(client, where.folder, async () => {
        const m = await client.fetchOne(String(where.uid), { uid: true, source: true }, { uid: true });
        return m ? m.source : undefined;
      });
      return source ? { draftId, messageId: draftId, raw: Buffer.from(source).toString('base64url') } : null;
    });
  }

  /** true when this call deleted it, false when it was already gone. */
  async deleteDraft(draftId: string): Promise<boolean> {
    const messageId = this.draftMessageId(draftId);
    return this.run('deleting a draft', async (client) => {
      const drafts = this.folder('drafts');
      const found = await this.findByMessageId(client, drafts, messageId);
      if (found.length === 0) return false;
      await this.inFolder(client, drafts, () => client.messageDelete(found.map((l) => l.uid).join(','), { uid: true }));
      return true;
    });
  }

  async listDraftsForThread(threadId: string): Promise<DraftRef[]> {
    return this.run('listing drafts', async (client) => {
      const drafts = this.folder('drafts');
      const found = (await this.threadLocations(client, threadId)).filter((l) => l.folder === drafts);
      const refs: DraftRef[] = [];
      await this.inFolder(client, drafts, async (uidValidity) => {
        if (found.length === 0) return;
        for await (const m of client.fetch(found.map((l) => l.uid).join(','), { uid: true, headers: true }, { uid: true })) {
          const ids = this.idsOf(m.headers ?? Buffer.alloc(0), { folder: drafts, uid: m.uid, uidValidity });
          if (ids.threadId === threadId) refs.push({ draftId: ids.id, messageId: ids.id, threadId });
        }
      });
      return refs;
    });
  }

  // ------------------------------------------------------------------------------------------------
  // Sending
  // ------------------------------------------------------------------------------------------------

  /**
   * Sends a raw message (base64url) through SMTP submission, Message-ID kept, Bcc not transmitted;
   * then APPENDs it to \Sent (\Seen) unless the server files sent mail itself (Gmail). Idempotent: a
   * message whose Message-ID is already in \Sent is not submitted again. A message without a
   * Message-ID gets one derived from its bytes, so a retry of the same bytes finds the first.
   */
  async sendMessage(raw64: string, threadId?: string): Promise<{ id: string; threadId: string }> {
    const raw = this.prepareOutgoing(decodeBase64Url(raw64), threadId, true);
    const messageId = rawHeader(raw, 'message-id') ?? '';
    const ref = this.idsOf(Buffer.from(headerBlock(raw)), undefined);
    const sent = this.folder('sent');
    const already = await this.run('looking for a sent copy', (client) => this.findByMessageId(client, sent, messageId));
    if (already.length > 0) return ref;
    const envelope = { from: this.settings.address, to: recipientsOf(raw) };
    try {
      await this.smtp.sendMail({ envelope, raw: Buffer.from(withoutHeader(raw, 'bcc')) });
    } catch (err) {
      throw smtpSendFailure(err, this.settings.smtp.server, this.settings.smtp.credentials, this.deps);
    }
    if (!this.server.gmail) {
      await this.run('filing the sent copy', (client) => client.append(sent, Buffer.from(raw), [SEEN]));
    }
    return ref;
  }

  /** Sends the draft's message (as Gmail's drafts.send) and deletes the draft. */
  async sendDraft(draftId: string): Promise<{ id: string; threadId: string }> {
    const draft = await this.getDraftRaw(draftId);
    if (!draft) {
      // Already sent by an earlier attempt? The Message-ID is then in \Sent.
      const messageId = this.draftMessageId(draftId);
      const inSent = await this.run('looking for a sent copy', (client) => this.findByMessageId(client, this.folder('sent'), messageId));
      if (inSent.length > 0) return { id: draftId, threadId: (await this.getMessage(draftId)).threadId };
      throw new MailboxNotFoundError('draft', draftId);
    }
    const raw = withoutFlagHeaders(decodeBase64Url(draft.raw));
    const sent = await this.sendMessage(Buffer.from(raw).toString('base64url'));
    await this.deleteDraft(draftId);
    return sent;
  }

  /** Whether a message with this Message-ID (or our message id) is in \Sent: how sending is detected. */
  async isSent(idOrMessageId: string): Promise<boolean> {
    const decoded = decodeMessageRef(idOrMessageId);
    const messageId = decoded?.kind === 'message-id' ? decoded.messageId : idOrMessageId;
    return this.run('looking for a sent copy', async (client) => (await this.findByMessageId(client, this.folder('sent'), messageId)).length > 0);
  }

  // ------------------------------------------------------------------------------------------------
  // Archive, trash, back to the inbox
  // ------------------------------------------------------------------------------------------------

  /** Moves the thread's messages out of INBOX into \Archive (on Gmail: into All Mail, i.e. the \Inbox label removed). */
  async archiveThread(threadId: string): Promise<void> {
    const locations = await this.run('reading a thread', (client) => this.threadLocations(client, threadId));
    await this.moveLocations(locations.filter((l) => this.roleOf(l.folder) === 'inbox'), 'archive');
  }

  /** Moves every message of the thread (drafts included) to \Trash. */
  async trashThread(threadId: string): Promise<void> {
    const locations = await this.run('reading a thread', (client) => this.threadLocations(client, threadId));
    await this.moveLocations(locations, 'trash');
  }

  /**
   * Brings the thread back out of \Trash or \Archive (untrash, and snooze's return to the inbox):
   * what the account sent goes to \Sent, drafts to \Drafts, everything else to INBOX.
   */
  async moveThreadToInbox(threadId: string): Promise<void> {
    const locations = await this.run('reading a thread', (client) => this.threadLocations(client, threadId));
    const away = locations.filter((l) => ['trash', 'archive', 'junk'].includes(this.roleOf(l.folder)));
    await this.moveLocations(away, 'inbox');
  }

  async untrashThread(threadId: string): Promise<void> {
    await this.moveThreadToInbox(threadId);
  }

  private async moveLocations(locations: Located[], to: 'inbox' | 'archive' | 'trash'): Promise<void> {
    if (locations.length === 0) return;
    await this.run('moving messages', async (client) => {
      for (const [folder, uids] of byFolder(locations)) {
        if (to === 'inbox') {
          // Sent mail and drafts go back to their own folders, not to INBOX.
          const destinations = await this.inFolder(client, folder, async () => {
            const out = new Map<string, number[]>();
            for await (const m of client.fetch(uids.join(','), { uid: true, flags: true, envelope: true }, { uid: true })) {
              const fromUser = (m.envelope?.from ?? []).some((a) => a.address?.toLowerCase() === this.settings.address.toLowerCase());
              const dest = m.flags?.has(DRAFT) ? this.folder('drafts') : fromUser ? this.folder('sent') : this.server.inbox;
              if (dest === folder) continue;
              out.set(dest, [...(out.get(dest) ?? []), m.uid]);
            }
            return out;
          });
          for (const [dest, some] of destinations) await this.inFolder(client, folder, () => client.messageMove(some.join(','), dest, { uid: true }));
          continue;
        }
        const dest = to === 'trash' ? this.folder('trash') : this.archiveFolder();
        if (dest === folder) continue;
        await this.inFolder(client, folder, () => client.messageMove(uids.join(','), dest, { uid: true }));
      }
    });
  }

  private archiveFolder(): string {
    const f = this.server.folders;
    const path = this.server.gmail ? f.all?.path : (f.archive?.path ?? f.all?.path);
    if (!path) throw new MailboxUnsupportedError('The IMAP account has no \\Archive (or \\All) folder to archive into.');
    return path;
  }

  // ------------------------------------------------------------------------------------------------
  // Inside
  // ------------------------------------------------------------------------------------------------

  private requireSession(): ImapSession {
    if (!this.session) throw new Error('The IMAP mailbox is closed.');
    return this.session;
  }

  /** Runs an operation on a usable connection (reconnecting when the last one dropped); failures as MailServerErrors. */
  private async run<T>(operation: string, fn: (client: ImapFlow) => Promise<T>): Promise<T> {
    const ctx = failureContext('imap', this.settings.imap.server, this.settings.imap.credentials, this.deps);
    let session = this.requireSession();
    if (!session.client.usable) {
      session.client.close();
      session = await openImapSession(this.settings.imap.server, this.settings.imap.credentials, this.deps);
      this.session = session;
    }
    try {
      return await fn(session.client);
    } catch (err) {
      const lost = !session.client.usable;
      throw imapOperationFailure(err, ctx, operation, lost);
    }
  }

  private async inFolder<T>(client: ImapFlow, folder: string, fn: (uidValidity: string) => Promise<T>): Promise<T> {
    const lock = await client.getMailboxLock(folder);
    try {
      return await fn(String(client.mailbox ? client.mailbox.uidValidity : 0n));
    } finally {
      lock.release();
    }
  }

  /** SELECTs a folder for listChanges (under imapflow's lock); undefined when it does not exist. */
  private async openFolder(client: ImapFlow, folder: string): Promise<{ release(): void } | undefined> {
    try {
      return await client.getMailboxLock(folder);
    } catch (err) {
      const e = err as { serverResponseCode?: string; responseText?: string };
      if (e.serverResponseCode === 'NONEXISTENT' || /doesn't exist|does not exist|unknown mailbox/i.test(e.responseText ?? '')) return undefined;
      throw err;
    }
  }

  private folder(role: 'drafts' | 'sent' | 'trash'): string {
    const path = this.server.folders[role]?.path;
    if (!path) throw new MailboxUnsupportedError(`The IMAP account has no ${role} folder (none marked \\${role[0]!.toUpperCase()}${role.slice(1)}, none by the usual name).`);
    return path;
  }

  private roleOf(folder: string): FolderRole {
    const caps = this.server;
    if (folder === caps.inbox) return 'inbox';
    for (const role of ['sent', 'drafts', 'archive', 'trash', 'junk', 'all'] as const) if (caps.folders[role]?.path === folder) return role;
    return 'other';
  }

  /** The system label a folder stands for, as Gmail's label ids. */
  private roleLabel(folder: string): string | undefined {
    return { inbox: 'INBOX', sent: 'SENT', drafts: 'DRAFT', trash: 'TRASH', junk: 'SPAM' }[this.roleOf(folder) as string];
  }

  private labelsOf(flags: Set<string>, folder: string): string[] {
    const labels: string[] = [];
    const role = this.roleLabel(folder);
    if (role) labels.push(role);
    if (flags.has(DRAFT) && role !== 'DRAFT') labels.push('DRAFT');
    if (!flags.has(SEEN)) labels.push('UNREAD');
    if (flags.has(FLAGGED)) labels.push('STARRED');
    for (const flag of flags) {
      const label = keywordToLabel(flag);
      if (label !== undefined) labels.push(label);
    }
    return labels;
  }

  private searchFolders(where: NonNullable<ImapSearch['in']>): string[] {
    const f = this.server.folders;
    switch (where) {
      case 'INBOX':
        return [this.server.inbox];
      case 'SENT':
        return unique([f.sent?.path]);
      case 'DRAFT':
        return unique([f.drafts?.path]);
      case 'TRASH':
        return unique([f.trash?.path]);
      case 'SPAM':
        return unique([f.junk?.path]);
      case 'ARCHIVE':
        return unique([f.archive?.path]);
      case 'ALL':
        return f.all ? [f.all.path] : this.readFolders();
    }
  }

  /** Where messages of threads live, in the order a duplicate is taken from. */
  private readFolders(): string[] {
    const f = this.server.folders;
    return unique([this.server.inbox, f.archive?.path, f.sent?.path, f.drafts?.path, f.trash?.path, f.junk?.path]);
  }

  /** The message id and thread id of a header block (and where it is, for a message without Message-ID). */
  private idsOf(header: Uint8Array, where: Located | undefined, gmailThreadId?: string): MessageRef {
    const get = (name: string) => rawHeader(header, name);
    const threading = threadingHeaders(get);
    const threadId = gmailThreadId ? BigInt(gmailThreadId).toString(16) : threadIdOf(threading, headerBlock(header));
    const id = threading.messageId ? messageIdOf(threading.messageId) : where ? locationIdOf(where) : '';
    if (threadId[0] === 'h' || threadId[0] === 'H') {
      const seen = this.hashedThreads.get(threadId) ?? new Set();
      if (where) seen.add(JSON.stringify(where));
      this.hashedThreads.set(threadId, seen);
    }
    return { id, threadId };
  }

  /** Where the message an id names is: every copy, in readFolders() order. */
  private async locate(client: ImapFlow, id: string): Promise<Located[]> {
    const decoded = decodeMessageRef(id);
    if (!decoded) return [];
    if (decoded.kind === 'location') {
      return this.inFolder(client, decoded.folder, async (uidValidity) =>
        uidValidity === decoded.uidValidity ? [{ folder: decoded.folder, uid: decoded.uid, uidValidity }] : [],
      ).catch(() => []);
    }
    const found: Located[] = [];
    for (const folder of this.readFolders()) found.push(...(await this.findByMessageId(client, folder, decoded.messageId)));
    return found;
  }

  /** UIDs in a folder whose Message-ID is `messageId` (SEARCH HEADER matches substrings; checked exactly). */
  private async findByMessageId(client: ImapFlow, folder: string, messageId: string): Promise<Located[]> {
    const inner = messageId.replace(/^<|>$/g, '');
    if (!inner) return [];
    return this.inFolder(client, folder, async (uidValidity) => {
      const uids = (await client.search({ header: { 'message-id': inner } }, { uid: true })) || [];
      if (uids.length === 0) return [];
      const out: Located[] = [];
      for await (const m of client.fetch(uids.join(','), { uid: true, headers: ['message-id'] }, { uid: true })) {
        const got = threadingHeaders((n) => rawHeader(m.headers ?? Buffer.alloc(0), n)).messageId;
        if (got === messageId || got === `<${inner}>`) out.push({ folder, uid: m.uid, uidValidity });
      }
      return out;
    });
  }

  /** Candidates for a thread: messages naming its root in Message-ID, References or In-Reply-To. */
  private async threadLocations(client: ImapFlow, threadId: string): Promise<Located[]> {
    const hashed = this.hashedThreads.get(threadId);
    if (hashed) return [...hashed].map((s) => JSON.parse(s) as Located);
    const root = threadRootOf(threadId);
    const caps = this.server;
    if (!root) {
      if (caps.gmail && /^[0-9a-f]+$/.test(threadId) && caps.folders.all) {
        const all = caps.folders.all.path;
        return this.inFolder(client, all, async (uidValidity) => {
          const uids = (await client.search({ threadId: BigInt(`0x${threadId}`).toString() }, { uid: true })) || [];
          return uids.map((uid) => ({ folder: all, uid, uidValidity }));
        });
      }
      return [];
    }
    const inner = root.replace(/^<|>$/g, '');
    const found: Located[] = [];
    for (const folder of this.readFolders()) {
      await this.inFolder(client, folder, async (uidValidity) => {
        const query: SearchObject = { or: [{ header: { 'message-id': inner } }, { header: { references: inner } }, { header: { 'in-reply-to': inner } }] };
        const uids = (await client.search(query, { uid: true })) || [];
        for (const uid of uids) found.push({ folder, uid, uidValidity });
      });
    }
    return found;
  }

  /** The message at a location read in full; undefined when it is gone. */
  private async readAt(client: ImapFlow, where: Located): Promise<ThreadMessage | undefined> {
    return this.inFolder(client, where.folder, async (uidValidity) => {
      if (uidValidity !== where.uidValidity) return undefined;
      const query = { uid: true, flags: true, source: true, internalDate: true, size: true, ...(this.server.gmail ? { threadId: true } : {}) };
      const m = (await client.fetchOne(String(where.uid), query, { uid: true })) as FetchedMessage | false;
      if (!m || !m.source) return undefined;
      const raw = new Uint8Array(m.source);
      const ids = this.idsOf(raw, where, m.threadId);
      const labels = this.labelsOf(m.flags ?? new Set(), where.folder);
      // The labels as first read are the baseline listChanges diffs against, until it has seen the message.
      if (!this.memory.get(where.folder, uidValidity, where.uid)) {
        this.memory.set(where.folder, uidValidity, where.uid, { ...ids, labels, modseq: String(m.modseq ?? 0n), seenBy: 'read' });
      }
      return readRawMessage(raw, {
        ...ids,
        labelIds: labels,
        internalDate: new Date(m.internalDate ?? 0).getTime(),
        modseq: String(m.modseq ?? 0n),
        ...(m.size !== undefined ? { size: m.size } : {}),
      });
    });
  }

  private draftMessageId(draftId: string): string {
    const decoded = decodeMessageRef(draftId);
    if (decoded?.kind !== 'message-id') throw new MailboxNotFoundError('draft', draftId);
    return decoded.messageId;
  }

  private draftRefOf(raw: Uint8Array): DraftRef {
    const ids = this.idsOf(raw, undefined);
    return { draftId: ids.id, messageId: ids.id, threadId: ids.threadId };
  }

  /**
   * What the account stores or sends: a Message-ID (random for drafts; for a send, derived from the
   * bytes so a retry of the same bytes finds its first attempt), and References: <root> when the
   * thread's root is known and the message names no parent.
   */
  private prepareOutgoing(raw: Uint8Array, threadId: string | undefined, deterministic = false): Uint8Array {
    let out = raw;
    const domain = this.settings.address.split('@')[1] ?? 'localhost';
    if (!rawHeader(out, 'message-id')) {
      const local = deterministic ? createHashHex(out) : randomUUID();
      out = withTopHeader(out, 'Message-ID', `<${local}@${domain}>`);
    }
    const root = threadId ? threadRootOf(threadId) : undefined;
    if (root && !rawHeader(out, 'references') && !rawHeader(out, 'in-reply-to')) out = withTopHeader(out, 'References', root);
    return out;
  }
}

// ---------------------------------------------------------------------------------------------------

const SYSTEM_LABELS = new Set(['INBOX', 'SENT', 'DRAFT', 'TRASH', 'SPAM', 'UNREAD', 'STARRED', 'IMPORTANT']);

function unique(paths: Array<string | undefined>): string[] {
  return [...new Set(paths.filter((p): p is string => !!p))];
}

function byFolder(locations: Located[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const l of locations) out.set(l.folder, [...(out.get(l.folder) ?? []), l.uid]);
  return out;
}

function isEmptyRecord(r: HistoryRecord): boolean {
  return r.messages.length + r.messagesAdded.length + r.messagesDeleted.length + r.labelsAdded.length + r.labelsRemoved.length === 0;
}

/**
 * A message that vanished from one watched folder and appeared in another within one page moved:
 * reported as the first folder's label removed and the second's added (Gmail's archive is INBOX
 * removed), not as deleted and added.
 */
function pairMoves(records: HistoryRecord[], labelOf: (folder: string) => string | undefined): void {
  const folderOf = (r: HistoryRecord) => (r as HistoryRecord & { folder?: string }).folder ?? '';
  for (const gone of records) {
    for (const deleted of [...gone.messagesDeleted]) {
      if (deleted.id[0] !== 'm') continue;
      for (const came of records) {
        if (came === gone) continue;
        const index = came.messagesAdded.findIndex((a) => a.id === deleted.id);
        if (index < 0) continue;
        // A draft gone from Drafts and its Message-ID in Sent is a draft sent, not moved: a mail client
        // submits the draft and files a copy in Sent, and the thread must see both (draft gone, sent seen).
        if (labelOf(folderOf(gone)) === 'DRAFT' && labelOf(folderOf(came)) === 'SENT') continue;
        const [added] = came.messagesAdded.splice(index, 1);
        gone.messagesDeleted.splice(gone.messagesDeleted.indexOf(deleted), 1);
        const message = { id: added!.id, threadId: added!.threadId, labelIds: added!.labelIds };
        const from = labelOf(folderOf(gone));
        const to = labelOf(folderOf(came));
        if (from) gone.labelsRemoved.push({ message, labelIds: [from] } satisfies LabelHistoryChange);
        if (to) came.labelsAdded.push({ message, labelIds: [to] } satisfies LabelHistoryChange);
        came.messages.push({ id: added!.id, threadId: added!.threadId });
        break;
      }
    }
  }
}

/** IMAP SEARCH keys for a search; null when it can match nothing (an address that is not plain). */
function searchQuery(search: ImapSearch): SearchObject | null {
  const q: SearchObject = {};
  for (const field of ['from', 'to'] as const) {
    const value = search[field];
    if (value === undefined) continue;
    const address = searchableAddress(value);
    if (!address) return null;
    q[field] = address;
  }
  if (search.subject) q.subject = search.subject;
  if (search.text) q.text = search.text;
  if (search.since) q.since = search.since;
  if (search.before) q.before = search.before;
  if (search.unread !== undefined) q.seen = !search.unread;
  if (search.labelId) q.keyword = labelToKeyword(search.labelId);
  if (Object.keys(q).length === 0) q.all = true;
  return q;
}

/** A draft's own marks are not sent: the \Draft flag lives on the IMAP message, not in headers. */
function withoutFlagHeaders(raw: Uint8Array): Uint8Array {
  return withoutHeader(withoutHeader(raw, 'x-mozilla-draft-info'), 'x-uniform-type-identifier');
}

function createHashHex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 32);
}
