// The Gmail REST surface: /gmail/v1/users/{userId}/... routes, each with its quota method name,
// the scope it needs, and a handler returning Gmail's JSON shape (undefined → 204 No Content).
import { badRequest, GmailApiError, notFound } from './errors.js';
import { breakMime } from './faults.js';
import { HISTORY_TYPES, type HistoryRecord, type HistoryType } from './history.js';
import { gmailId } from './ids.js';
import type { LabelRecord } from './labels.js';
import type { Mailbox } from './mailbox.js';
import { parseFormat, readAttachment, renderMessage, type GmailMessage, type StoredMessage } from './message.js';
import { fromBase64Url, headerValue, parseTopHeaders } from './mime.js';
import type { ScopeNeed } from './oauth.js';
import type { Account, GmailWorld } from './world.js';

export interface GmailCall {
  world: GmailWorld;
  account: Account;
  mailbox: Mailbox;
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown>;
}

export interface GmailRoute {
  httpMethod: string;
  segments: string[];
  /** Gmail method name, as used for quota costs and metrics ("messages.get"). */
  name: string;
  scope: ScopeNeed;
  handle: (call: GmailCall) => unknown;
}

// ------------------------------------------------------------ request helpers

function maxResults(query: URLSearchParams, fallback: number, cap: number): number {
  const value = query.get('maxResults');
  if (value === null) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw badRequest(`Invalid value '${value}'. Values must match the following regular expression: '[0-9]+'`);
  return n === 0 ? fallback : Math.min(n, cap);
}

const bool = (query: URLSearchParams, name: string): boolean => query.get(name) === 'true';

function stringList(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw badRequest(`Invalid value at '${field}'`);
  return value as string[];
}

function rawFrom(message: unknown, what: string): { raw: Buffer; threadId?: string } {
  const m = (message ?? {}) as { raw?: unknown; threadId?: unknown };
  if (typeof m.raw !== 'string' || m.raw.length === 0) throw badRequest(`Invalid ${what}: 'raw' RFC822 payload message string or uploading message via /upload/* URL required`);
  return { raw: fromBase64Url(m.raw), ...(typeof m.threadId === 'string' && m.threadId ? { threadId: m.threadId } : {}) };
}

function labelChanges(call: GmailCall): { add: string[]; remove: string[] } {
  const add = stringList(call.body.addLabelIds, 'add_label_ids');
  const remove = stringList(call.body.removeLabelIds, 'remove_label_ids');
  if (add.length === 0 && remove.length === 0) throw badRequest('No label add or removes specified');
  call.mailbox.labels.checkModifiable([...add, ...remove]);
  return { add, remove };
}

/** messages.batchModify / batchDelete ids: at most 1000, each a well-formed Gmail id. */
function batchIds(body: Record<string, unknown>): string[] {
  const ids = stringList(body.ids, 'ids');
  if (ids.length > 1000) throw badRequest('Number of ids cannot exceed 1000');
  return ids.map(gmailId);
}

const messageParam = (call: Pick<GmailCall, 'mailbox' | 'params'>, name = 'id'): StoredMessage => call.mailbox.getMessage(gmailId(call.params[name] ?? ''));

const threadParam = (call: Pick<GmailCall, 'mailbox' | 'params'>): StoredMessage[] => [...call.mailbox.getThread(gmailId(call.params.id ?? ''))];

function threadSummary(mailbox: Mailbox, thread: StoredMessage[]) {
  return { id: (thread[0] as StoredMessage).threadId, historyId: String(mailbox.threadHistoryId(thread)), messages: thread.map(summary) };
}

const summary = (msg: StoredMessage): GmailMessage => ({ id: msg.id, threadId: msg.threadId, labelIds: [...msg.labelIds] });

function renderGet(call: GmailCall, msg: StoredMessage, formatParam?: string): GmailMessage {
  const format = parseFormat(formatParam ?? call.query.get('format') ?? undefined);
  const poison = call.world.faults.poisonMode(msg.id);
  if (poison === 'error') throw new GmailApiError(500, 'Backend Error', 'backendError');
  const source = poison === 'brokenMime' ? { ...msg, raw: breakMime(msg.raw) } : msg;
  return renderMessage(source, format, call.query.getAll('metadataHeaders'));
}

function renderThread(call: GmailCall, thread: readonly StoredMessage[]) {
  const format = call.query.get('format') ?? 'full';
  if (format === 'raw') throw badRequest("Invalid value at 'format' (TYPE_ENUM), \"raw\"");
  return {
    id: (thread[0] as StoredMessage).threadId,
    historyId: String(call.mailbox.threadHistoryId(thread)),
    messages: thread.map((m) => renderGet(call, m, format)),
  };
}

function labelWithCounts(mailbox: Mailbox, label: LabelRecord) {
  return { ...label, ...mailbox.labelCounts(label.id) };
}

function listOptions(call: GmailCall, fallback: number) {
  return {
    q: call.query.get('q') ?? undefined,
    labelIds: call.query.getAll('labelIds'),
    includeSpamTrash: bool(call.query, 'includeSpamTrash'),
    maxResults: maxResults(call.query, fallback, 500),
    pageToken: call.query.get('pageToken') ?? undefined,
  };
}

function historyEntry(record: HistoryRecord) {
  const message = { id: record.messageId, threadId: record.threadId, labelIds: record.labelIds };
  const brief = { id: record.messageId, threadId: record.threadId };
  const entry: Record<string, unknown> = { id: String(record.id), messages: [brief] };
  switch (record.type) {
    case 'messageAdded':
      entry.messagesAdded = [{ message }];
      break;
    case 'messageDeleted':
      entry.messagesDeleted = [{ message }];
      break;
    case 'labelAdded':
      entry.labelsAdded = [{ message, labelIds: record.changedLabelIds ?? [] }];
      break;
    case 'labelRemoved':
      entry.labelsRemoved = [{ message, labelIds: record.changedLabelIds ?? [] }];
      break;
  }
  return entry;
}

/** messages.insert / messages.import: internalDate from the Date header or the time of receipt. */
function insertMessage({ world, mailbox, body, query }: GmailCall, defaultDateSource: 'receivedTime' | 'dateHeader') {
  const { raw, threadId } = rawFrom(body, 'message');
  const labelIds = world.resolveLabels(mailbox, stringList(body.labelIds, 'label_ids'), false);
  const source = query.get('internalDateSource') ?? defaultDateSource;
  const dateHeader = source === 'dateHeader' ? Date.parse(headerValue(parseTopHeaders(raw), 'date') ?? '') : NaN;
  const internalDate = Number.isFinite(dateHeader) ? dateHeader : world.clock.now();
  return summary(mailbox.insert(raw, { labelIds, internalDate, threading: threadId ? 'api' : 'incoming', ...(threadId ? { threadId } : {}) }));
}

// ------------------------------------------------------------ handlers

const route = (httpMethod: string, path: string, name: string, scope: ScopeNeed, handle: GmailRoute['handle']): GmailRoute => ({
  httpMethod,
  segments: path === '' ? [] : path.split('/'),
  name,
  scope,
  handle,
});

export const GMAIL_ROUTES: GmailRoute[] = [
  route('GET', 'profile', 'getProfile', 'read', ({ mailbox }) => ({
    emailAddress: mailbox.email,
    messagesTotal: mailbox.messagesTotal,
    threadsTotal: mailbox.threadsTotal,
    historyId: String(mailbox.historyId),
  })),

  route('POST', 'watch', 'watch', 'read', ({ world, mailbox, body }) => {
    const watch = world.push.watch(mailbox.email, body, (topic) => world.faults.canPublish(topic));
    return { historyId: String(mailbox.historyId), expiration: String(watch.expiration) };
  }),
  route('POST', 'stop', 'stop', 'read', ({ world, mailbox }) => {
    world.push.stop(mailbox.email);
    return undefined;
  }),

  // settings: the primary address only (what a reply's signature comes from)
  route('GET', 'settings/sendAs', 'settings.sendAs.list', 'read', ({ account, mailbox }) => ({
    sendAs: [
      {
        sendAsEmail: mailbox.email,
        displayName: account.name,
        replyToAddress: '',
        signature: mailbox.signature,
        isPrimary: true,
        isDefault: true,
        treatAsAlias: false,
        verificationStatus: 'accepted',
      },
    ],
  })),

  // labels
  route('GET', 'labels', 'labels.list', 'read', ({ mailbox }) => ({ labels: mailbox.labels.list() })),
  route('POST', 'labels', 'labels.create', 'labels', ({ mailbox, body }) => mailbox.labels.create(body as { name: unknown })),
  route('GET', 'labels/:id', 'labels.get', 'read', ({ mailbox, params }) => labelWithCounts(mailbox, mailbox.labels.require(params.id ?? ''))),
  route('PATCH', 'labels/:id', 'labels.patch', 'labels', ({ mailbox, params, body }) => mailbox.labels.update(params.id ?? '', body)),
  route('PUT', 'labels/:id', 'labels.update', 'labels', ({ mailbox, params, body }) => mailbox.labels.update(params.id ?? '', body)),
  route('DELETE', 'labels/:id', 'labels.delete', 'labels', ({ mailbox, params }) => {
    const label = mailbox.labels.require(params.id ?? '');
    if (label.type === 'user') mailbox.removeLabelEverywhere(label.id);
    mailbox.labels.delete(label.id);
    return undefined;
  }),

  // messages
  route('GET', 'messages', 'messages.list', 'read', (call) => {
    const page = call.mailbox.listMessages(listOptions(call, 100));
    return {
      ...(page.messages.length > 0 ? { messages: page.messages.map((m) => ({ id: m.id, threadId: m.threadId })) } : {}),
      ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
      resultSizeEstimate: page.resultSizeEstimate,
    };
  }),
  route('POST', 'messages/send', 'messages.send', 'send', ({ world, account, body }) => {
    const { raw, threadId } = rawFrom(body, 'message');
    return summary(world.send(account, raw, threadId));
  }),
  route('POST', 'messages/batchModify', 'messages.batchModify', 'modify', (call) => {
    const ids = batchIds(call.body);
    const { add, remove } = labelChanges(call);
    for (const id of ids) {
      const msg = call.mailbox.findMessage(id);
      if (msg) call.mailbox.modifyLabels(msg, add, remove);
    }
    return undefined;
  }),
  route('POST', 'messages/batchDelete', 'messages.batchDelete', 'delete', ({ mailbox, body }) => {
    for (const id of batchIds(body)) {
      const msg = mailbox.findMessage(id);
      if (msg) mailbox.deleteMessage(msg);
    }
    return undefined;
  }),
  route('POST', 'messages', 'messages.insert', 'modify', (call) => insertMessage(call, 'receivedTime')),
  route('POST', 'messages/import', 'messages.import', 'modify', (call) => insertMessage(call, 'dateHeader')),
  route('GET', 'messages/:id', 'messages.get', 'read', (call) => renderGet(call, messageParam(call))),
  route('GET', 'messages/:messageId/attachments/:id', 'messages.attachments.get', 'read', (call) =>
    readAttachment(messageParam(call, 'messageId'), call.params.id ?? ''),
  ),
  route('POST', 'messages/:id/modify', 'messages.modify', 'modify', (call) => {
    const msg = messageParam(call);
    const { add, remove } = labelChanges(call);
    if (call.mailbox.isDraft(msg)) throw badRequest('Labels cannot be changed on a draft message');
    call.mailbox.modifyLabels(msg, add, remove);
    return summary(msg);
  }),
  route('POST', 'messages/:id/trash', 'messages.trash', 'modify', (call) => {
    const msg = messageParam(call);
    call.mailbox.trash(msg);
    return summary(msg);
  }),
  route('POST', 'messages/:id/untrash', 'messages.untrash', 'modify', (call) => {
    const msg = messageParam(call);
    call.mailbox.untrash(msg);
    return summary(msg);
  }),
  route('DELETE', 'messages/:id', 'messages.delete', 'delete', (call) => {
    call.mailbox.deleteMessage(messageParam(call));
    return undefined;
  }),

  // threads
  route('GET', 'threads', 'threads.list', 'read', (call) => {
    const page = call.mailbox.listThreads(listOptions(call, 100));
    return {
      ...(page.threads.length > 0
        ? {
            threads: page.threads.map((t) => {
              const last = t[t.length - 1] as StoredMessage;
              return { id: last.threadId, snippet: last.snippet, historyId: String(call.mailbox.threadHistoryId(t)) };
            }),
          }
        : {}),
      ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
      resultSizeEstimate: page.resultSizeEstimate,
    };
  }),
  route('GET', 'threads/:id', 'threads.get', 'read', (call) => renderThread(call, threadParam(call))),
  route('POST', 'threads/:id/modify', 'threads.modify', 'modify', (call) => {
    const thread = threadParam(call);
    const { add, remove } = labelChanges(call);
    for (const msg of thread) call.mailbox.modifyLabels(msg, add, remove);
    return threadSummary(call.mailbox, thread);
  }),
  route('POST', 'threads/:id/trash', 'threads.trash', 'modify', (call) => {
    const thread = threadParam(call);
    for (const msg of thread) call.mailbox.trash(msg);
    return threadSummary(call.mailbox, thread);
  }),
  route('POST', 'threads/:id/untrash', 'threads.untrash', 'modify', (call) => {
    const thread = threadParam(call);
    for (const msg of thread) call.mailbox.untrash(msg);
    return threadSummary(call.mailbox, thread);
  }),
  route('DELETE', 'threads/:id', 'threads.delete', 'delete', (call) => {
    for (const msg of threadParam(call)) call.mailbox.deleteMessage(msg);
    return undefined;
  }),

  // drafts
  route('GET', 'drafts', 'drafts.list', 'read', (call) => {
    const { mailbox, query } = call;
    const opts = listOptions(call, 100);
    const draftMessageIds = new Set(mailbox.listDrafts().map((d) => d.messageId));
    const page = mailbox.listMessages({ ...opts, labelIds: ['DRAFT'], includeSpamTrash: bool(query, 'includeSpamTrash') });
    const drafts = page.messages
      .filter((m) => draftMessageIds.has(m.id))
      .map((m) => ({ id: mailbox.findDraftByMessageId(m.id)?.id, message: { id: m.id, threadId: m.threadId } }));
    return {
      ...(drafts.length > 0 ? { drafts } : {}),
      ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
      resultSizeEstimate: page.resultSizeEstimate,
    };
  }),
  route('POST', 'drafts', 'drafts.create', 'compose', ({ mailbox, body }) => {
    const { raw, threadId } = rawFrom(body.message, 'draft');
    const draft = mailbox.createDraft(raw, threadId);
    return { id: draft.id, message: summary(mailbox.getMessage(draft.messageId)) };
  }),
  route('POST', 'drafts/send', 'drafts.send', 'send', ({ world, account, mailbox, body }) => {
    if (typeof body.id !== 'string' || !body.id) throw badRequest('Invalid draft: id is required');
    mailbox.getDraft(body.id);
    const replacement = (body.message ?? {}) as { raw?: unknown };
    if (typeof replacement.raw === 'string' && replacement.raw) {
      const { raw, threadId } = rawFrom(replacement, 'draft');
      mailbox.updateDraft(body.id, raw, threadId);
    }
    return summary(world.sendDraft(account, body.id));
  }),
  route('GET', 'drafts/:id', 'drafts.get', 'read', (call) => {
    const draft = call.mailbox.getDraft(call.params.id ?? '');
    return { id: draft.id, message: renderGet(call, call.mailbox.getMessage(draft.messageId)) };
  }),
  route('PUT', 'drafts/:id', 'drafts.update', 'compose', ({ mailbox, params, body }) => {
    const { raw, threadId } = rawFrom(body.message, 'draft');
    const draft = mailbox.updateDraft(params.id ?? '', raw, threadId);
    return { id: draft.id, message: summary(mailbox.getMessage(draft.messageId)) };
  }),
  route('DELETE', 'drafts/:id', 'drafts.delete', 'compose', ({ mailbox, params }) => {
    mailbox.deleteDraft(params.id ?? '');
    return undefined;
  }),

  // history
  route('GET', 'history', 'history.list', 'read', ({ world, mailbox, query }) => {
    const start = query.get('startHistoryId');
    if (start === null || !/^\d+$/.test(start)) throw badRequest(start === null ? 'Missing required field: startHistoryId' : `Invalid value at 'start_history_id' (TYPE_UINT64), "${start}"`);
    if (world.faults.historyNotFound(mailbox.email)) throw notFound();
    const historyTypes = query.getAll('historyTypes').map((t) => {
      const type = HISTORY_TYPES.find((h) => h.toLowerCase() === t.toLowerCase());
      if (!type) throw badRequest(`Invalid value at 'history_types' (TYPE_ENUM), "${t}"`);
      return type;
    }) as HistoryType[];
    mailbox.pruneHistory();
    const page = mailbox.history.list({
      startHistoryId: Number(start),
      historyTypes,
      ...(query.get('labelId') ? { labelId: query.get('labelId') as string } : {}),
      maxResults: maxResults(query, 100, 500),
      ...(query.get('pageToken') ? { pageToken: query.get('pageToken') as string } : {}),
    });
    return {
      ...(page.records.length > 0 ? { history: page.records.map(historyEntry) } : {}),
      ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
      historyId: String(mailbox.historyId),
    };
  }),
];

/** Finds the route for a method and the path segments after /gmail/v1/users/{userId}/. */
export function matchGmailRoute(httpMethod: string, segments: readonly string[]): { route: GmailRoute; params: Record<string, string> } | undefined {
  for (const candidate of GMAIL_ROUTES) {
    if (candidate.segments.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < segments.length && ok; i++) {
      const pattern = candidate.segments[i] as string;
      const actual = segments[i] as string;
      if (pattern.startsWith(':')) params[pattern.slice(1)] = actual;
      else ok = pattern === actual;
    }
    if (ok && candidate.httpMethod === httpMethod) return { route: candidate, params };
  }
  return undefined;
}
