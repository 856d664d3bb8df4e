// The HTTP side of the emulator: POST /v1/messages (and /v1/messages/count_tokens) as the real SDK calls
// them, plus a small control API under /__emulator/ for tests and the benchmark.
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { sendJson as writeJson } from '../../src/shared/json-response.js';
import { applyPatch, DEFAULT_CONFIG, type EmulatorConfig, type EmulatorConfigPatch } from './config.js';
import { FaultPlan, isHttpFault, type HttpFault } from './faults.js';
import { listModels, modelEntry, modelInfo, usableModel } from './models.js';
import { PromptCache, type CacheUsage } from './prompt-cache.js';
import { BatchBook, batchObject, resultsJsonl, type BatchAnswer } from './batches.js';
import { RateLimiter } from './rate-limits.js';
import { createHash } from 'node:crypto';
import { defaultToolInput, hasToolResults, isToolConversation, readLikeTool, scriptConflict, turnOf, unusedDraftTool } from './agent.js';
import { draw, makeId } from './random.js';
import { scheduledReport } from './scheduled.js';
import { writingLessons } from './learning.js';
import { classify, draft, expectsReply, invalidDecision, newestEmail, toolInput, type EmailView } from './responder.js';
import { ScriptBook, scriptNameIn, type RefusalCategory, type ScriptOptions, type ScriptStatus, type ScriptToolCall } from './script.js';
import {
  contentText,
  systemText,
  validateMessagesRequest,
  type Endpoint,
  type MessageParam,
  type MessagesRequest,
} from './validation.js';

const MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface CapturedRequest {
  /** The parsed JSON body as received. */
  body: MessagesRequest;
  /** What the emulator counted as input tokens (≈ characters / 4). */
  inputTokens: number;
  receivedAt: string;
}

export interface UsageCounts {
  calls: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
}

/** What a request asked for, as the usage metrics key it. */
function askedFor(request: MessagesRequest): string {
  const choice = request.tool_choice;
  if (choice?.type === 'tool') return choice.name;
  if (choice?.type === 'any') return request.tools?.[0]?.name ?? 'tools';
  return request.tools?.length && choice?.type !== 'none' ? 'tools' : 'text';
}

export interface EmulatorMetrics {
  /** POST /v1/messages calls received, valid or not. */
  requests: number;
  /** Responses to those calls by HTTP status. */
  byStatus: Record<string, number>;
  /** Successful calls answered with tool_use blocks (stop_reason tool_use) / with text only. */
  toolUseResponses: number;
  textResponses: number;
  /** tool_use blocks sent, over all successful calls (a turn may call several tools). */
  toolUseBlocks: number;
  /** Calls answered from a registered script (faults included). */
  scriptedResponses: number;
  /** Successful calls whose output was made to fail the client's schema on purpose. */
  invalidOutputs: number;
  /** Token usage summed over successful calls: every input token, and those read from / written to the cache. */
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
  /**
   * Successful calls and their tokens by model and by what was asked: the forced tool's name, `tools`
   * (tools offered, none forced) or `text` (no tools). `input` counts the uncached input tokens only.
   */
  usage: Record<string, Record<string, UsageCounts>>;
  /** The same for the requests of Message Batches (billed at the batch price). */
  batchUsage: Record<string, Record<string, UsageCounts>>;
  /** Message Batches created, and the requests they held. */
  batchesCreated: number;
  batchRequests: number;
  /** Downloads of a results file begun, and those cut short on purpose (cutBatchResults). */
  batchResultReads: number;
  batchResultReadsCut: number;
  /** Calls being answered right now, and the most at once. */
  inFlight: number;
  maxInFlight: number;
  lastRequest: CapturedRequest | null;
}

function emptyMetrics(): EmulatorMetrics {
  return {
    requests: 0,
    byStatus: {},
    toolUseResponses: 0,
    textResponses: 0,
    toolUseBlocks: 0,
    scriptedResponses: 0,
    invalidOutputs: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    usage: {},
    batchUsage: {},
    batchesCreated: 0,
    batchRequests: 0,
    batchResultReads: 0,
    batchResultReadsCut: 0,
    inFlight: 0,
    maxInFlight: 0,
    lastRequest: null,
  };
}

const countTokens = (text: string) => Math.ceil(text.length / 4);

const contentDigest = (content: unknown) => createHash('sha256').update(JSON.stringify(content)).digest('hex');

/** The usage object: input tokens split into uncached, cache read and cache write (with its TTL breakdown). */
function usageOf(cache: CacheUsage, outputTokens: number, batch = false): Record<string, unknown> {
  return {
    input_tokens: cache.input,
    output_tokens: outputTokens,
    cache_creation_input_tokens: cache.creation,
    cache_read_input_tokens: cache.read,
    cache_creation: { ephemeral_5m_input_tokens: cache.creation5m, ephemeral_1h_input_tokens: cache.creation1h },
    service_tier: batch ? 'batch' : 'standard',
  };
}

/** A Messages request answered, or the error the API sends for it. */
type Outcome =
  | { ok: true; message: Record<string, unknown> }
  | { ok: false; status: number; type: string; message: string; headers?: Record<string, string> };

type ContentBlock = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown };

interface StopDetails {
  type: 'refusal';
  category: RefusalCategory | null;
  explanation: string | null;
}

interface Answer {
  content: ContentBlock[];
  /** What output tokens are counted over. */
  outputText: string;
  stopReason: 'tool_use' | 'end_turn' | 'max_tokens' | 'stop_sequence' | 'refusal' | 'pause_turn';
  stopSequence?: string;
  stopDetails?: StopDetails;
}

/** The earliest of the request's stop sequences in `text`, if any (handling-stop-reasons: stop_sequence). */
function firstStop(request: MessagesRequest, text: string): { index: number; sequence: string } | undefined {
  let first: { index: number; sequence: string } | undefined;
  for (const sequence of request.stop_sequences ?? []) {
    const index = text.indexOf(sequence);
    if (index >= 0 && (first === undefined || index < first.index)) first = { index, sequence };
  }
  return first;
}

/**
 * A final text: cut before the first stop sequence it contains (stop_sequence), or where the script says
 * it stops, or at max_tokens; else end_turn.
 */
function textAnswer(request: MessagesRequest, text: string, stopSequence?: string): Answer {
  const stop = stopSequence === undefined ? firstStop(request, text) : { index: text.length, sequence: stopSequence };
  const said = stop ? text.slice(0, stop.index) : text;
  if (countTokens(said) > request.max_tokens) {
    const cut = said.slice(0, request.max_tokens * 4);
    return { content: [{ type: 'text', text: cut }], outputText: cut, stopReason: 'max_tokens' };
  }
  const content: ContentBlock[] = said === '' ? [] : [{ type: 'text', text: said }];
  return stop
    ? { content, outputText: said, stopReason: 'stop_sequence', stopSequence: stop.sequence }
    : { content, outputText: said, stopReason: 'end_turn' };
}

const REFUSAL_EXPLANATION = 'The request was declined by the safety classifiers (emulated).';

/** stop_reason refusal: what was said before the classifiers stopped it, and stop_details. */
function refusalAnswer(text?: string, category: RefusalCategory | null = 'general_harms', explanation?: string): Answer {
  return {
    content: text ? [{ type: 'text', text }] : [],
    outputText: text ?? '',
    stopReason: 'refusal',
    stopDetails: { type: 'refusal', category, explanation: explanation ?? REFUSAL_EXPLANATION },
  };
}

/**
 * The properties of a tool input that fit in `chars` characters of JSON, the first that does not cut
 * if it is a string: what a forced tool call stopped by max_tokens leaves (the emulator's rendering of
 * a partial input).
 */
function partialInput(input: unknown, chars: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof input !== 'object' || input === null) return out;
  for (const [key, value] of Object.entries(input)) {
    const used = JSON.stringify(out).length;
    const entry = JSON.stringify({ [key]: value }).length - 2;
    if (used + entry + 1 <= chars) {
      out[key] = value;
      continue;
    }
    if (typeof value === 'string') {
      const room = chars - used - key.length - 6;
      if (room > 0) out[key] = value.slice(0, room);
    }
    break;
  }
  return out;
}

const firstUserText = (request: MessagesRequest) => {
  const first = request.messages.find((m) => m.role === 'user');
  return first ? contentText(first.content) : '';
};

const EMAIL_TAG = /<(email|message)\b/;

/**
 * The email the "model" reads: the newest one in the last user message, as always. In a tool
 * conversation the last user message holds tool results, so it is the newest user message that has an
 * <email>/<message> block, or else the first user message.
 */
function emailOf(request: MessagesRequest): EmailView {
  const users = request.messages.filter((m: MessageParam) => m.role === 'user');
  if (!isToolConversation(request)) {
    const lastUser = users.at(-1);
    return newestEmail(lastUser ? contentText(lastUser.content) : '');
  }
  const withEmail = [...users].reverse().find((m) => EMAIL_TAG.test(contentText(m.content)));
  return newestEmail(contentText((withEmail ?? users[0])?.content ?? ''));
}

/** Everything the model reads: the system prompt and every message, as one text. */
/** How many valid requests recentRequests() keeps. */
const RECENT_REQUESTS = 200;

function promptTextOf(request: MessagesRequest): string {
  return [systemText(request), ...request.messages.map((m) => contentText(m.content))].filter(Boolean).join('\n');
}

/** Input tokens the way the emulator bills them: the prompt text plus the tool definitions. */
function inputTokensOf(request: MessagesRequest, promptText = promptTextOf(request)): number {
  return countTokens(promptText) + (request.tools ? countTokens(JSON.stringify(request.tools)) : 0);
}

const FAULT_RESPONSES: Record<HttpFault, { status: number; type: string; message: string }> = {
  'rate-limit': {
    status: 429,
    type: 'rate_limit_error',
    message: 'Number of request tokens has exceeded your per-minute rate limit (emulated).',
  },
  overloaded: { status: 529, type: 'overloaded_error', message: 'Overloaded' },
  'server-error': { status: 500, type: 'api_error', message: 'Internal server error' },
};

export class AnthropicEmulatorServer {
  private config: EmulatorConfig;
  private metricsState = emptyMetrics();
  private readonly faults = new FaultPlan();
  private readonly scriptBook = new ScriptBook();
  private readonly promptCache = new PromptCache();
  private readonly batches = new BatchBook(() => this.config.seed);
  /** The next `times` results downloads send `afterLines` lines and then the connection drops (cutBatchResults). */
  private resultCut: { afterLines: number; times: number } | undefined;
  private rateLimiter: RateLimiter;
  /** Digests of the content of the paused turns (pause_turn) sent: accepted back as a final assistant message. */
  private readonly pausedTurns = new Set<string>();
  /** Ids of tool_use blocks a script sent for a tool not in `tools`: accepted back in later turns. */
  private readonly unknownToolUseIds = new Set<string>();
  /** Numbers the valid /v1/messages calls: the key of their seeded draws and ids. */
  private requestCounter = 0;
  private recent: CapturedRequest[] = [];
  /** Numbers every response, for request-id headers. */
  private responseCounter = 0;
  private readonly server: Server;
  /** Aborts pending latency waits when the server closes. */
  private readonly closing = new AbortController();

  constructor(config: EmulatorConfig = DEFAULT_CONFIG) {
    this.config = config;
    this.rateLimiter = new RateLimiter(config.rateLimits);
    // Every call waiting out its latency listens on this signal; hundreds at once are normal here.
    setMaxListeners(0, this.closing.signal);
    this.server = createServer((req, res) => {
      this.route(req, res).catch((err: unknown) => {
        if (!res.headersSent && !res.destroyed) {
          this.sendError(res, 500, 'api_error', `emulator failure: ${(err as Error).message}`);
        }
      });
    });
  }

  async listen(port: number): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.closing.abort();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  getConfig(): EmulatorConfig {
    return structuredClone(this.config);
  }

  configure(patch: EmulatorConfigPatch | unknown): EmulatorConfig {
    const before = JSON.stringify(this.config.rateLimits);
    this.config = applyPatch(this.config, patch);
    if (JSON.stringify(this.config.rateLimits) !== before) this.rateLimiter = new RateLimiter(this.config.rateLimits);
    return this.getConfig();
  }

  metrics(): EmulatorMetrics {
    return structuredClone({ ...this.metricsState, batchesCreated: this.batches.created, batchRequests: this.batches.requests });
  }

  /** The last RECENT_REQUESTS valid /v1/messages bodies, oldest first (what tests inspect prompts in). */
  recentRequests(): CapturedRequest[] {
    return structuredClone(this.recent);
  }

  /**
   * Zeroes the metrics, the marker counters, the scripts' fault counters and the request numbering; the
   * configuration and the registered scripts stay.
   */
  reset(): void {
    const inFlight = this.metricsState.inFlight;
    this.metricsState = { ...emptyMetrics(), inFlight };
    this.faults.reset();
    this.scriptBook.resetCounters();
    this.requestCounter = 0;
    this.recent = [];
    this.promptCache.clear();
    this.batches.resetCounters();
    this.resultCut = undefined;
    this.rateLimiter = new RateLimiter(this.config.rateLimits);
  }

  /** Registers (or replaces) a script; returns the marker to put in the system prompt. Throws if invalid. */
  script(name: string, steps: unknown, options: ScriptOptions = {}): string {
    return this.scriptBook.register(name, steps, options);
  }

  /** Ends every Message Batch in progress now: its requests are answered (see batches.ts). */
  endBatches(): Promise<number> {
    return this.batches.endAll(this.batchAnswer);
  }

  /**
   * The next `times` downloads of a results file send their first `afterLines` lines, then the
   * connection drops mid-file (as a network failure during a long download would): the client sees a
   * stream that ends in an error, not a short file.
   */
  cutBatchResults(afterLines: number, times = 1): void {
    if (!Number.isInteger(afterLines) || afterLines < 0 || !Number.isInteger(times) || times < 0) throw new Error('afterLines and times: whole numbers ≥ 0');
    this.resultCut = times > 0 ? { afterLines, times } : undefined;
  }

  removeScript(name: string): boolean {
    return this.scriptBook.remove(name);
  }

  clearScripts(): void {
    this.scriptBook.clear();
  }

  scripts(): ScriptStatus[] {
    return this.scriptBook.list();
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://emulator').pathname;
    if (path.startsWith('/__emulator/')) return this.control(path, req, res);
    if (req.method === 'POST' && path === '/v1/messages') return this.messages(req, res);
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') return this.countTokens(req, res);
    if (path === '/v1/messages/batches' || path.startsWith('/v1/messages/batches/')) return this.batchRoute(path, req, res);
    if (req.method === 'GET' && (path === '/v1/models' || path.startsWith('/v1/models/'))) return this.models(path, req, res);
    this.sendError(res, 404, 'not_found_error', 'Not Found');
  }

  private async control(path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET' && path === '/__emulator/metrics') return this.sendJson(res, 200, this.metrics());
    if (req.method === 'GET' && path === '/__emulator/config') return this.sendJson(res, 200, this.getConfig());
    if (req.method === 'POST' && path === '/__emulator/config') {
      const body = await this.readJson(req, res);
      if (body === undefined) return;
      try {
        return this.sendJson(res, 200, this.configure(body));
      } catch (err) {
        return this.sendError(res, 400, 'invalid_request_error', (err as Error).message);
      }
    }
    if (req.method === 'POST' && path === '/__emulator/batches/end') return this.sendJson(res, 200, { ended: await this.endBatches() });
    if (req.method === 'POST' && path === '/__emulator/batches/cut-results') {
      const body = (await this.readJson(req, res)) as { afterLines?: unknown; times?: unknown } | undefined;
      if (body === undefined) return;
      try {
        this.cutBatchResults(Number(body.afterLines), body.times === undefined ? 1 : Number(body.times));
      } catch (err) {
        return this.sendError(res, 400, 'invalid_request_error', (err as Error).message);
      }
      return this.sendJson(res, 200, { ok: true });
    }
    if (req.method === 'POST' && path === '/__emulator/reset') {
      this.reset();
      return this.sendJson(res, 200, { ok: true });
    }
    if (path === '/__emulator/scripts') {
      if (req.method === 'GET') return this.sendJson(res, 200, { scripts: this.scripts() });
      if (req.method === 'DELETE') {
        this.clearScripts();
        return this.sendJson(res, 200, { ok: true });
      }
      if (req.method === 'POST') {
        const body = await this.readJson(req, res);
        if (body === undefined) return;
        const { name, steps, forTool } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
        try {
          const marker = this.script(String(name ?? ''), steps, forTool === undefined ? {} : { forTool: forTool as string });
          return this.sendJson(res, 200, { name, marker });
        } catch (err) {
          return this.sendError(res, 400, 'invalid_request_error', (err as Error).message);
        }
      }
    }
    if (req.method === 'DELETE' && path.startsWith('/__emulator/scripts/')) {
      const name = decodeURIComponent(path.slice('/__emulator/scripts/'.length));
      return this.sendJson(res, 200, { removed: this.removeScript(name) });
    }
    this.sendError(res, 404, 'not_found_error', 'Not Found');
  }

  /**
   * The key and version checks of every /v1 call; false after answering 401/402/400. The key comes in
   * `x-api-key` or, as @anthropic-ai/sdk 1.x sends it, `Authorization: Bearer <key>`.
   */
  private authorized(req: IncomingMessage, res: ServerResponse): boolean {
    const header = req.headers['x-api-key'];
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
    const key = (typeof header === 'string' && header !== '' ? header : undefined) ?? bearer;
    if (!key) {
      this.sendError(res, 401, 'authentication_error', 'x-api-key header is required');
      return false;
    }
    if (this.config.apiKey !== null && key !== this.config.apiKey) {
      this.sendError(res, 401, 'authentication_error', 'invalid x-api-key');
      return false;
    }
    if (this.config.outOfCredits) {
      this.sendError(res, 402, 'billing_error', 'Your credit balance is too low to access the Anthropic API.');
      return false;
    }
    if (!req.headers['anthropic-version']) {
      this.sendError(res, 400, 'invalid_request_error', 'anthropic-version: header is required');
      return false;
    }
    return true;
  }

  /** A batch's request answered as /v1/messages would answer it: its params checked first, an error as an errored result. */
  private readonly batchAnswer: BatchAnswer = async (params) => {
    const validation = validateMessagesRequest(params, 'create', {
      unknownToolUseIds: this.unknownToolUseIds,
      isPausedTurn: (message) => this.pausedTurns.has(contentDigest(message.content)),
    });
    const outcome: Outcome = validation.ok ? await this.answer(validation.request, true) : { ok: false, status: validation.status, type: validation.type, message: validation.message };
    if (outcome.ok) return { type: 'succeeded', message: outcome.message };
    return { type: 'errored', error: { type: 'error', error: { type: outcome.type, message: outcome.message }, request_id: this.nextRequestId() } };
  };

  /**
   * Message Batches: POST /v1/messages/batches (create), GET .../{id} (retrieve), GET .../{id}/results
   * (JSONL), POST .../{id}/cancel, GET /v1/messages/batches (list, newest first).
   */
  private async batchRoute(path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.authorized(req, res)) return;
    const base = `http://${req.headers.host ?? '127.0.0.1'}/v1/messages/batches`;
    const object = (b: Parameters<typeof batchObject>[0]) => batchObject(b, `${base}/${b.id}/results`);
    if (path === '/v1/messages/batches') {
      if (req.method === 'POST') {
        const body = await this.readJson(req, res);
        if (body === undefined) return;
        const created = this.batches.create(body, this.config.batchProcessingMs);
        if (!created.ok) return this.sendError(res, 400, 'invalid_request_error', created.message);
        return this.sendJson(res, 200, object(created.batch));
      }
      if (req.method === 'GET') {
        const url = new URL(req.url ?? '/', 'http://emulator');
        const limit = Math.min(1000, Math.max(1, Number(url.searchParams.get('limit') ?? 20) || 20));
        const all = await this.batches.list(this.batchAnswer);
        const afterId = url.searchParams.get('after_id');
        const start = afterId ? all.findIndex((b) => b.id === afterId) + 1 : 0;
        const data = all.slice(start, start + limit).map(object);
        return this.sendJson(res, 200, { data, has_more: start + limit < all.length, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
      }
    }
    const [id, action] = path.slice('/v1/messages/batches/'.length).split('/');
    const notFound = () => this.sendError(res, 404, 'not_found_error', `message_batch: ${id}`);
    if (req.method === 'GET' && action === undefined) {
      const batch = await this.batches.get(id!, this.batchAnswer);
      return batch ? this.sendJson(res, 200, object(batch)) : notFound();
    }
    if (req.method === 'GET' && action === 'results') {
      const batch = await this.batches.get(id!, this.batchAnswer);
      if (!batch) return notFound();
      if (batch.status !== 'ended') return this.sendError(res, 400, 'invalid_request_error', `Message Batch ${batch.id} has not finished processing; its results are not available yet.`);
      res.writeHead(200, { 'content-type': 'application/binary', 'request-id': this.nextRequestId() });
      this.metricsState.batchResultReads++;
      const cut = this.resultCut;
      if (cut) {
        if (--cut.times === 0) this.resultCut = undefined;
        this.metricsState.batchResultReadsCut++;
        const lines = resultsJsonl(batch).split('\n').filter(Boolean).slice(0, cut.afterLines);
        // The lines go out, then the socket is destroyed: a chunked body without its last chunk.
        res.write(lines.map((l) => `${l}\n`).join(''), () => res.destroy());
        return;
      }
      res.end(resultsJsonl(batch));
      return;
    }
    if (req.method === 'POST' && action === 'cancel') {
      const batch = await this.batches.cancel(id!, this.batchAnswer);
      return batch ? this.sendJson(res, 200, object(batch)) : notFound();
    }
    this.sendError(res, 404, 'not_found_error', 'Not Found');
  }

  /** GET /v1/models/{id} (a retired model too, with its lifecycle) and GET /v1/models. */
  private models(path: string, req: IncomingMessage, res: ServerResponse): void {
    if (!this.authorized(req, res)) return;
    if (path === '/v1/models') {
      const data = listModels().filter((m) => m.lifecycle !== 'retired').map(modelInfo);
      return this.sendJson(res, 200, { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
    }
    const id = decodeURIComponent(path.slice('/v1/models/'.length));
    const model = modelEntry(id);
    if (!model) return this.sendError(res, 404, 'not_found_error', `model: ${id}`);
    this.sendJson(res, 200, modelInfo(model));
  }

  /** The checks every /v1 call passes first: authentication, API version, a valid body. */
  private async acceptedRequest(
    req: IncomingMessage,
    res: ServerResponse,
    endpoint: Endpoint,
  ): Promise<MessagesRequest | undefined> {
    if (!this.authorized(req, res)) return undefined;
    const body = await this.readJson(req, res);
    if (body === undefined) return undefined;
    const validation = validateMessagesRequest(body, endpoint, {
      unknownToolUseIds: this.unknownToolUseIds,
      isPausedTurn: (message) => this.pausedTurns.has(contentDigest(message.content)),
    });
    if (!validation.ok) {
      this.sendError(res, validation.status, validation.type, validation.message);
      return undefined;
    }
    return validation.request;
  }

  private async countTokens(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const request = await this.acceptedRequest(req, res, 'count_tokens');
    if (request) this.sendJson(res, 200, { input_tokens: inputTokensOf(request) });
  }

  private async messages(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const m = this.metricsState;
    m.requests++;
    m.inFlight++;
    m.maxInFlight = Math.max(m.maxInFlight, m.inFlight);
    try {
      await this.answerMessages(req, res);
    } finally {
      // reset() may have replaced the metrics object meanwhile; count down on the current one.
      this.metricsState.inFlight--;
      const status = String(res.statusCode);
      this.metricsState.byStatus[status] = (this.metricsState.byStatus[status] ?? 0) + 1;
    }
  }

  private async answerMessages(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const request = await this.acceptedRequest(req, res, 'create');
    if (!request) return;
    const outcome = await this.answer(request, false);
    if (!outcome.ok) return this.sendError(res, outcome.status, outcome.type, outcome.message, outcome.headers);
    this.sendJson(res, 200, outcome.message, this.rateLimiter.headers());
  }

  /**
   * One Messages request answered: the Message, or the error the API would send. A request of a
   * Message Batch (`batch`) passes no rate limit and no latency, is not kept among the recent
   * requests, and counts in `batchUsage` instead of `usage`.
   */
  private async answer(request: MessagesRequest, batch: boolean): Promise<Outcome> {
    const n = ++this.requestCounter;
    const { seed } = this.config;
    const promptText = promptTextOf(request);
    const inputTokens = inputTokensOf(request, promptText);
    if (!batch) {
      this.metricsState.lastRequest = { body: request, inputTokens, receivedAt: new Date().toISOString() };
      this.recent = [...this.recent, this.metricsState.lastRequest].slice(-RECENT_REQUESTS);

      const admitted = this.rateLimiter.admit(inputTokens);
      if (!admitted.ok) {
        return {
          ok: false,
          status: 429,
          type: 'rate_limit_error',
          message: FAULT_RESPONSES['rate-limit'].message,
          headers: { 'retry-after': String(Math.ceil(admitted.retryAfterMs / 1000)), ...this.rateLimiter.headers() },
        };
      }

      const latency = this.config.latencyMs + Math.floor(draw(seed, 'jitter', n) * this.config.latencyJitterMs);
      if (latency > 0) {
        try {
          await sleep(latency, undefined, { signal: this.closing.signal });
        } catch {
          return { ok: false, status: 503, type: 'api_error', message: 'emulator closing' }; // the connection is being torn down anyway
        }
      }
    }

    const email = emailOf(request);
    const named = scriptNameIn(systemText(request), firstUserText(request));
    const scriptName = named !== undefined && this.scriptBook.appliesTo(named, (request.tools ?? []).map((t) => t.name)) ? named : undefined;
    const turn = turnOf(request);
    const scripted = scriptName === undefined ? undefined : this.scriptBook.next(scriptName, turn);
    if (scripted) this.metricsState.scriptedResponses++;
    if (scripted?.kind === 'error') return { ok: false, status: 400, type: 'invalid_request_error', message: scripted.message };
    const forced = request.tool_choice?.type === 'tool' || request.tool_choice?.type === 'any';
    const markerFault = this.faults.fromMarkers(`${email.subject}\n${email.body}`);
    const fault =
      (scripted?.kind === 'fault' ? scripted.fault : undefined) ??
      (markerFault === 'draft-refusal' && forced ? undefined : markerFault) ??
      FaultPlan.fromRates(this.config.errorRates, seed, n);
    if (isHttpFault(fault)) {
      const { status, type, message } = FAULT_RESPONSES[fault];
      const retryAfter: Record<string, string> =
        status === 500 ? {} : { 'retry-after': String(this.config.retryAfterSeconds) };
      return { ok: false, status, type, message, headers: { ...retryAfter, ...this.rateLimiter.headers() } };
    }

    let answer: Answer;
    if (fault === 'refusal' || fault === 'draft-refusal') {
      answer = refusalAnswer();
    } else if (scripted && scripted.kind !== 'fault') {
      const conflict = scriptConflict(scriptName!, turn, scripted, request);
      if (conflict) return { ok: false, status: 400, type: 'invalid_request_error', message: conflict };
      if (scripted.kind === 'tools') answer = this.toolAnswer(request, scripted.toolCalls, scripted.text);
      else if (scripted.kind === 'refusal') answer = refusalAnswer(scripted.text, scripted.category, scripted.explanation);
      else if (scripted.kind === 'pause') answer = this.pauseAnswer(scripted.text);
      else answer = textAnswer(request, scripted.text, scripted.stopSequence);
    } else {
      answer = this.unscriptedAnswer(request, promptText, email, fault === 'invalid-output', n);
    }
    if (fault === 'max-tokens') answer = this.stoppedAtMaxTokens(request, answer);
    if (answer.stopReason === 'tool_use') {
      this.metricsState.toolUseResponses++;
      this.metricsState.toolUseBlocks += answer.content.filter((b) => b.type === 'tool_use').length;
    } else {
      this.metricsState.textResponses++;
    }
    if (fault === 'invalid-output') this.metricsState.invalidOutputs++;

    const outputTokens = answer.stopReason === 'max_tokens' ? request.max_tokens : Math.max(1, countTokens(answer.outputText));
    const cache = this.promptCache.account(request, inputTokens, usableModel(request.model)?.minCacheableTokens ?? 1024, (r) => inputTokensOf(r));
    this.rateLimiter.recordOutput(outputTokens);
    this.metricsState.inputTokens += inputTokens;
    this.metricsState.outputTokens += outputTokens;
    this.metricsState.cacheReadInputTokens += cache.read;
    this.metricsState.cacheCreationInputTokens += cache.creation;
    const byModel = ((batch ? this.metricsState.batchUsage : this.metricsState.usage)[request.model] ??= {});
    const counts = (byModel[askedFor(request)] ??= { calls: 0, input: 0, output: 0, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0 });
    counts.calls++;
    counts.input += cache.input;
    counts.output += outputTokens;
    counts.cacheRead += cache.read;
    counts.cacheWrite5m += cache.creation5m;
    counts.cacheWrite1h += cache.creation1h;
    return {
      ok: true,
      message: {
        id: makeId('msg', seed, n),
        type: 'message',
        role: 'assistant',
        model: request.model,
        content: answer.content,
        stop_reason: answer.stopReason,
        stop_sequence: answer.stopSequence ?? null,
        stop_details: answer.stopDetails ?? null,
        usage: usageOf(cache, outputTokens, batch),
      },
    };
  }

  /** stop_reason pause_turn; its content is remembered so that sending it back to continue is no prefill. */
  private pauseAnswer(text = 'Working on it; the turn is paused and continues when you send it back.'): Answer {
    const content: ContentBlock[] = [{ type: 'text', text }];
    this.pausedTurns.add(contentDigest(content));
    return { content, outputText: text, stopReason: 'pause_turn' };
  }

  /**
   * The answer as if the model had run into max_tokens: the text cut to it and a tool call's input to
   * what fits (a forced tool call truncated, handling-stop-reasons: max_tokens).
   */
  private stoppedAtMaxTokens(request: MessagesRequest, answer: Answer): Answer {
    if (answer.stopReason === 'max_tokens' || answer.stopReason === 'refusal') return answer;
    const chars = Math.max(0, request.max_tokens * 4 - 1);
    const content: ContentBlock[] = [];
    let left = chars;
    for (const block of answer.content) {
      if (left <= 0) break;
      if (block.type === 'text') {
        const text = block.text.slice(0, left);
        content.push({ type: 'text', text });
        left -= text.length;
      } else {
        content.push({ ...block, input: partialInput(block.input, Math.min(left, Math.floor(JSON.stringify(block.input).length / 2))) });
        break;
      }
    }
    return { content, outputText: JSON.stringify(content), stopReason: 'max_tokens' };
  }

  /**
   * Without a script: a forced tool_choice answers the classification (as always); with tools offered on
   * auto, the default agent first calls a read-like tool (read_thread preferred), then a draft-writing
   * tool with the drafted reply when one is offered, then ends the turn with the reply; otherwise the
   * drafted reply as text.
   */
  private unscriptedAnswer(
    request: MessagesRequest,
    promptText: string,
    email: EmailView,
    invalidOutput: boolean,
    n: number,
  ): Answer {
    const { seed } = this.config;
    const choice = request.tool_choice;
    const forcedTool =
      choice?.type === 'tool'
        ? request.tools?.find((t) => t.name === choice.name)
        : choice?.type === 'any'
          ? request.tools?.[0]
          : undefined;
    if (forcedTool) {
      const input = invalidOutput
        ? invalidDecision()
        : forcedTool.name === 'record_expects_reply'
          ? expectsReply(email)
          : forcedTool.name === 'propose_writing_lessons'
            ? writingLessons(promptText)
            : toolInput(forcedTool, classify(promptText, email));
      const block = { type: 'tool_use' as const, id: makeId('toolu', seed, n), name: forcedTool.name, input };
      const outputText = JSON.stringify(input);
      if (countTokens(outputText) > request.max_tokens) {
        // The call is cut where max_tokens ran out: a partial input, stop_reason max_tokens.
        const partial = { ...block, input: partialInput(input, request.max_tokens * 4) };
        return { content: [partial], outputText: JSON.stringify(partial.input), stopReason: 'max_tokens' };
      }
      return { content: [block], outputText, stopReason: 'tool_use' };
    }
    // A scheduled run's brief or digest: the stand-in writes it from the run's facts (scheduled.ts).
    const report = invalidOutput ? undefined : scheduledReport(promptText);
    if (report !== undefined) return { content: [{ type: 'text', text: report }], outputText: report, stopReason: 'end_turn' };
    const reader = choice?.type === 'none' || hasToolResults(request) ? undefined : readLikeTool(request.tools);
    if (reader && !invalidOutput) {
      return this.toolAnswer(request, [{ name: reader.name, input: defaultToolInput(reader, promptText, email) }]);
    }
    // Once it has read, an agent that can write a draft writes the reply there, then says so.
    const drafter = choice?.type === 'none' || !hasToolResults(request) ? undefined : unusedDraftTool(request);
    if (drafter && !invalidOutput) {
      const input = { ...defaultToolInput(drafter, promptText, email), body: draft(promptText, email) };
      return this.toolAnswer(request, [{ name: drafter.name, input }]);
    }
    return textAnswer(request, invalidOutput ? '' : draft(promptText, email));
  }

  /**
   * Optional text, then one tool_use block per call, with ids derived from the conversation so far (the
   * same conversation gets the same ids, whatever else runs concurrently). Cut to text at max_tokens.
   */
  private toolAnswer(request: MessagesRequest, calls: ScriptToolCall[], text?: string): Answer {
    const conversation = createHash('sha256').update(JSON.stringify(request.messages)).digest('hex');
    const offered = new Set((request.tools ?? []).map((t) => t.name));
    const blocks = calls.map((call, k) => {
      const id = makeId('toolu', this.config.seed, `${conversation}:${k}`);
      if (!offered.has(call.name)) this.unknownToolUseIds.add(id);
      return { type: 'tool_use' as const, id, name: call.name, input: call.input };
    });
    const outputText = [text ?? '', ...blocks.map((b) => `${b.name}${JSON.stringify(b.input)}`)].join('\n');
    if (countTokens(outputText) > request.max_tokens) {
      // Cut where max_tokens ran out: the text, then the first call with the input that fits.
      const chars = request.max_tokens * 4;
      const cut = (text ?? '').slice(0, chars);
      const content: ContentBlock[] = cut ? [{ type: 'text', text: cut }] : [];
      const left = chars - cut.length - (blocks[0]?.name.length ?? 0);
      if (blocks[0] && left > 2) content.push({ ...blocks[0], input: partialInput(blocks[0].input, left) });
      return { content, outputText: cut, stopReason: 'max_tokens' };
    }
    return {
      content: [...(text ? [{ type: 'text' as const, text }] : []), ...blocks],
      outputText,
      stopReason: 'tool_use',
    };
  }

  /** The parsed JSON body, or undefined after answering 400/413 for an unreadable one. */
  private async readJson(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
    const chunks: Buffer[] = [];
    let size = 0;
    // Read to the end even when too large: leaving the loop early would destroy the socket before the 413.
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk as Buffer);
    }
    if (size > MAX_BODY_BYTES) {
      this.sendError(res, 413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.');
      return undefined;
    }
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') as unknown;
    } catch {
      this.sendError(res, 400, 'invalid_request_error', 'There was an error parsing the body of your request as JSON.');
      return undefined;
    }
  }

  private nextRequestId(): string {
    return makeId('req', this.config.seed, ++this.responseCounter);
  }

  private sendError(
    res: ServerResponse,
    status: number,
    type: string,
    message: string,
    headers: Record<string, string> = {},
  ): void {
    const requestId = this.nextRequestId();
    this.sendJson(res, status, { type: 'error', error: { type, message }, request_id: requestId }, headers, requestId);
  }

  private sendJson(
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
    requestId = this.nextRequestId(),
  ): void {
    writeJson(res, status, body, { ...headers, 'request-id': requestId });
  }
}
