// The HTTP side of the Discord webhook emulator: Execute Webhook and the webhook-token routes as a
// Discord client calls them (under /api and /api/v{n}), plus a control API under /__emulator/.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { sendJson } from '../../src/shared/json-response.js';
import {
  applyConfigPatch,
  applyFaultPatch,
  DEFAULT_CONFIG,
  DEFAULT_FAULTS,
  type DiscordConfig,
  type FaultConfig,
} from './config.js';
import { FixedWindowLimiter, rateLimitHeaders, type TakeResult } from './rate-limit.js';
import { isSnowflake, SnowflakeGenerator } from './snowflake.js';
import {
  EMPTY_MESSAGE,
  invalidFormBody,
  isEmpty,
  validateMessageBody,
  type DiscordErrorBody,
  type Embed,
  type MessageInput,
} from './validation.js';

const MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface WebhookRecord {
  id: string;
  token: string;
  name: string;
  channelId: string;
  guildId: string;
  /** The URL to execute it, e.g. http://127.0.0.1:8237/api/webhooks/<id>/<token>. */
  url: string;
  createdAt: string;
}

export interface CreateWebhookInput {
  name?: string;
  channelId?: string;
  guildId?: string;
  /** Fixed id and token, e.g. to match a URL configured elsewhere; generated when omitted. */
  id?: string;
  token?: string;
}

/** A message object as Discord returns it for a webhook message. */
export interface DiscordMessage {
  id: string;
  type: number;
  content: string;
  channel_id: string;
  author: { bot: true; id: string; username: string; avatar: string | null; discriminator: string; global_name: null };
  attachments: unknown[];
  embeds: Embed[];
  mentions: unknown[];
  mention_roles: string[];
  pinned: boolean;
  mention_everyone: boolean;
  tts: boolean;
  timestamp: string;
  edited_timestamp: string | null;
  flags: number;
  components: unknown[];
  webhook_id: string;
}

export interface ReceivedMessage {
  webhookId: string;
  /** The thread_id it was sent to, if any. */
  threadId: string | null;
  message: DiscordMessage;
  /** `allowed_mentions` and `avatar_url` as sent (not part of Discord's message object). */
  allowedMentions: Record<string, unknown> | null;
  avatarUrl: string | null;
  /** Times it was edited through PATCH .../messages/{id}. */
  edits: number;
  deleted: boolean;
}

export interface DiscordEmulatorMetrics {
  /** Requests to /api routes, answered or not. */
  requests: number;
  byStatus: Record<string, number>;
  /** Answered 429 by a rate limit or an injected fault. */
  rateLimited: number;
  /** Answered 400, 401, 404 or 405. */
  rejected: number;
  injectedFaults: number;
  messagesCreated: number;
  messagesEdited: number;
  messagesDeleted: number;
}

const emptyMetrics = (): DiscordEmulatorMetrics => ({
  requests: 0,
  byStatus: {},
  rateLimited: 0,
  rejected: 0,
  injectedFaults: 0,
  messagesCreated: 0,
  messagesEdited: 0,
  messagesDeleted: 0,
});

type Route =
  'execute' | 'get_webhook' | 'modify_webhook' | 'delete_webhook' | 'get_message' | 'edit_message' | 'delete_message';

/** The method and path pattern of each route: the key of its X-RateLimit-Bucket. */
const ROUTE_KEYS: Record<Route, string> = {
  execute: 'POST /webhooks/{id}/{token}',
  get_webhook: 'GET /webhooks/{id}/{token}',
  modify_webhook: 'PATCH /webhooks/{id}/{token}',
  delete_webhook: 'DELETE /webhooks/{id}/{token}',
  get_message: 'GET /webhooks/{id}/{token}/messages/{id}',
  edit_message: 'PATCH /webhooks/{id}/{token}/messages/{id}',
  delete_message: 'DELETE /webhooks/{id}/{token}/messages/{id}',
};

const UNKNOWN_WEBHOOK: DiscordErrorBody = { message: 'Unknown Webhook', code: 10015 };
const INVALID_TOKEN: DiscordErrorBody = { message: 'Invalid Webhook Token', code: 50027 };
const UNKNOWN_MESSAGE: DiscordErrorBody = { message: 'Unknown Message', code: 10008 };
const RATE_LIMITED = 'You are being rate limited.';

const WEBHOOK_PATH = /^\/api(?:\/v\d+)?\/webhooks\/([^/]+)(?:\/([^/]+)(?:\/messages\/([^/]+))?)?\/?$/;

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`HTTP ${status}`);
  }
}

export class DiscordEmulatorServer {
  private config: DiscordConfig;
  private faults: FaultConfig = { ...DEFAULT_FAULTS };
  private metricsState = emptyMetrics();
  private readonly webhooks = new Map<string, WebhookRecord>();
  private messages: ReceivedMessage[] = [];
  private readonly limiter = new FixedWindowLimiter();
  private readonly ids = new SnowflakeGenerator();
  private readonly server: Server;
  private readonly closing = new AbortController();
  private baseUrl = '';

  constructor(
    private readonly startConfig: DiscordConfig = DEFAULT_CONFIG,
    private readonly now: () => number = Date.now,
  ) {
    this.config = structuredClone(startConfig);
    this.server = createServer((req, res) => {
      this.route(req, res).catch((err: unknown) => {
        if (err instanceof HttpError) return sendJson(res, err.status, err.body);
        sendJson(res, 500, { message: `emulator failure: ${(err as Error).message}`, code: 0 });
      });
    });
    this.server.keepAliveTimeout = 30_000;
  }

  async listen(port: number, host = '127.0.0.1'): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.baseUrl = `http://${host}:${(this.server.address() as AddressInfo).port}`;
    return this.baseUrl;
  }

  async close(): Promise<void> {
    this.closing.abort();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  // ---- control surface (in-process and over /__emulator/) ----

  createWebhook(input: CreateWebhookInput = {}): WebhookRecord {
    const id = input.id ?? this.ids.next(this.now());
    if (!isSnowflake(id)) throw new Error(`id: not a snowflake: ${id}`);
    if (this.webhooks.has(id)) throw new Error(`id: webhook ${id} exists`);
    const token = input.token ?? randomBytes(51).toString('base64url').slice(0, 68);
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(token)) throw new Error('token: letters, digits, - and _ only');
    const record: WebhookRecord = {
      id,
      token,
      name: input.name ?? 'Durable Inbox',
      channelId: input.channelId ?? this.ids.next(this.now()),
      guildId: input.guildId ?? '1000000000000000000',
      url: `${this.baseUrl}/api/webhooks/${id}/${token}`,
      createdAt: new Date(this.now()).toISOString(),
    };
    if (!isSnowflake(record.channelId) || !isSnowflake(record.guildId))
      throw new Error('channelId/guildId: not a snowflake');
    this.webhooks.set(id, record);
    return { ...record };
  }

  listWebhooks(): WebhookRecord[] {
    return [...this.webhooks.values()].map((w) => ({ ...w }));
  }

  deleteWebhook(id: string): boolean {
    return this.webhooks.delete(id);
  }

  /** Messages received, oldest first; deleted ones only with `includeDeleted`. */
  listMessages(filter: { webhookId?: string; includeDeleted?: boolean } = {}): ReceivedMessage[] {
    return structuredClone(
      this.messages.filter(
        (m) => (!filter.webhookId || m.webhookId === filter.webhookId) && (filter.includeDeleted || !m.deleted),
      ),
    );
  }

  /** Forgets the messages and empties the rate-limit buckets; webhooks, config and faults stay. */
  clear(): void {
    this.messages = [];
    this.limiter.clear();
  }

  /** Back to the start: no webhooks, no messages, zero metrics, start configuration, no faults. */
  reset(): void {
    this.clear();
    this.webhooks.clear();
    this.metricsState = emptyMetrics();
    this.config = structuredClone(this.startConfig);
    this.faults = { ...DEFAULT_FAULTS };
  }

  metrics(): DiscordEmulatorMetrics {
    return structuredClone(this.metricsState);
  }

  getConfig(): DiscordConfig {
    return structuredClone(this.config);
  }

  configure(patch: unknown): DiscordConfig {
    this.config = applyConfigPatch(this.config, patch);
    return this.getConfig();
  }

  getFaults(): FaultConfig {
    return { ...this.faults };
  }

  setFaults(patch: unknown): FaultConfig {
    this.faults = applyFaultPatch(this.faults, patch);
    return this.getFaults();
  }

  // ---- HTTP ----

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    if (url.pathname.startsWith('/__emulator/')) return this.control(url, req, res);
    if (url.pathname.startsWith('/api/')) return this.api(url, req, res);
    sendJson(res, 404, { message: '404: Not Found', code: 0 });
  }

  private async api(url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const m = this.metricsState;
    m.requests++;
    res.once('finish', () => {
      const status = res.statusCode;
      this.metricsState.byStatus[status] = (this.metricsState.byStatus[status] ?? 0) + 1;
      if (status === 429) this.metricsState.rateLimited++;
      if ([400, 401, 404, 405].includes(status)) this.metricsState.rejected++;
    });
    if (this.config.latencyMs > 0) {
      try {
        await sleep(this.config.latencyMs, undefined, { signal: this.closing.signal });
      } catch {
        return;
      }
    }
    if (this.injectFault(res)) return;

    const match = WEBHOOK_PATH.exec(url.pathname);
    if (!match) return sendJson(res, 404, { message: '404: Not Found', code: 0 });
    const [, id = '', token, messageId] = match;
    if (token === undefined) {
      // /webhooks/{id} without a token needs a bot token (Authorization: Bot ...), which webhooks never have.
      return sendJson(res, 401, { message: '401: Unauthorized', code: 0 });
    }
    const route = routeOf(req.method ?? 'GET', messageId !== undefined);
    if (!route) return sendJson(res, 405, { message: '405: Method Not Allowed', code: 0 });

    const webhook = isSnowflake(id) ? this.webhooks.get(id) : undefined;
    if (!webhook) return sendJson(res, 404, UNKNOWN_WEBHOOK);
    if (webhook.token !== token) return sendJson(res, 401, INVALID_TOKEN);

    const now = this.now();
    const bucket = this.limiter.take(`${webhook.id}:${route}`, this.config.rateLimits.webhook, now);
    const headers = rateLimitHeaders(bucket, ROUTE_KEYS[route], now);
    if (!bucket.ok && this.config.rateLimits.enabled) return this.sendRateLimited(res, bucket, headers, 'user');

    try {
      await this.answer(route, url, req, res, webhook, messageId, headers);
    } catch (err) {
      // Form errors carry the bucket's headers too, as every answer on a limited route does.
      if (err instanceof HttpError) return sendJson(res, err.status, err.body, headers);
      throw err;
    }
  }

  private async answer(
    route: Route,
    url: URL,
    req: IncomingMessage,
    res: ServerResponse,
    webhook: WebhookRecord,
    messageId: string | undefined,
    headers: Record<string, string>,
  ): Promise<void> {
    const query = parseQuery(url, route);
    switch (route) {
      case 'execute':
        return this.execute(req, res, webhook, query, headers);
      case 'get_webhook':
        return sendJson(res, 200, this.webhookObject(webhook), headers);
      case 'modify_webhook': {
        const body = await readJson(req);
        if (!isRecord(body))
          throw new HttpError(
            400,
            invalidFormBody({
              _errors: [{ code: 'DICT_TYPE_CONVERT', message: 'Only dictionaries may be used in a DictType' }],
            }),
          );
        if (body.name !== undefined) {
          if (typeof body.name !== 'string' || [...body.name].length < 1 || [...body.name].length > 80) {
            throw new HttpError(
              400,
              invalidFormBody({
                name: { _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 1 and 80 in length.' }] },
              }),
            );
          }
          webhook.name = body.name;
        }
        return sendJson(res, 200, this.webhookObject(webhook), headers);
      }
      case 'delete_webhook':
        this.webhooks.delete(webhook.id);
        return this.sendEmpty(res, headers);
      default:
        return this.messageRoute(route, req, res, webhook, messageId ?? '', query, headers);
    }
  }

  private async execute(
    req: IncomingMessage,
    res: ServerResponse,
    webhook: WebhookRecord,
    query: Query,
    headers: Record<string, string>,
  ): Promise<void> {
    const validation = validateMessageBody(await readJson(req), 'execute');
    if (!validation.ok) return sendJson(res, 400, validation.body, headers);
    const input = validation.input;

    const channelId = query.threadId ?? webhook.channelId;
    const now = this.now();
    if (this.config.rateLimits.enabled) {
      const channel = this.limiter.peek(`channel:${channelId}`, this.config.rateLimits.channel, now);
      if (!channel.ok) return this.sendRateLimited(res, channel, headers, 'shared');
    }
    this.limiter.take(`channel:${channelId}`, this.config.rateLimits.channel, now);

    const message: DiscordMessage = {
      id: this.ids.next(now),
      type: 0,
      content: input.content ?? '',
      channel_id: channelId,
      author: {
        bot: true,
        id: webhook.id,
        username: input.username ?? webhook.name,
        avatar: null,
        discriminator: '0000',
        global_name: null,
      },
      attachments: [],
      embeds: input.embeds ?? [],
      mentions: [],
      mention_roles: [],
      pinned: false,
      mention_everyone: false,
      tts: input.tts ?? false,
      timestamp: discordTimestamp(now),
      edited_timestamp: null,
      flags: input.flags ?? 0,
      components: input.components ?? [],
      webhook_id: webhook.id,
    };
    this.messages.push({
      webhookId: webhook.id,
      threadId: query.threadId,
      message,
      allowedMentions: input.allowed_mentions ?? null,
      avatarUrl: input.avatar_url ?? null,
      edits: 0,
      deleted: false,
    });
    this.metricsState.messagesCreated++;
    if (query.wait) return sendJson(res, 200, message, headers);
    return this.sendEmpty(res, headers);
  }

  private async messageRoute(
    route: Route,
    req: IncomingMessage,
    res: ServerResponse,
    webhook: WebhookRecord,
    messageId: string,
    query: Query,
    headers: Record<string, string>,
  ): Promise<void> {
    const stored = this.messages.find(
      (m) =>
        !m.deleted &&
        m.message.id === messageId &&
        m.webhookId === webhook.id &&
        // A message in a thread is found only with its thread_id, as on Discord.
        m.threadId === query.threadId,
    );
    if (!stored) return sendJson(res, 404, UNKNOWN_MESSAGE, headers);
    if (route === 'get_message') return sendJson(res, 200, stored.message, headers);
    if (route === 'delete_message') {
      stored.deleted = true;
      this.metricsState.messagesDeleted++;
      return this.sendEmpty(res, headers);
    }
    const validation = validateMessageBody(await readJson(req), 'edit');
    if (!validation.ok) return sendJson(res, 400, validation.body, headers);
    const edit: MessageInput = validation.input;
    const next = {
      content: edit.content !== undefined ? (edit.content ?? '') : stored.message.content,
      embeds: edit.embeds !== undefined ? (edit.embeds ?? []) : stored.message.embeds,
      components: edit.components !== undefined ? (edit.components ?? []) : stored.message.components,
    };
    if (isEmpty(next)) return sendJson(res, 400, EMPTY_MESSAGE, headers);
    stored.message = {
      ...stored.message,
      ...next,
      flags: edit.flags ?? stored.message.flags,
      edited_timestamp: discordTimestamp(this.now()),
    };
    if (edit.allowed_mentions !== undefined) stored.allowedMentions = edit.allowed_mentions;
    stored.edits++;
    this.metricsState.messagesEdited++;
    return sendJson(res, 200, stored.message, headers);
  }

  private webhookObject(w: WebhookRecord) {
    return {
      application_id: null,
      avatar: null,
      channel_id: w.channelId,
      guild_id: w.guildId,
      id: w.id,
      name: w.name,
      type: 1,
      token: w.token,
      url: w.url,
    };
  }

  /** Answers the next injected 429 or 5xx, if any is pending. */
  private injectFault(res: ServerResponse): boolean {
    const f = this.faults;
    if (f.rateLimited > 0) {
      f.rateLimited--;
      this.metricsState.injectedFaults++;
      const headers: Record<string, string> = {
        'retry-after': String(Math.ceil(f.retryAfterSeconds)),
        'x-ratelimit-scope': f.global ? 'global' : 'user',
      };
      if (f.global) headers['x-ratelimit-global'] = 'true';
      sendJson(res, 429, { message: RATE_LIMITED, retry_after: f.retryAfterSeconds, global: f.global }, headers);
      return true;
    }
    if (f.serverErrors > 0) {
      f.serverErrors--;
      this.metricsState.injectedFaults++;
      const text: Record<number, string> = {
        500: 'Internal Server Error',
        502: 'Bad Gateway',
        503: 'Service Unavailable',
        504: 'Gateway Timeout',
      };
      sendJson(res, f.serverErrorStatus, {
        message: `${f.serverErrorStatus}: ${text[f.serverErrorStatus]}`,
        code: 0,
      });
      return true;
    }
    return false;
  }

  private sendRateLimited(
    res: ServerResponse,
    state: TakeResult,
    headers: Record<string, string>,
    scope: 'user' | 'shared',
  ): void {
    const retryAfter = Math.round(state.retryAfter * 1000) / 1000;
    sendJson(
      res,
      429,
      { message: RATE_LIMITED, retry_after: retryAfter, global: false },
      { ...headers, 'retry-after': String(Math.ceil(retryAfter)), 'x-ratelimit-scope': scope },
    );
  }

  private async control(url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = url.pathname.slice('/__emulator/'.length).replace(/\/+$/, '');
    const method = req.method ?? 'GET';
    const fail = (status: number, message: string) => sendJson(res, status, { error: { message } });
    try {
      if (method === 'GET' && path === 'info') {
        return sendJson(res, 200, {
          url: this.baseUrl,
          webhooks: this.listWebhooks(),
          config: this.getConfig(),
          faults: this.getFaults(),
        });
      }
      if (path === 'webhooks') {
        if (method === 'GET') return sendJson(res, 200, { webhooks: this.listWebhooks() });
        if (method === 'POST') {
          const input = CreateWebhookSchema.safeParse(await readJson(req));
          if (!input.success) {
            const issue = input.error.issues[0]!;
            return fail(400, `${issue.path.join('.') || 'body'}: ${issue.message}`);
          }
          return sendJson(res, 201, this.createWebhook(definedOnly(input.data)));
        }
      }
      const webhookPath = /^webhooks\/(\d+)(\/messages)?$/.exec(path);
      if (webhookPath) {
        const [, id = '', messages] = webhookPath;
        const webhook = this.webhooks.get(id);
        if (!webhook) return fail(404, `no webhook ${id}`);
        if (messages && method === 'GET') {
          return sendJson(res, 200, {
            messages: this.listMessages({
              webhookId: id,
              includeDeleted: url.searchParams.get('includeDeleted') === 'true',
            }),
          });
        }
        if (!messages && method === 'GET') return sendJson(res, 200, { ...webhook });
        if (!messages && method === 'DELETE') {
          this.deleteWebhook(id);
          return sendJson(res, 200, { deleted: true });
        }
      }
      if (method === 'GET' && path === 'messages') {
        const webhookId = url.searchParams.get('webhookId') ?? undefined;
        const includeDeleted = url.searchParams.get('includeDeleted') === 'true';
        return sendJson(res, 200, {
          messages: this.listMessages({ ...(webhookId ? { webhookId } : {}), includeDeleted }),
        });
      }
      if (method === 'POST' && path === 'clear') {
        this.clear();
        return sendJson(res, 200, { ok: true });
      }
      if (method === 'POST' && path === 'reset') {
        this.reset();
        return sendJson(res, 200, { ok: true });
      }
      if (method === 'GET' && path === 'metrics') return sendJson(res, 200, this.metrics());
      if (path === 'config') {
        if (method === 'GET') return sendJson(res, 200, this.getConfig());
        if (method === 'PUT' || method === 'POST') return sendJson(res, 200, this.configure(await readJson(req)));
      }
      if (path === 'faults') {
        if (method === 'GET') return sendJson(res, 200, this.getFaults());
        if (method === 'PUT' || method === 'POST') return sendJson(res, 200, this.setFaults(await readJson(req)));
      }
      return fail(404, `no control route ${method} /__emulator/${path}`);
    } catch (err) {
      if (err instanceof HttpError) return fail(err.status, JSON.stringify(err.body));
      return fail(400, (err as Error).message);
    }
  }

  private sendEmpty(res: ServerResponse, headers: Record<string, string>): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(204, headers);
    res.end();
  }

}

interface Query {
  wait: boolean;
  threadId: string | null;
}

function routeOf(method: string, hasMessage: boolean): Route | undefined {
  if (hasMessage)
    return ({ GET: 'get_message', PATCH: 'edit_message', DELETE: 'delete_message' } as const)[method as 'GET'];
  return ({ POST: 'execute', GET: 'get_webhook', PATCH: 'modify_webhook', DELETE: 'delete_webhook' } as const)[
    method as 'GET'
  ];
}

/** `wait` (boolean query strings: true/false, True/False, 1/0) and `thread_id`; 400 50035 for a bad value. */
function parseQuery(url: URL, route: Route): Query {
  const errors: Record<string, { _errors: Array<{ code: string; message: string }> }> = {};
  const rawWait = url.searchParams.get('wait');
  let wait = false;
  if (route === 'execute' && rawWait !== null) {
    if (['true', 'True', '1'].includes(rawWait)) wait = true;
    else if (!['false', 'False', '0'].includes(rawWait)) {
      errors.wait = {
        _errors: [{ code: 'BOOLEAN_TYPE_CONVERT', message: `Could not interpret "${rawWait}" as boolean.` }],
      };
    }
  }
  const threadId = url.searchParams.get('thread_id');
  if (threadId !== null && !isSnowflake(threadId)) {
    errors.thread_id = { _errors: [{ code: 'NUMBER_TYPE_COERCE', message: `Value "${threadId}" is not snowflake.` }] };
  }
  if (Object.keys(errors).length) throw new HttpError(400, invalidFormBody(errors));
  return { wait, threadId };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const CreateWebhookSchema = z
  .object({
    name: z.string().min(1).max(80).optional(),
    channelId: z.string().optional(),
    guildId: z.string().optional(),
    id: z.string().optional(),
    token: z.string().optional(),
  })
  .strict();

function definedOnly<T extends object>(input: T): T {
  return Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as T;
}

/** The JSON body; an empty body reads as {}. 400 50109 for invalid JSON, 413 40005 for too large. */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk as Buffer);
  }
  if (size > MAX_BODY_BYTES) throw new HttpError(413, { message: 'Request entity too large', code: 40005 });
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) return {};
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'multipart/form-data' || type === 'application/x-www-form-urlencoded') {
    throw new HttpError(400, { message: `${type} bodies are not emulated; send application/json`, code: 0 });
  }
  if (type !== 'application/json') {
    throw new HttpError(
      400,
      invalidFormBody({
        _errors: [
          {
            code: 'CONTENT_TYPE_INVALID',
            message: `Expected "Content-Type" header to be one of {'application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'}.`,
          },
        ],
      }),
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpError(400, { message: 'The request body contains invalid JSON.', code: 50109 });
  }
}

/** Discord's timestamp format: ISO 8601 with microseconds and +00:00. */
function discordTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000+00:00');
}
