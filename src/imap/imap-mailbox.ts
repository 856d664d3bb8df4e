// One IMAP/SMTP account as the product's mailbox: the operations GmailService offers (read a message
// or a thread, labels, changes since a cursor, drafts, send, archive/trash) on IMAP and SMTP, in the
// product's own shapes (src/gmail/types.ts). How ids, threads, labels and the cursor map onto IMAP is
// in docs/imap.md "Mapping" and in mail-ids.ts.
import { searchableLabelName } from '../gmail/label-search.js';
import { createHash, randomUUID } from 'node:crypto';
import type { ImapFlow, MailboxLockObject, SearchObject } from 'imapflow';
import { decodeBase64Url } from '../gmail/mime-encoding.js';
import { withTopHeader } from '../gmail/mime.js';
import { canonicalAddress, domainOf, formatAddress, messageRecipients, parseAddressList, parseSender } from '../gmail/addresses.js';
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
import { failureContext, openImapSessionOf, type ImapSession, type MailConnectDeps } from './connect.js';
import { withAccessToken, type AccessTokenSource } from './oauth-token.js';
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
import { inMemoryLabelMemory, labelsAt, type LabelMemory, type RememberedMessage } from './label-memory.js';
import { readRawMessage } from './raw-message.js';
import { DEFAULT_REQUEST_FOLDERS, isRequestLabel, requestFolderPath, requestFolderRoots, requestLabelOf, type RequestFolderNames } from './request-folders.js';
import { headerBlock, rawHeader, rawHeaderValues, utf8IfValid, withoutHeader } from './raw-headers.js';
import { createSmtpTransport, smtpSendFailure, type SmtpTransport } from './smtp.js';
import { SendOutcomeUnknownError } from '../mail/mailbox-errors.js';
import { readMailQuery } from '../mail/mail-query.js';
import { searchableAddress, searchableDomain, searchableMessageId, type ChangesRequest, type Mailbox, type MailboxCapabilities, type MailSearch, type ReceivedPage, type ReceivedRequest } from '../mail/mailbox.js';

export interface ImapMailboxSettings {
  /** The account's address: the sender of what it sends, the domain of the Message-IDs it makes. */
  address: string;
  imap: { server: MailServerAddress; credentials: MailCredentials };
  smtp: { server: MailServerAddress; credentials: MailCredentials };
  /** Remembers each message's labels between listChanges calls (default: in memory, this process; the workers': PostgreSQL). */
  memory?: LabelMemory;
  /** Runs every operation (its name, e.g. 'reading a message'): the hook a limiter meters them through (the backfill's). */
  gate?: ImapCallGate;
  /**
   * OAuth accounts: the access token of every connection (IMAP and SMTP) comes from here, in place
   * of the credentials' own; a refused token is refreshed once and the login tried again.
   */
  accessToken?: AccessTokenSource;
  /** Folders mode (no keywords): the request labels and timer prefixes that are folders (default Done, Rework; Snooze, Remind, Send). */
  requestFolders?: RequestFolderNames;
}

export type ImapCallGate = <T>(operation: string, call: () => Promise<T>) => Promise<T>;

/** Where listReceived goes on: the folder (its index in backfillFolders()), its UIDVALIDITY, the last UID listed. */
interface ReceivedCursor {
  folder: number;
  uidValidity: string;
  uid: number;
}

/**
 * Where searchMessages goes on, per folder not finished: its UIDVALIDITY and the UID below which its
 * next page starts (null: from its newest message). A folder the cursor does not name is finished.
 */
type SearchCursor = Record<string, [uidValidity: string, below: number | null]>;

/** How many listed messages' locations are kept for the reads that follow a listing. */
const LISTED_LOCATIONS = 50_000;
const DAY_MS = 86_400_000;

/** The neutral search (src/mail/mailbox.ts), plus what only IMAP can ask. */
export interface ImapSearch extends Omit<MailSearch, 'in'> {
  /** Each anywhere in headers or body. */
  text?: string[];
  /** Where to look: a system label (default INBOX); ARCHIVE is the \\Archive folder. */
  in?: MailSearch['in'] | 'ARCHIVE';
  /** On Gmail's IMAP: a Gmail search (X-GM-RAW) instead of the fields above. */
  gmailRaw?: string;
}

/** A page of changes: Gmail's history page shape (historyId is the next cursor), one record per folder. */
export interface ImapChangePage extends HistoryPage {
  /** The cursor to pass next time (same as historyId). */
  cursor: string;
}

type FolderRole = 'inbox' | 'sent' | 'drafts' | 'archive' | 'trash' | 'junk' | 'all' | 'request' | 'other';

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
  /** Gmail's X-GM-LABELS. */
  labels?: Set<string>;
}

const SEEN = '\\Seen';
const FLAGGED = '\\Flagged';
const DRAFT = '\\Draft';
/**
 * On the copy in \Sent while its SMTP submission is under way (not one of our labels: no $DI_
 * prefix). A copy that still has it after a crash is a send whose outcome is unknown; the product
 * reads such a copy as not there (no thread, no change) until the keyword comes off.
 */
const SUBMITTING = '$DurableInboxSubmitting';
/** On a message moved to \Trash from \Archive (not one of our labels): taken out of the trash, it goes back there. */
const FROM_ARCHIVE = '$DurableInboxFromArchive';

export class ImapMailbox implements Mailbox {
  private session: ImapSession | undefined;
  private readonly memory: LabelMemory;
  private readonly smtp: SmtpTransport | undefined;
  /** Thread ids that cannot be searched for (hashed roots): where their messages were seen. */
  private readonly hashedThreads = new Map<string, Set<string>>();
  /** Where listReceived saw each message (the newest listings), so reading it takes no SEARCH of every folder. */
  private readonly listedAt = new Map<string, Located>();
  /**
   * Gmail mode: the user labels this mailbox has read in X-GM-LABELS. Gmail keeps labels out of FLAGS
   * and PERMANENTFLAGS, so listLabels names these: a label in a change record was read a moment
   * before, by the listing that found it.
   */
  private readonly gmailLabelsSeen = new Set<string>();
  /** Folders mode: the request folders on the server (Done, Rework, Snooze/Tomorrow, ...), as last listed. */
  private requestPaths: string[] = [];

  private constructor(
    private readonly settings: ImapMailboxSettings,
    private readonly deps: MailConnectDeps,
    session: ImapSession,
  ) {
    this.session = session;
    this.memory = settings.memory ?? inMemoryLabelMemory();
    this.smtp = settings.accessToken ? undefined : createSmtpTransport(settings.smtp.server, settings.smtp.credentials, deps);
  }

  /** Connects and logs in (openImapSession; without CONDSTORE changes come from a flag scan). Throws a MailServerError. */
  static async open(settings: ImapMailboxSettings, deps: MailConnectDeps = {}): Promise<ImapMailbox> {
    const session = await openImapSessionOf(settings, deps);
    const mailbox = new ImapMailbox(settings, deps, session);
    if (mailbox.foldersMode) {
      try {
        await mailbox.run('creating the request folders', (client) => mailbox.prepareRequestFolders(client));
      } catch (err) {
        await mailbox.close();
        throw err;
      }
    }
    return mailbox;
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
      query: server.gmail ? 'server' : 'read',
    };
  }

  async close(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    this.smtp?.close();
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
      // A message the backfill just listed is read where it was listed; one moved since is looked for everywhere.
      const [listed] = (await this.listedLocation(client, id)) ?? [];
      const read = listed ? await this.readAt(client, listed) : undefined;
      if (read) return read;
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

  /**
   * Messages matching a search, newest first (ids and thread ids only, like messages.list); one page
   * of at most `maxResults` (default 100), with a `nextPageToken` while more matches remain. Each
   * folder searched is read newest UID first, and the folders' lists are merged by INTERNALDATE; the
   * token keeps, per folder not finished, its UIDVALIDITY and the UID below which its next page
   * starts (SearchCursor). A folder whose UIDVALIDITY changed between pages is read again from its
   * newest message: its messages may then be listed twice (the callers count distinct ids).
   */
  async searchMessages(asked: ImapSearch = {}): Promise<MessageList> {
    // A Gmail-syntax query goes to Gmail's IMAP as it is (X-GM-RAW); elsewhere what IMAP can say of it.
    const search: ImapSearch =
      asked.query === undefined ? asked : this.server.gmail ? { ...asked, gmailRaw: asked.query, in: asked.in ?? 'ALL' } : { ...readMailQuery(asked.query, new Date()).search, ...withoutQuery(asked) };
    // Folders mode keeps none of our labels on the server but the request folders: "without the label" cannot be said.
    if (search.withoutLabel !== undefined && this.foldersMode) throw new MailboxUnsupportedError(`this server keeps no keywords: it cannot tell which messages lack the label ${search.withoutLabel}`);
    const query = searchQuery(search, this.server.gmail);
    if (!query) return { messages: [], resultSizeEstimate: 0 };
    const cursor = search.pageToken ? decodeSearchCursor(search.pageToken) : undefined;
    const limit = Math.max(1, search.maxResults ?? 100);
    return this.run('searching', async (client) => {
      const caps = this.server;
      // Without a token every folder starts at its newest message; with one, the folders it names go on and the others are finished.
      const folders = this.searchFolders(search.in ?? 'INBOX').filter((folder) => !cursor || folder in cursor);
      const lists: Array<{ folder: string; uidValidity: string; refs: Array<MessageRef & { date: number; uid: number }>; taken: number; more: boolean; below: number | null }> = [];
      let estimate = 0;
      for (const folder of folders) {
        await this.inFolder(client, folder, async (uidValidity) => {
          const at = cursor?.[folder];
          // A folder reset since the previous page (another UIDVALIDITY) is read again from its newest message.
          const below = at && at[0] === uidValidity ? at[1] : null;
          const uids = (((await client.search(caps.gmail && search.gmailRaw ? { gmraw: [search.gmailRaw, query.gmraw].filter(Boolean).join(' ') } : query, { uid: true })) || []) as number[]).filter((uid) => below === null || uid < below);
          const list = { folder, uidValidity, refs: [] as Array<MessageRef & { date: number; uid: number }>, taken: 0, more: false, below };
          lists.push(list);
          estimate += uids.length;
          if (uids.length === 0) return;
          // SEARCH FROM/TO match substrings of the whole header, display names included: what it
          // finds is kept only when the reader's reading of the header names the address (a batch
          // at a time, newest first, until the page is full). Gmail's raw search is Gmail's.
          const exact = caps.gmail && search.gmailRaw ? undefined : addressFilter(search);
          // On Gmail's IMAP "without the label" is read from each message's X-GM-LABELS, by the label's exact name (case aside, as Gmail names labels).
          const lacking = caps.gmail && search.withoutLabel !== undefined ? search.withoutLabel.toLowerCase() : undefined;
          const newest = uids.sort((a, b) => b - a);
          let read = 0;
          while (read < newest.length && list.refs.length < limit) {
            const batch = newest.slice(read, read + limit);
            read += batch.length;
            const items = { uid: true, headers: true, internalDate: true, ...(caps.gmail ? { threadId: true } : {}), ...(lacking !== undefined ? { labels: true } : {}) } as const;
            const kept: Array<MessageRef & { date: number; uid: number }> = [];
            for await (const m of client.fetch(batch.join(','), items, { uid: true })) {
              const headers = m.headers ?? Buffer.alloc(0);
              if (exact && !exact(headers)) continue;
              if (lacking !== undefined && [...(m.labels ?? [])].some((l) => l.toLowerCase() === lacking)) continue;
              const ids = this.idsOf(headers, { folder, uid: m.uid, uidValidity }, m.threadId);
              kept.push({ ...ids, date: new Date(m.internalDate ?? 0).getTime(), uid: m.uid });
            }
            // FETCH answers in the server's order: the folder's list is newest UID first, cut at the page's size.
            kept.sort((a, b) => b.uid - a.uid);
            const room = limit - list.refs.length;
            list.refs.push(...kept.slice(0, room));
            // Matches read past the page's size, or UIDs left unread, are for a next page.
            if (kept.length > room) list.more = true;
          }
          if (read < newest.length) list.more = true;
        });
      }
      // The folders' lists merged newest first (INTERNALDATE), each taken from its head, so what a
      // folder gives this page is its newest UIDs and its next page starts below the last one given.
      const page: MessageRef[] = [];
      while (page.length < limit) {
        let pick: (typeof lists)[number] | undefined;
        for (const list of lists) {
          const head = list.refs[list.taken];
          if (head && (!pick || head.date > pick.refs[pick.taken]!.date)) pick = list;
        }
        if (!pick) break;
        const { id, threadId } = pick.refs[pick.taken++]!;
        page.push({ id, threadId });
      }
      const next: SearchCursor = {};
      for (const list of lists) {
        if (list.taken === list.refs.length && !list.more) continue; // finished
        next[list.folder] = [list.uidValidity, list.taken > 0 ? list.refs[list.taken - 1]!.uid : list.below];
      }
      return { messages: page, resultSizeEstimate: estimate, ...(Object.keys(next).length > 0 ? { nextPageToken: encodeSearchCursor(next) } : {}) };
    });
  }

  // ------------------------------------------------------------------------------------------------
  // The backfill's reading of the whole mailbox
  // ------------------------------------------------------------------------------------------------

  /** Where the backfill reads: the folders of mail kept (INBOX, Archive, Sent, Drafts), or Gmail's All Mail. */
  backfillFolders(): string[] {
    const f = this.server.folders;
    return f.all ? [f.all.path] : unique([this.server.inbox, f.archive?.path, f.sent?.path, f.drafts?.path]);
  }

  /**
   * Messages received in [after, before), exactly, by INTERNALDATE. IMAP's SINCE/BEFORE compare whole
   * days in the server's time zone, so the SEARCH is widened by days on both sides (any zone) and each
   * message's INTERNALDATE then decides. A page examines up to `pageSize` UIDs (a folder at a time, in
   * UID order); it may hold fewer ids than that, or none, and still have a next page.
   */
  async listReceived({ after, before, pageSize, pageToken }: ReceivedRequest): Promise<ReceivedPage> {
    const folders = this.backfillFolders();
    let at: ReceivedCursor = (pageToken ? decodeReceivedCursor(pageToken) : undefined) ?? { folder: 0, uidValidity: '', uid: 0 };
    const since = new Date(utcDay(after) - DAY_MS);
    const until = new Date(utcDay(Math.max(after, before - 1)) + 2 * DAY_MS);
    return this.run('listing received mail', async (client) => {
      const ids: string[] = [];
      let examined = 0;
      while (at.folder < folders.length && examined < pageSize) {
        const folder = folders[at.folder]!;
        at = await this.inFolder(client, folder, async (uidValidity) => {
          const from = uidValidity === at.uidValidity ? at.uid : 0;
          const found = (((await client.search({ since, before: until }, { uid: true })) || []) as number[]).filter((uid) => uid > from).sort((a, b) => a - b);
          const chunk = found.slice(0, pageSize - examined);
          examined += chunk.length;
          if (chunk.length > 0) {
            for await (const m of client.fetch(chunk.join(','), { uid: true, flags: true, internalDate: true, headers: ['message-id'] }, { uid: true })) {
              const received = new Date(m.internalDate ?? 0).getTime();
              if (received < after || received >= before || m.flags?.has(SUBMITTING)) continue;
              const where = { folder, uid: m.uid, uidValidity };
              const messageId = threadingHeaders((n) => rawHeader(m.headers ?? Buffer.alloc(0), n)).messageId;
              const id = messageId ? messageIdOf(messageId) : locationIdOf(where);
              this.rememberListed(id, where);
              ids.push(id);
            }
          }
          return chunk.length < found.length ? { folder: at.folder, uidValidity, uid: chunk.at(-1)! } : { folder: at.folder + 1, uidValidity: '', uid: 0 };
        });
      }
      return { ids, ...(at.folder < folders.length ? { nextPageToken: encodeReceivedCursor(at) } : {}) };
    });
  }

  /** The oldest INTERNALDATE before `before` in the backfill's folders (every message's date is read: once per backfill). */
  async oldestReceived(before: number): Promise<number | undefined> {
    return this.run('finding the oldest mail', async (client) => {
      let oldest: number | undefined;
      for (const folder of this.backfillFolders()) {
        await this.inFolder(client, folder, async () => {
          if (!client.mailbox || client.mailbox.exists === 0) return;
          for await (const m of client.fetch('1:*', { uid: true, internalDate: true }, { uid: true })) {
            const received = new Date(m.internalDate ?? 0).getTime();
            if (received < before && (oldest === undefined || received < oldest)) oldest = received;
          }
        });
      }
      return oldest;
    });
  }

  /** The messages in the backfill's folders (STATUS MESSAGES). */
  async countMessages(): Promise<number> {
    return this.run('counting messages', async (client) => {
      let total = 0;
      for (const folder of this.backfillFolders()) {
        const status = await client.status(folder, { messages: true });
        total += status ? (status.messages ?? 0) : 0;
      }
      return total;
    });
  }

  private rememberListed(id: string, where: Located): void {
    this.listedAt.delete(id);
    this.listedAt.set(id, where);
    if (this.listedAt.size > LISTED_LOCATIONS) this.listedAt.delete(this.listedAt.keys().next().value!);
  }

  /**
   * The first copy of a listed message in readFolders() order, as locate() finds it, from where it was
   * listed: only the folders before that one are searched for an earlier copy. Undefined when it was not
   * listed (or not in a folder the product reads): locate() then searches them all.
   */
  private async listedLocation(client: ImapFlow, id: string): Promise<Located[] | undefined> {
    const listed = this.listedAt.get(id);
    const decoded = decodeMessageRef(id);
    if (!listed || !decoded) return undefined;
    if (decoded.kind === 'location') return [listed];
    const order = this.readFolders();
    const index = order.indexOf(listed.folder);
    if (index < 0) return undefined;
    for (const folder of order.slice(0, index)) {
      const earlier = await this.findByMessageId(client, folder, decoded.messageId);
      if (earlier.length > 0) return earlier;
    }
    return [listed];
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
      if (this.foldersMode) {
        await this.listRequestFolders(client);
        for (const path of this.requestPaths) names.add(this.requestLabel(path)!);
      }
      for (const label of this.gmailLabelsSeen) names.add(label);
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
    const added = this.flagsOf(add);
    const removed = this.flagsOf(remove);
    // UNREAD is the absence of \Seen: adding it takes \Seen off, removing it puts \Seen on.
    const flagsAdd = [...added.flags, ...(removed.unread ? [SEEN] : [])];
    const flagsRemove = [...removed.flags, ...(added.unread ? [SEEN] : [])];
    await this.run('changing labels', async (client) => {
      for (const [folder, uids] of byFolder(locations)) {
        await this.inFolder(client, folder, async () => {
          const range = uids.join(',');
          if (flagsAdd.length > 0) await client.messageFlagsAdd(range, flagsAdd, { uid: true });
          if (flagsRemove.length > 0) await client.messageFlagsRemove(range, flagsRemove, { uid: true });
          if (added.gmailLabels.length > 0) await client.messageFlagsAdd(range, added.gmailLabels, { uid: true, useLabels: true });
          if (removed.gmailLabels.length > 0) await client.messageFlagsRemove(range, removed.gmailLabels, { uid: true, useLabels: true });
        });
      }
    });
    if (add.includes('TRASH')) {
      await this.markLeavingArchive(locations);
      await this.moveLocations(locations, 'trash');
    } else if (remove.includes('TRASH')) await this.untrashLocations(locations, !remove.includes('INBOX'));
    else if (remove.includes('INBOX')) await this.moveLocations(locations.filter((l) => this.inInbox(l.folder)), 'archive');
    else if (add.includes('INBOX')) await this.moveLocations(locations.filter((l) => this.roleOf(l.folder) !== 'inbox'), 'inbox');
    else if (this.foldersMode) await this.moveForRequests(locations, add, remove);
  }

  /**
   * What goes to the trash from the archive carries FROM_ARCHIVE (where the server keeps keywords),
   * so that taking it out of the trash (a bulk trash undone) puts it back there, not in the inbox.
   */
  private async markLeavingArchive(locations: Located[]): Promise<void> {
    if (!this.server.keywords || this.server.gmail) return;
    const archived = locations.filter((l) => this.roleOf(l.folder) === 'archive');
    if (archived.length === 0) return;
    await this.run('changing labels', async (client) => {
      for (const [folder, uids] of byFolder(archived)) await this.inFolder(client, folder, () => client.messageFlagsAdd(uids.join(','), [FROM_ARCHIVE], { uid: true }));
    });
  }

  /**
   * Out of the trash (TRASH removed). INBOX removed with it (the caller knows the message was not in
   * the inbox: a bulk trash's journal): to Sent, Drafts or the archive. Otherwise back to the archive
   * when it came from there (FROM_ARCHIVE), else as untrashThread (INBOX; Sent, Drafts).
   */
  private async untrashLocations(locations: Located[], intoInbox = true): Promise<void> {
    const trashed = locations.filter((l) => this.roleOf(l.folder) === 'trash');
    if (trashed.length === 0) return;
    const fromArchive = await this.run('reading flags', async (client) => {
      const found: Located[] = [];
      for (const [folder, uids] of byFolder(trashed)) {
        await this.inFolder(client, folder, async (uidValidity) => {
          const marked: number[] = [];
          for await (const m of client.fetch(uids.join(','), { uid: true, flags: true }, { uid: true })) if (m.flags?.has(FROM_ARCHIVE)) marked.push(m.uid);
          if (marked.length > 0) await client.messageFlagsRemove(marked.join(','), [FROM_ARCHIVE], { uid: true });
          found.push(...marked.map((uid) => ({ folder, uid, uidValidity })));
        });
      }
      return found;
    });
    if (!intoInbox) return this.moveLocations(trashed, 'away');
    const back = new Set(fromArchive.map((l) => `${l.folder}\0${l.uid}`));
    await this.moveLocations(fromArchive, 'archive');
    await this.moveLocations(trashed.filter((l) => !back.has(`${l.folder}\0${l.uid}`)), 'inbox');
  }

  /**
   * Folders mode: a request label added moves the thread's inbox messages into its folder (created
   * when missing); one removed moves what is in its folder back to the inbox (where it belongs, as
   * the label comes off on Gmail). A move finds nothing left to move when repeated.
   */
  private async moveForRequests(locations: Located[], add: readonly string[], remove: readonly string[]): Promise<void> {
    const names = this.requestNames;
    const delimiter = this.server.delimiter;
    const added = add.find((l) => isRequestLabel(l, names));
    const removedPaths = new Set(remove.filter((l) => isRequestLabel(l, names)).map((l) => requestFolderPath(l, delimiter)));
    const leaving = locations.filter((l) => removedPaths.has(l.folder));
    if (added) {
      const path = requestFolderPath(added, delimiter);
      await this.run('creating a request folder', (client) => this.ensureFolder(client, path));
      await this.moveLocations([...locations.filter((l) => this.roleOf(l.folder) === 'inbox'), ...leaving].filter((l) => l.folder !== path), { path });
    } else if (leaving.length > 0) {
      await this.moveLocations(leaving, 'inbox');
    }
  }

  /**
   * The flags that stand for labels (STARRED \Flagged, ours keywords; the other system labels none),
   * whether UNREAD is among them, and on Gmail the X-GM-LABELS instead of keywords (ours by name,
   * IMPORTANT as \Important).
   */
  private flagsOf(labels: readonly string[]): { flags: string[]; unread: boolean; gmailLabels: string[] } {
    const flags: string[] = [];
    const gmailLabels: string[] = [];
    for (const label of labels) {
      if (label === 'STARRED') flags.push(FLAGGED);
      else if (this.server.gmail && label === 'IMPORTANT') gmailLabels.push('\\Important');
      else if (SYSTEM_LABELS.has(label)) continue;
      else if (this.server.gmail) gmailLabels.push(label);
      // In folders mode a request label is a folder (moveForRequests) and an informational one is not kept on the server.
      else if (!this.foldersMode) flags.push(labelToKeyword(label));
    }
    return { flags, unread: labels.includes('UNREAD'), gmailLabels };
  }

  /** No keywords, and not Gmail (whose labels are X-GM-LABELS, whatever its PERMANENTFLAGS say). */
  private get foldersMode(): boolean {
    return this.server.stateIn === 'folders' && !this.server.gmail;
  }

  private get requestNames(): RequestFolderNames {
    return this.settings.requestFolders ?? DEFAULT_REQUEST_FOLDERS;
  }

  /** The request label a folder stands for in folders mode (undefined for any other folder, and in keywords mode). */
  private requestLabel(folder: string): string | undefined {
    return this.foldersMode ? requestLabelOf(folder, this.server.delimiter, this.requestNames) : undefined;
  }

  /** Creates the request folders that are missing (CREATE, with the server's delimiter), then lists them. */
  private async prepareRequestFolders(client: ImapFlow): Promise<void> {
    const existing = new Set((await client.list()).map((f) => f.path));
    for (const root of requestFolderRoots(this.requestNames)) {
      const path = requestFolderPath(root, this.server.delimiter);
      if (!existing.has(path)) await this.ensureFolder(client, path);
    }
    await this.listRequestFolders(client);
  }

  /** The request folders on the server now: the user makes timer folders (Snooze/Friday) in their client. */
  private async listRequestFolders(client: ImapFlow): Promise<void> {
    const paths = (await client.list()).map((f) => f.path).filter((path) => this.requestLabel(path) !== undefined);
    this.requestPaths = paths.sort();
  }

  private async ensureFolder(client: ImapFlow, path: string): Promise<void> {
    if (this.requestPaths.includes(path)) return;
    // CREATE of a folder another session made meanwhile answers ALREADYEXISTS: the folder is there.
    await client.mailboxCreate(path).catch((err: { serverResponseCode?: string }) => {
      if (err.serverResponseCode !== 'ALREADYEXISTS') throw err;
    });
    await client.mailboxSubscribe(path).catch(() => undefined);
    if (this.requestLabel(path) !== undefined) this.requestPaths = [...this.requestPaths, path].sort();
  }

  /** INBOX, or (folders mode) a request folder: a message there is still the inbox's, with a request on it. */
  private inInbox(folder: string): boolean {
    const role = this.roleOf(folder);
    return role === 'inbox' || role === 'request';
  }

  // ------------------------------------------------------------------------------------------------
  // Changes
  // ------------------------------------------------------------------------------------------------

  /** Folders listChanges follows: INBOX, Sent, Drafts, and Archive and Trash when the server has them. */
  watchedFolders(): string[] {
    const f = this.server.folders;
    return unique([this.server.inbox, f.sent?.path, f.drafts?.path, f.archive?.path, f.trash?.path, ...(this.foldersMode ? this.requestPaths : [])]);
  }

  /**
   * The cursor of now: each watched folder's UIDVALIDITY, HIGHESTMODSEQ and UIDNEXT (STATUS). Without
   * CONDSTORE the folder is scanned instead (scanBaseline): its messages' labels of now are the
   * memory's baseline, so a keyword set after this cursor is diffed by the first listChanges.
   */
  async getCursor(): Promise<string> {
    return this.run('reading folder states', async (client) => {
      if (this.foldersMode) await this.listRequestFolders(client);
      const cursor: ChangeCursor = {};
      for (const folder of this.watchedFolders()) {
        if (!this.server.condstore) {
          const position = await this.scanBaseline(client, folder);
          if (position) cursor[folder] = position;
          continue;
        }
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
      if (this.foldersMode) await this.listRequestFolders(client);
      const next: ChangeCursor = {};
      const records: HistoryRecord[] = [];
      for (const folder of this.watchedFolders()) {
        const from = cursor[folder];
        const { record, position } = await this.folderChanges(client, folder, from);
        next[folder] = position;
        if (record) records.push(record);
      }
      pairMoves(records, (folder) => this.folderLabels(folder));
      if (this.server.gmail) for (const record of records) await this.archivedOnGmail(client, record);
      if (this.foldersMode) for (const record of records) this.requestsAsLabels(record);
      const nextCursor = encodeCursor(next);
      return { records: records.filter((r) => !isEmptyRecord(r)), historyId: nextCursor, cursor: nextCursor };
    });
  }

  /**
   * Gmail: a message gone from INBOX that All Mail still holds was archived (All Mail is not watched):
   * INBOX removed, as on the Gmail API, and its labels diffed against the remembered ones, so a label
   * added with the archive (Gmail's "Move to" a label: Done, Rework) is told, not lost to a deletion.
   */
  private async archivedOnGmail(client: ImapFlow, record: HistoryRecord): Promise<void> {
    const all = this.server.folders.all?.path;
    if (!all || this.roleOf((record as HistoryRecord & { folder?: string }).folder ?? '') !== 'inbox') return;
    const before = goneLabelsOf(record);
    for (const deleted of [...record.messagesDeleted]) {
      const ref = decodeMessageRef(deleted.id);
      const labels = before.get(deleted.id);
      if (ref?.kind !== 'message-id' || !labels) continue;
      const [where] = await this.findByMessageId(client, all, ref.messageId);
      if (!where) continue;
      const m = await this.inFolder(client, all, () => client.fetchOne(String(where.uid), { uid: true, flags: true, labels: true }, { uid: true }));
      if (!m) continue;
      const now = this.labelsOf(m.flags ?? new Set(), all, m.labels).filter((l) => l !== 'INBOX');
      record.messagesDeleted.splice(record.messagesDeleted.indexOf(deleted), 1);
      const message = { id: deleted.id, threadId: deleted.threadId, labelIds: now };
      const removed = labels.filter((l) => !now.includes(l));
      const added = now.filter((l) => !labels.includes(l));
      record.messages.push({ id: deleted.id, threadId: deleted.threadId });
      if (removed.length > 0) record.labelsRemoved.push({ message, labelIds: removed });
      if (added.length > 0) record.labelsAdded.push({ message, labelIds: added });
    }
  }

  /**
   * Folders mode: a message that appeared in a request folder (its INBOX copy not seen leaving in this
   * page, e.g. after a restart) is the request's label added, not new mail.
   */
  private requestsAsLabels(record: HistoryRecord): void {
    const label = this.requestLabel((record as HistoryRecord & { folder?: string }).folder ?? '');
    if (label === undefined) return;
    for (const added of record.messagesAdded.splice(0)) {
      record.messages.push({ id: added.id, threadId: added.threadId });
      record.labelsAdded.push({ message: added, labelIds: [label] });
    }
  }

  private async folderChanges(client: ImapFlow, folder: string, cursorAt: FolderCursor | undefined): Promise<{ record?: HistoryRecord; position: FolderCursor }> {
    const lock = await this.openFolder(client, folder);
    if (!lock) {
      if (cursorAt && this.roleOf(folder) !== 'request') throw new MailboxResetError(folder, cursorAt.uidValidity, undefined);
      return { position: { uidValidity: '0', highestModseq: '0', uidNext: 1 } };
    }
    try {
      const box = client.mailbox;
      if (!box) throw new Error('no mailbox selected');
      const uidValidity = String(box.uidValidity);
      // A request folder the user deleted and made again (Snooze/Friday) is read from its start, not a reset of the mailbox.
      const from = cursorAt && cursorAt.uidValidity !== uidValidity && this.roleOf(folder) === 'request' ? undefined : cursorAt;
      const position: FolderCursor = { uidValidity, highestModseq: String(box.highestModseq ?? 0n), uidNext: box.uidNext };
      // A folder that appeared since the cursor (created later) starts from its beginning.
      const start = from ?? { uidValidity, highestModseq: '0', uidNext: 1 };
      if (start.uidValidity !== uidValidity) throw new MailboxResetError(folder, start.uidValidity, uidValidity);
      if (!this.server.condstore) return await this.scannedChanges(client, folder, uidValidity, from, start);
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
        for await (const m of client.fetch('1:*', { uid: true, flags: true, headers: true, ...(this.server.gmail ? { threadId: true, labels: true } : {}) }, { uid: true, changedSince: BigInt(start.highestModseq) })) {
          changed.push(m as FetchedMessage);
        }
      } finally {
        client.off('expunge', onExpunge);
      }
      const remembered = await this.memory.load(folder, uidValidity, this.server.qresync ? [...vanished, ...changed.map((m) => m.uid)] : undefined);
      const startModseq = BigInt(start.highestModseq);
      if (!this.server.qresync) {
        const present = new Set(((await client.search({ all: true }, { uid: true })) || []) as number[]);
        for (const [uid, entry] of remembered) if (uid < start.uidNext && !present.has(uid) && !goneBefore(entry, startModseq)) vanished.push(uid);
      }
      const seen = new Map<number, RememberedMessage>();
      for (const uid of vanished) {
        const known = remembered.get(uid);
        record.messagesDeleted.push(known ? { id: known.id, threadId: known.threadId } : { id: locationIdOf({ uidValidity, uid, folder }), threadId: '' });
        if (known) {
          seen.set(uid, { ...known, at: position.highestModseq, gone: true });
          goneLabelsOf(record).set(known.id, (labelsAt(known, startModseq) ?? known).labels);
        }
      }
      for (const m of changed) {
        // A sent copy in flight is not there yet; it is added when its keyword comes off (below).
        if (m.flags?.has(SUBMITTING)) continue;
        const where = { folder, uid: m.uid, uidValidity };
        const ids = this.idsOf(m.headers ?? Buffer.alloc(0), where, m.threadId);
        const labels = this.labelsOf(m.flags ?? new Set(), folder, m.labels);
        // The labels as they were at the cursor's point: a read's baseline taken after it may already
        // hold this change, and an entry this page wrote before (its cursor never saved) does.
        const known = labelsAt(remembered.get(m.uid), startModseq);
        seen.set(m.uid, { ...ids, labels, at: position.highestModseq, seenBy: 'changes', ...(known ? { before: known } : {}) });
        // A sent copy whose in-flight keyword came off is new to the thread, as an APPENDed one is.
        const submitted = !known && from !== undefined && this.roleOf(folder) === 'sent';
        if (m.uid >= start.uidNext || (!known && !from) || submitted) {
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
      await this.memory.save(folder, uidValidity, seen, start.highestModseq);
      return { record, position };
    } finally {
      lock.release();
    }
  }

  /**
   * A folder's changes on a server without CONDSTORE (Exchange): the flags of every message (one
   * FETCH of the whole folder) compared with the label memory, new UIDs from UIDNEXT, expunged ones
   * the remembered UIDs no longer there. The cursor's highestModseq counts the scans that found a
   * change, which is what the memory's `at` is ordered by. A message the memory does not know and
   * below UIDNEXT (the first scan after connecting) is remembered as it is now, with no change told.
   */
  private async scannedChanges(
    client: ImapFlow,
    folder: string,
    uidValidity: string,
    from: FolderCursor | undefined,
    start: FolderCursor,
  ): Promise<{ record?: HistoryRecord; position: FolderCursor }> {
    const box = client.mailbox;
    if (!box) throw new Error('no mailbox selected');
    const flagged = await this.fetchAllFlags(client);
    const remembered = await this.memory.load(folder, uidValidity);
    const startAt = BigInt(start.highestModseq);
    const at = String(startAt + 1n);
    const record: HistoryRecord = { id: at, messages: [], messagesAdded: [], messagesDeleted: [], labelsAdded: [], labelsRemoved: [] };
    (record as HistoryRecord & { folder: string }).folder = folder;
    const vanished = [...remembered].filter(([uid, entry]) => !flagged.has(uid) && !goneBefore(entry, startAt)).map(([uid]) => uid);
    const seen = new Map<number, RememberedMessage>();
    for (const uid of vanished) {
      const known = remembered.get(uid)!;
      record.messagesDeleted.push({ id: known.id, threadId: known.threadId });
      seen.set(uid, { ...known, at, gone: true });
      goneLabelsOf(record).set(known.id, (labelsAt(known, startAt) ?? known).labels);
    }
    // The ids of the messages the memory does not name yet: their headers, once.
    const headers = await this.fetchIds(client, [...flagged.keys()].filter((uid) => !remembered.has(uid)));
    const baselines = new Map<number, RememberedMessage>();
    for (const [uid, m] of flagged) {
      const entry = remembered.get(uid);
      const named = headers.get(uid);
      const ids = entry ? { id: entry.id, threadId: entry.threadId } : this.idsOf(named?.headers ?? Buffer.alloc(0), { folder, uid, uidValidity }, named?.threadId);
      const labels = this.scannedLabels(m, folder);
      const known = labelsAt(entry, startAt);
      const isNew = uid >= start.uidNext || !from;
      if (!known && !isNew) {
        if (!entry) baselines.set(uid, { ...ids, labels, at: start.highestModseq, seenBy: 'changes' });
        continue;
      }
      if (known && sameLabels(known.labels, labels) && !isNew) continue;
      seen.set(uid, { ...ids, labels, at, seenBy: 'changes', ...(known ? { before: known } : {}) });
      if (labels.includes(SUBMITTING)) continue;
      if (isNew || known!.labels.includes(SUBMITTING)) {
        record.messagesAdded.push({ ...ids, labelIds: labels });
        continue;
      }
      record.messages.push(ids);
      const added = labels.filter((l) => !known!.labels.includes(l));
      const removed = known!.labels.filter((l) => !labels.includes(l));
      const message = { ...ids, labelIds: labels };
      if (added.length > 0) record.labelsAdded.push({ message, labelIds: added });
      if (removed.length > 0) record.labelsRemoved.push({ message, labelIds: removed });
    }
    let uidNext = Math.max(box.uidNext, start.uidNext);
    for (const uid of flagged.keys()) if (uid >= uidNext) uidNext = uid + 1;
    const changed = seen.size > 0;
    await this.memory.save(folder, uidValidity, new Map([...baselines, ...seen]), start.highestModseq);
    const position: FolderCursor = { uidValidity, highestModseq: changed ? at : start.highestModseq, uidNext };
    return changed ? { record, position } : { position };
  }

  /**
   * Without CONDSTORE, the baseline getCursor gives: the folder's messages below its UIDNEXT with their
   * labels of now, remembered where the memory knows nothing of them yet (one FETCH of every flag, the
   * headers of the unknown ones); the cursor's highestModseq is the newest scan count the memory holds
   * for the folder, so every entry reads as known from it. Undefined when the folder does not exist.
   */
  private async scanBaseline(client: ImapFlow, folder: string): Promise<FolderCursor | undefined> {
    const lock = await this.openFolder(client, folder);
    if (!lock) return undefined;
    try {
      const box = client.mailbox;
      if (!box) throw new Error('no mailbox selected');
      const uidValidity = String(box.uidValidity);
      const uidNext = box.uidNext;
      const flagged = await this.fetchAllFlags(client);
      const remembered = await this.memory.load(folder, uidValidity);
      let at = 0n;
      for (const entry of remembered.values()) if (BigInt(entry.at) > at) at = BigInt(entry.at);
      const unknown = [...flagged.keys()].filter((uid) => uid < uidNext && !remembered.has(uid));
      const headers = await this.fetchIds(client, unknown);
      const baselines = new Map<number, RememberedMessage>();
      for (const uid of unknown) {
        const named = headers.get(uid);
        const ids = this.idsOf(named?.headers ?? Buffer.alloc(0), { folder, uid, uidValidity }, named?.threadId);
        baselines.set(uid, { ...ids, labels: this.scannedLabels(flagged.get(uid)!, folder), at: String(at), seenBy: 'changes' });
      }
      if (baselines.size > 0) await this.memory.noteBaselines(folder, uidValidity, baselines);
      return { uidValidity, highestModseq: String(at), uidNext };
    } finally {
      lock.release();
    }
  }

  /** The flags (and on Gmail X-GM-LABELS) of every message of the selected folder, by UID. */
  private async fetchAllFlags(client: ImapFlow): Promise<Map<number, FetchedMessage>> {
    const flagged = new Map<number, FetchedMessage>();
    if ((client.mailbox ? client.mailbox.exists : 0) === 0) return flagged;
    for await (const m of client.fetch('1:*', { uid: true, flags: true, ...(this.server.gmail ? { labels: true } : {}) }, { uid: true })) flagged.set(m.uid, m as FetchedMessage);
    return flagged;
  }

  /** The headers (and on Gmail X-GM-THRID) of these UIDs of the selected folder, for their ids. */
  private async fetchIds(client: ImapFlow, uids: readonly number[]): Promise<Map<number, FetchedMessage>> {
    const headers = new Map<number, FetchedMessage>();
    if (uids.length === 0) return headers;
    for await (const m of client.fetch(uids.join(','), { uid: true, headers: true, ...(this.server.gmail ? { threadId: true } : {}) }, { uid: true })) headers.set(m.uid, m as FetchedMessage);
    return headers;
  }

  /** A scanned message's labels; a sent copy in flight is remembered as such (when its keyword comes off it is new to the thread). */
  private scannedLabels(m: FetchedMessage, folder: string): string[] {
    return m.flags?.has(SUBMITTING) ? [SUBMITTING] : this.labelsOf(m.flags ?? new Set(), folder, m.labels);
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
      // On Gmail a thread is looked for in INBOX and All Mail, where a draft is not its Drafts copy.
      const gmailThread = this.server.gmail && !threadRootOf(threadId) && /^[0-9a-f]+$/.test(threadId);
      const found = gmailThread ? await this.gmailThreadIn(client, [drafts], threadId) : (await this.threadLocations(client, threadId)).filter((l) => l.folder === drafts);
      const refs: DraftRef[] = [];
      await this.inFolder(client, drafts, async (uidValidity) => {
        if (found.length === 0) return;
        const query = { uid: true, headers: true, ...(this.server.gmail ? { threadId: true } : {}) };
        for await (const m of client.fetch(found.map((l) => l.uid).join(','), query, { uid: true })) {
          const ids = this.idsOf(m.headers ?? Buffer.alloc(0), { folder: drafts, uid: m.uid, uidValidity }, (m as FetchedMessage).threadId);
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
    // Gmail files what it sends itself, and a server without keywords cannot mark a copy in flight:
    // there the copy can only follow the submission.
    const copyFirst = !this.server.gmail && this.server.keywords;
    const already = await this.run('looking for a sent copy', async (client) => {
      const found = await this.findByMessageId(client, sent, messageId);
      if (found.length === 0 || !copyFirst) return found.length > 0 ? 'sent' : 'no';
      const flags = await this.inFolder(client, sent, async () => {
        const m = await client.fetchOne(String(found[0]!.uid), { flags: true }, { uid: true });
        return m ? m.flags : undefined;
      });
      return flags?.has(SUBMITTING) ? 'in-doubt' : 'sent';
    });
    if (already === 'sent') return ref;
    if (already === 'in-doubt') throw new SendOutcomeUnknownError(messageId, `its copy is in ${sent} with the keyword ${SUBMITTING}`);
    // The copy goes first, marked in flight: a worker killed during the submission leaves a trace a
    // retry reads, instead of a retry that submits a second time.
    const copy = copyFirst ? await this.run('filing the sent copy', (client) => client.append(sent, Buffer.from(raw), [SEEN, SUBMITTING])) : undefined;
    // The envelope is the recipients as the product's reader reads the message, the reading a send
    // is judged by (messageRecipients): not a second reading of the raw headers.
    const read = await readRawMessage(raw, { ...ref, labelIds: [], internalDate: 0, modseq: '0' });
    const envelope = { from: this.settings.address, to: messageRecipients(read) };
    try {
      await this.submit({ envelope, raw: Buffer.from(withoutHeader(raw, 'bcc')) });
    } catch (err) {
      const failure = smtpSendFailure(err, this.settings.smtp.server, this.smtpCredentialsFor(''), this.deps);
      // A refusal in the server's words (or no connection at all) is certain: the message did not go.
      // Anything else may have happened after the server took it: the marked copy stays for the retry.
      if (copy && refusedForCertain(err)) await this.run('taking back the sent copy', (client) => this.removeCopy(client, sent, copy.uid));
      throw failure;
    }
    if (copy) {
      await this.run('marking the sent copy sent', (client) => this.inFolder(client, sent, () => client.messageFlagsRemove(String(copy.uid), [SUBMITTING], { uid: true })));
    } else if (!this.server.gmail) {
      await this.run('filing the sent copy', (client) => client.append(sent, Buffer.from(raw), [SEEN]));
    }
    return ref;
  }

  /**
   * Puts a message of ours into the mailbox without sending it (Gmail's messages.insert): APPENDed to
   * INBOX (to the archive without INBOX among the labels), without \Seen when UNREAD is among them,
   * our labels as keywords. It threads by its References; threadId adds them when it names none.
   */
  async insertMessage(raw64: string, labelIds: string[], threadId?: string): Promise<{ id: string; threadId: string }> {
    const raw = this.prepareOutgoing(decodeBase64Url(raw64), threadId, true);
    const folder = labelIds.includes('INBOX') ? this.server.inbox : this.archiveFolder();
    // Without keywords our labels cannot be kept: the message still goes in, without them.
    const kept = this.server.stateIn === 'keywords' ? labelIds : labelIds.filter((l) => SYSTEM_LABELS.has(l));
    const { flags, unread, gmailLabels } = this.flagsOf(kept);
    if (!unread) flags.push(SEEN);
    await this.run('putting a message into the mailbox', async (client) => {
      const appended = await client.append(folder, Buffer.from(raw), flags);
      // Gmail takes labels by STORE X-GM-LABELS, not as APPEND's flags.
      if (gmailLabels.length > 0 && appended && appended.uid) {
        await this.inFolder(client, folder, () => client.messageFlagsAdd(String(appended.uid), gmailLabels, { uid: true, useLabels: true }));
      }
    });
    return this.idsOf(Buffer.from(headerBlock(raw)), undefined);
  }

  /** The thread's first subject and sender and its newest snippet, read from the thread. */
  async getThreadSummary(threadId: string): Promise<{ subject: string; from: string; snippet: string }> {
    const { messages } = await this.getThread(threadId);
    const first = messages[0];
    const from = first?.from ? formatAddress(first.from) : '';
    return { subject: first?.subject ?? '', from, snippet: messages.at(-1)?.snippet ?? '' };
  }

  private async removeCopy(client: ImapFlow, folder: string, uid: number | undefined): Promise<void> {
    if (!uid) return;
    await this.inFolder(client, folder, () => client.messageDelete(String(uid), { uid: true }));
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
    await this.moveLocations(locations.filter((l) => this.inInbox(l.folder)), 'archive');
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
    if (this.server.gmail) await this.labelInbox(locations);
  }

  async untrashThread(threadId: string): Promise<void> {
    await this.moveThreadToInbox(threadId);
  }

  /**
   * On Gmail an archived message is in All Mail only: it comes back by getting the \Inbox label (a
   * MOVE out of All Mail would delete it). Drafts and what the account sent stay where they are.
   */
  private async labelInbox(locations: Located[]): Promise<void> {
    const archived = locations.filter((l) => this.roleOf(l.folder) === 'all');
    if (archived.length === 0) return;
    await this.run('moving messages', async (client) => {
      const all = archived[0]!.folder;
      await this.inFolder(client, all, async () => {
        const back: number[] = [];
        for await (const m of client.fetch(archived.map((l) => l.uid).join(','), { uid: true, flags: true, envelope: true, labels: true }, { uid: true })) {
          const fromUser = (m.envelope?.from ?? []).some((a) => a.address?.toLowerCase() === this.settings.address.toLowerCase());
          if (m.flags?.has(DRAFT) || fromUser || m.labels?.has('\\Inbox')) continue;
          back.push(m.uid);
        }
        if (back.length > 0) await client.messageFlagsAdd(back.join(','), ['\\Inbox'], { uid: true, useLabels: true });
      });
    });
  }

  /** `away`: out of where they are but not into the inbox (Sent, Drafts, else the archive). */
  private async moveLocations(locations: Located[], to: 'inbox' | 'away' | 'archive' | 'trash' | { path: string }): Promise<void> {
    if (locations.length === 0) return;
    await this.run('moving messages', async (client) => {
      for (const [folder, uids] of byFolder(locations)) {
        if (to === 'inbox' || to === 'away') {
          // Sent mail and drafts go back to their own folders, not to INBOX (nor the archive).
          const destinations = await this.inFolder(client, folder, async () => {
            const out = new Map<string, number[]>();
            for await (const m of client.fetch(uids.join(','), { uid: true, flags: true, envelope: true }, { uid: true })) {
              const fromUser = (m.envelope?.from ?? []).some((a) => a.address?.toLowerCase() === this.settings.address.toLowerCase());
              const dest = m.flags?.has(DRAFT) ? this.folder('drafts') : fromUser ? this.folder('sent') : to === 'inbox' ? this.server.inbox : this.archiveFolder();
              if (dest === folder) continue;
              out.set(dest, [...(out.get(dest) ?? []), m.uid]);
            }
            return out;
          });
          for (const [dest, some] of destinations) await this.inFolder(client, folder, () => client.messageMove(some.join(','), dest, { uid: true }));
          continue;
        }
        const dest = typeof to === 'object' ? to.path : to === 'trash' ? this.folder('trash') : this.archiveFolder();
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

  /** SMTP submission; with OAuth on a transport of the current token, a refused token refreshed once (nothing was sent). */
  private async submit(message: { envelope: { from: string; to: string[] }; raw: Buffer }): Promise<void> {
    if (this.smtp) {
      await this.smtp.sendMail(message);
      return;
    }
    const source = this.settings.accessToken!;
    // No access token (the token endpoint unreachable, the grant refused) means no SMTP session: nothing was submitted.
    const tokens: AccessTokenSource = {
      current: () => source.current().catch((err: unknown) => {
        if (err !== null && typeof err === 'object') NOT_SUBMITTED.add(err);
        throw err;
      }),
      refused: (token) => source.refused(token),
    };
    await withAccessToken(
      tokens,
      async (token) => {
        const transport = createSmtpTransport(this.settings.smtp.server, this.smtpCredentialsFor(token), this.deps);
        try {
          await transport.sendMail(message);
        } finally {
          transport.close();
        }
      },
      (err) => (err as { code?: string }).code === 'EAUTH',
    );
  }

  private smtpCredentialsFor(token: string): MailCredentials {
    return this.settings.accessToken ? { user: this.settings.smtp.credentials.user, accessToken: token } : this.settings.smtp.credentials;
  }

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
      session = await openImapSessionOf(this.settings, this.deps);
      this.session = session;
    }
    const call = async () => {
      try {
        return await fn(session.client);
      } catch (err) {
        const lost = !session.client.usable;
        throw imapOperationFailure(err, ctx, operation, lost);
      }
    };
    return this.settings.gate ? this.settings.gate(operation, call) : call();
  }

  private async inFolder<T>(client: ImapFlow, folder: string, fn: (uidValidity: string) => Promise<T>): Promise<T> {
    const lock = await lockFolder(client, folder);
    try {
      return await fn(String(client.mailbox ? client.mailbox.uidValidity : 0n));
    } finally {
      lock.release();
    }
  }

  /** SELECTs a folder for listChanges (under imapflow's lock); undefined when it does not exist. */
  private async openFolder(client: ImapFlow, folder: string): Promise<{ release(): void } | undefined> {
    try {
      return await lockFolder(client, folder);
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
    if (this.requestLabel(folder) !== undefined) return 'request';
    for (const role of ['sent', 'drafts', 'archive', 'trash', 'junk', 'all'] as const) if (caps.folders[role]?.path === folder) return role;
    return 'other';
  }

  /** The system label a folder stands for, as Gmail's label ids. */
  private roleLabel(folder: string): string | undefined {
    return { inbox: 'INBOX', sent: 'SENT', drafts: 'DRAFT', trash: 'TRASH', junk: 'SPAM' }[this.roleOf(folder) as string];
  }

  /** The labels a folder gives its messages: its system label; a request folder INBOX and its request (as on Gmail). */
  private folderLabels(folder: string): string[] {
    const request = this.requestLabel(folder);
    if (request !== undefined) return ['INBOX', request];
    const role = this.roleLabel(folder);
    return role ? [role] : [];
  }

  /** The labels of a message in `folder`: its folder's, the flags', ours (keywords, or on Gmail X-GM-LABELS). */
  private labelsOf(flags: Set<string>, folder: string, gmailLabels?: Set<string>): string[] {
    const labels: string[] = this.folderLabels(folder);
    const role = this.roleLabel(folder);
    if (flags.has(DRAFT) && role !== 'DRAFT') labels.push('DRAFT');
    if (!flags.has(SEEN)) labels.push('UNREAD');
    if (flags.has(FLAGGED)) labels.push('STARRED');
    for (const flag of flags) {
      const label = keywordToLabel(flag);
      if (label !== undefined) labels.push(label);
    }
    for (const label of gmailLabels ?? []) {
      // Gmail's system labels are \-atoms; the folders' ones (\Inbox, \Sent, ...) come from the folder above.
      const system = GMAIL_SYSTEM_LABELS[label];
      if (system) {
        if (!labels.includes(system)) labels.push(system);
      }
      else if (!label.startsWith('\\') && !labels.includes(label)) {
        labels.push(label);
        this.gmailLabelsSeen.add(label);
      }
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
        // Everywhere but spam and trash (MailSearch.in), as Gmail's search reads it.
        return f.all ? [f.all.path] : this.readFolders().filter((folder) => folder !== f.trash?.path && folder !== f.junk?.path);
      case 'ANYWHERE':
        return f.all ? unique([f.all.path, f.trash?.path, f.junk?.path]) : this.readFolders();
    }
  }

  /**
   * Where messages of threads live, in the order a duplicate is taken from. On Gmail an archived
   * message is only in All Mail (last: every other message is there too).
   */
  private readFolders(): string[] {
    const f = this.server.folders;
    return unique([this.server.inbox, ...(this.foldersMode ? this.requestPaths : []), f.archive?.path, f.sent?.path, f.drafts?.path, f.trash?.path, f.junk?.path, this.server.gmail ? f.all?.path : undefined]);
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

  /** Gmail's IMAP: the thread's messages in these folders (SEARCH X-GM-THRID). */
  private async gmailThreadIn(client: ImapFlow, folders: string[], threadId: string): Promise<Located[]> {
    const found: Located[] = [];
    for (const folder of folders) {
      await this.inFolder(client, folder, async (uidValidity) => {
        const uids = (await client.search({ threadId: BigInt(`0x${threadId}`).toString() }, { uid: true })) || [];
        for (const uid of uids) found.push({ folder, uid, uidValidity });
      });
    }
    return found;
  }

  /** Candidates for a thread: messages naming its root in Message-ID, References or In-Reply-To. */
  private async threadLocations(client: ImapFlow, threadId: string): Promise<Located[]> {
    const hashed = this.hashedThreads.get(threadId);
    if (hashed) return [...hashed].map((s) => JSON.parse(s) as Located);
    const root = threadRootOf(threadId);
    const caps = this.server;
    if (!root) {
      if (caps.gmail && /^[0-9a-f]+$/.test(threadId) && caps.folders.all) {
        // All Mail has the thread but Trash and Spam; the INBOX copies are where archiving moves from
        // (a Gmail message is in every folder of its labels: getThread lists it once, the first folder's).
        return this.gmailThreadIn(client, unique([caps.inbox, caps.folders.all.path, caps.folders.trash?.path, caps.folders.junk?.path]), threadId);
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
      const query = { uid: true, flags: true, source: true, internalDate: true, size: true, ...(this.server.gmail ? { threadId: true, labels: true } : {}) };
      const m = (await client.fetchOne(String(where.uid), query, { uid: true })) as FetchedMessage | false;
      if (!m || !m.source || m.flags?.has(SUBMITTING)) return undefined;
      const raw = new Uint8Array(m.source);
      const ids = this.idsOf(raw, where, m.threadId);
      const labels = this.labelsOf(m.flags ?? new Set(), where.folder, m.labels);
      // The labels as first read are the baseline listChanges diffs against, until it has seen the message.
      // Without CONDSTORE a read cannot say when its labels held: the scan takes its own baseline.
      if (this.server.condstore) await this.memory.noteRead(where.folder, uidValidity, where.uid, { ...ids, labels, at: String(m.modseq ?? 0n), seenBy: 'read' });
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

/** Gmail's system labels in X-GM-LABELS (a message read through All Mail has no folder of its own to say them). */
const GMAIL_SYSTEM_LABELS: Record<string, string> = { '\\Inbox': 'INBOX', '\\Sent': 'SENT', '\\Draft': 'DRAFT', '\\Important': 'IMPORTANT', '\\Starred': 'STARRED' };

const SYSTEM_LABELS = new Set(['INBOX', 'SENT', 'DRAFT', 'TRASH', 'SPAM', 'UNREAD', 'STARRED', 'IMPORTANT']);

function unique(paths: Array<string | undefined>): string[] {
  return [...new Set(paths.filter((p): p is string => !!p))];
}

function byFolder(locations: Located[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const l of locations) out.set(l.folder, [...(out.get(l.folder) ?? []), l.uid]);
  return out;
}

/** An expunge a page told, whose cursor was then saved: not told again (and forgotten at the next save). */
function goneBefore(entry: RememberedMessage, cursorModseq: bigint): boolean {
  return entry.gone === true && BigInt(entry.at) <= cursorModseq;
}

function sameLabels(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((l) => b.includes(l));
}

function isEmptyRecord(r: HistoryRecord): boolean {
  return r.messages.length + r.messagesAdded.length + r.messagesDeleted.length + r.labelsAdded.length + r.labelsRemoved.length === 0;
}

/**
 * A message that vanished from one watched folder and appeared in another within one page moved:
 * reported as the first folder's label removed and the second's added (Gmail's archive is INBOX
 * removed), not as deleted and added.
 */
/** The labels a message had before it vanished from a record's folder (the memory's, at the page's cursor), by message id. */
const GONE_LABELS = new WeakMap<HistoryRecord, Map<string, string[]>>();

function goneLabelsOf(record: HistoryRecord): Map<string, string[]> {
  let labels = GONE_LABELS.get(record);
  if (!labels) GONE_LABELS.set(record, (labels = new Map()));
  return labels;
}

function pairMoves(records: HistoryRecord[], labelsOf: (folder: string) => string[]): void {
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
        const from = labelsOf(folderOf(gone));
        const to = labelsOf(folderOf(came));
        if (from.includes('DRAFT') && to.includes('SENT')) continue;
        const [added] = came.messagesAdded.splice(index, 1);
        gone.messagesDeleted.splice(gone.messagesDeleted.indexOf(deleted), 1);
        const message = { id: added!.id, threadId: added!.threadId, labelIds: added!.labelIds };
        // The whole labels, not only the folders': a keyword set with the move (Done, then archived
        // before the sync looked) is told too. Into a request folder INBOX stays (folders mode).
        const before = goneLabelsOf(gone).get(deleted.id) ?? from;
        const after = added!.labelIds ?? to;
        const labelsRemoved = before.filter((l) => !after.includes(l));
        const labelsAdded = after.filter((l) => !before.includes(l));
        if (labelsRemoved.length > 0) gone.labelsRemoved.push({ message, labelIds: labelsRemoved } satisfies LabelHistoryChange);
        if (labelsAdded.length > 0) came.labelsAdded.push({ message, labelIds: labelsAdded } satisfies LabelHistoryChange);
        came.messages.push({ id: added!.id, threadId: added!.threadId });
        break;
      }
    }
  }
}

/** The start of the UTC day of `t` (epoch ms). */
function utcDay(t: number): number {
  return Math.floor(t / DAY_MS) * DAY_MS;
}

function encodeReceivedCursor(cursor: ReceivedCursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

function decodeReceivedCursor(token: string): ReceivedCursor | undefined {
  try {
    const c = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Partial<ReceivedCursor>;
    return typeof c.folder === 'number' && typeof c.uidValidity === 'string' && typeof c.uid === 'number' ? { folder: c.folder, uidValidity: c.uidValidity, uid: c.uid } : undefined;
  } catch {
    return undefined;
  }
}

function encodeSearchCursor(cursor: SearchCursor): string {
  return Buffer.from(JSON.stringify({ search: cursor })).toString('base64url');
}

/** A searchMessages page token back; one that is not ours is refused (it would list from nowhere in particular). */
function decodeSearchCursor(token: string): SearchCursor {
  let parsed: unknown;
  try {
    parsed = (JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { search?: unknown }).search;
  } catch {
    parsed = undefined;
  }
  const valid =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) &&
    Object.values(parsed).every((v) => Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && (v[1] === null || typeof v[1] === 'number'));
  if (!valid) throw new Error(`not a page token of this IMAP search: ${JSON.stringify(token.slice(0, 40))}`);
  return parsed as SearchCursor;
}

/** IMAP SEARCH keys for a search; null when it can match nothing (an address that is not plain). */
function withoutQuery(search: ImapSearch): ImapSearch {
  const { query: _query, ...rest } = search;
  return rest;
}

function searchQuery(search: ImapSearch, gmail: boolean): SearchObject | null {
  const q: SearchObject = {};
  if (search.withoutLabel !== undefined) {
    // Our labels: keywords (UNKEYWORD); on Gmail's IMAP its labels, which plain SEARCH cannot say: each
    // found message's X-GM-LABELS is read instead (searchMessages), by the exact name (X-GM-RAW's
    // -label: would read "a b" and "a-b" as one label).
    const label = searchableLabelName(search.withoutLabel);
    if (!label) return null;
    if (!gmail) q.unKeyword = labelToKeyword(label);
  }
  for (const field of ['from', 'to'] as const) {
    const value = search[field];
    if (value === undefined) continue;
    const address = searchableAddress(value);
    if (!address) return null;
    q[field] = address;
  }
  if (search.fromDomain !== undefined) {
    const domain = searchableDomain(search.fromDomain);
    if (!domain || q.from) return null;
    q.from = `@${domain}`;
  }
  if (search.messageId !== undefined) {
    const id = searchableMessageId(search.messageId);
    if (!id) return null;
    q.header = { 'message-id': id };
  }
  if (search.subject) q.subject = search.subject;
  // IMAP ANDs criteria, but an object has one TEXT key: each further word nests in a one-operand OR (an AND).
  const [first, ...more] = search.text ?? [];
  if (first) q.text = first;
  let last: SearchObject = q;
  for (const word of more) {
    const next: SearchObject = { text: word };
    last.or = [next];
    last = next;
  }
  if (search.since) q.since = search.since;
  if (search.before) q.before = search.before;
  if (search.unread !== undefined) q.seen = !search.unread;
  if (search.labelId) q.keyword = labelToKeyword(search.labelId);
  if (Object.keys(q).length === 0) q.all = true;
  return q;
}

/**
 * For a search by address, whether a message's header block names it as the product's reader reads
 * headers (parseSender, parseAddressList; 8-bit bytes as UTF-8 when they are): `from` the one
 * sender; `to` in To or Cc; `fromDomain` the sender's domain (SEARCH FROM "@domain" finds no
 * subdomain). Undefined for a search by none of these.
 */
function addressFilter(search: ImapSearch): ((headers: Buffer) => boolean) | undefined {
  const from = search.from !== undefined ? canonicalAddress(search.from) : undefined;
  const to = search.to !== undefined ? canonicalAddress(search.to) : undefined;
  const domain = search.fromDomain !== undefined ? searchableDomain(search.fromDomain) : undefined;
  if (from === undefined && to === undefined && domain === undefined) return undefined;
  const header = (headers: Buffer, name: string) => rawHeaderValues(headers, name).map(utf8IfValid);
  return (headers) => {
    const sender = from !== undefined || domain !== undefined ? parseSender(header(headers, 'from'), []) : null;
    if (from !== undefined && sender?.address !== from) return false;
    if (domain !== undefined && domainOf(sender?.address ?? '') !== domain) return false;
    if (to !== undefined) {
      const first = (name: string) => parseAddressList(header(headers, name)[0], []);
      if (![...first('to'), ...first('cc')].some((a) => a.address === to)) return false;
    }
    return true;
  };
}

/** A draft's own marks are not sent: the \Draft flag lives on the IMAP message, not in headers. */
function withoutFlagHeaders(raw: Uint8Array): Uint8Array {
  return withoutHeader(withoutHeader(raw, 'x-mozilla-draft-info'), 'x-uniform-type-identifier');
}

function createHashHex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 32);
}

/**
 * Whether a nodemailer sendMail() failure means for certain the server did not take the message:
 * the server refused in its own words (a reply code), or the session never reached DATA (no
 * connection, TLS or login refused, an envelope refused). A dropped connection or a timeout may
 * come after the server took it.
 */
/** Failures that happened before any SMTP session began (no access token to open one with). */
const NOT_SUBMITTED = new WeakSet<object>();

function refusedForCertain(err: unknown): boolean {
  if (err !== null && typeof err === 'object' && NOT_SUBMITTED.has(err)) return true;
  const e = (err ?? {}) as { responseCode?: number; code?: string };
  if (typeof e.responseCode === 'number') return true;
  return ['ECONNECTION', 'EDNS', 'ETLS', 'EAUTH', 'ENOAUTH', 'EENVELOPE', 'EMESSAGE'].includes(e.code ?? '');
}

/**
 * imapflow's lock on a folder, with the session's view of it up to date. imapflow does not SELECT a
 * folder that is already selected, and a server answers SEARCH and FETCH there from the session's
 * view as of its last command (Dovecot does, as RFC 3501 allows): mail delivered since, or appended
 * by another session (a mail client, another worker), is not in it, so a message the sync just
 * reported read as "not in the mailbox", and a listChanges woken by IDLE missed the new mail until
 * the next poll. Such a folder is SELECTed again (a NOOP announces the new mail too, but leaves
 * imapflow's UIDNEXT and HIGHESTMODSEQ, which the change cursor is made of, as they were).
 */
async function lockFolder(client: ImapFlow, folder: string): Promise<MailboxLockObject> {
  const before = client.mailbox;
  const lock = await client.getMailboxLock(folder);
  if (before && client.mailbox === before) {
    try {
      await client.mailboxOpen(folder);
    } catch (err) {
      lock.release();
      throw err;
    }
  }
  return lock;
}
