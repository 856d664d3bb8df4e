// The HTTP side of the emulator: POST /v1/messages (and /v1/messages/count_tokens) as the real SDK calls
// them, plus a small control API under /__emulator/ for tests and the benchmark.
import { setMaxListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { sendJson as writeJson } from '../../src/shared/json-response.js';
import { applyPatch, DEFAULT_CONFIG, type EmulatorConfig, type EmulatorConfigPatch } from './config.js';
import { FaultPlan, type Fault } from './faults.js';
import { createHash } from 'node:crypto';
import { defaultToolInput, hasToolResults, isToolConversation, readLikeTool, scriptConflict, turnOf, unusedDraftTool } from './agent.js';
import { draw, makeId } from './random.js';
import { scheduledReport } from './scheduled.js';
import { writingLessons } from './learning.js';
import { classify, draft, expectsReply, invalidDecision, newestEmail, toolInput, type EmailView } from './responder.js';
import { ScriptBook, scriptNameIn, type ScriptOptions, type ScriptStatus, type ScriptToolCall } from './script.js';
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
  /** Token usage summed over successful calls, as reported in `usage`. */
  inputTokens: number;
  outputTokens: number;
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
    inFlight: 0,
    maxInFlight: 0,
    lastRequest: null,
  };
}

const countTokens = (text: string) => Math.ceil(text.length / 4);

type ContentBlock = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown };

interface Answer {
  content: ContentBlock[];
  /** What output tokens are counted over. */
  outputText: string;
  stopReason: 'tool_use' | 'end_turn' | 'max_tokens' | 'stop_sequence';
  stopSequence?: string;
}

/** A scripted final text: end_turn, stop_sequence when the script names one, max_tokens when too long. */
function textAnswer(request: MessagesRequest, text: string, stopSequence?: string): Answer {
  if (countTokens(text) > request.max_tokens) {
    const cut = text.slice(0, request.max_tokens * 4);
    return { content: [{ type: 'text', text: cut }], outputText: cut, stopReason: 'max_tokens' };
  }
  return stopSequence === undefined
    ? { content: [{ type: 'text', text }], outputText: text, stopReason: 'end_turn' }
    : { content: [{ type: 'text', text }], outputText: text, stopReason: 'stop_sequence', stopSequence };
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

const FAULT_RESPONSES: Record<Exclude<Fault, 'invalid-output'>, { status: number; type: string; message: string }> = {
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
    this.config = applyPatch(this.config, patch);
    return this.getConfig();
  }

  metrics(): EmulatorMetrics {
    return structuredClone(this.metricsState);
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
  }

  /** Registers (or replaces) a script; returns the marker to put in the system prompt. Throws if invalid. */
  script(name: string, steps: unknown, options: ScriptOptions = {}): string {
    return this.scriptBook.register(name, steps, options);
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

  /** The checks every /v1 call passes first: authentication, API version, a valid body. */
  private async acceptedRequest(
    req: IncomingMessage,
    res: ServerResponse,
    endpoint: Endpoint,
  ): Promise<MessagesRequest | undefined> {
    const apiKey = req.headers['x-api-key'];
    const bearer = req.headers.authorization?.startsWith('Bearer ');
    if (!apiKey && !bearer) {
      this.sendError(res, 401, 'authentication_error', 'x-api-key header is required');
      return undefined;
    }
    if (this.config.apiKey !== null && apiKey !== this.config.apiKey) {
      this.sendError(res, 401, 'authentication_error', 'invalid x-api-key');
      return undefined;
    }
    if (this.config.outOfCredits) {
      this.sendError(res, 402, 'billing_error', 'Your credit balance is too low to access the Anthropic API.');
      return undefined;
    }
    if (!req.headers['anthropic-version']) {
      this.sendError(res, 400, 'invalid_request_error', 'anthropic-version: header is required');
      return undefined;
    }
    const body = await this.readJson(req, res);
    if (body === undefined) return undefined;
    const validation = validateMessagesRequest(body, endpoint, { unknownToolUseIds: this.unknownToolUseIds });
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
    const n = ++this.requestCounter;
    const { seed } = this.config;
    const promptText = promptTextOf(request);
    const inputTokens = inputTokensOf(request, promptText);
    this.metricsState.lastRequest = { body: request, inputTokens, receivedAt: new Date().toISOString() };
    this.recent = [...this.recent, this.metricsState.lastRequest].slice(-RECENT_REQUESTS);

    const latency = this.config.latencyMs + Math.floor(draw(seed, 'jitter', n) * this.config.latencyJitterMs);
    if (latency > 0) {
      try {
        await sleep(latency, undefined, { signal: this.closing.signal });
      } catch {
        return; // closing: the connection is being torn down anyway
      }
    }

    const email = emailOf(request);
    const named = scriptNameIn(systemText(request), firstUserText(request));
    const scriptName = named !== undefined && this.scriptBook.appliesTo(named, (request.tools ?? []).map((t) => t.name)) ? named : undefined;
    const turn = turnOf(request);
    const scripted = scriptName === undefined ? undefined : this.scriptBook.next(scriptName, turn);
    if (scripted) this.metricsState.scriptedResponses++;
    if (scripted?.kind === 'error') return this.sendError(res, 400, 'invalid_request_error', scripted.message);
    const fault =
      (scripted?.kind === 'fault' ? scripted.fault : undefined) ??
      this.faults.fromMarkers(`${email.subject}\n${email.body}`) ??
      FaultPlan.fromRates(this.config.errorRates, seed, n);
    if (fault && fault !== 'invalid-output') {
      const { status, type, message } = FAULT_RESPONSES[fault];
      const retryAfter: Record<string, string> =
        status === 500 ? {} : { 'retry-after': String(this.config.retryAfterSeconds) };
      return this.sendError(res, status, type, message, retryAfter);
    }

    let answer: Answer;
    if (scripted && scripted.kind !== 'fault') {
      const conflict = scriptConflict(scriptName!, turn, scripted, request);
      if (conflict) return this.sendError(res, 400, 'invalid_request_error', conflict);
      answer =
        scripted.kind === 'tools'
          ? this.toolAnswer(request, scripted.toolCalls, scripted.text)
          : textAnswer(request, scripted.text, scripted.stopSequence);
    } else {
      answer = this.unscriptedAnswer(request, promptText, email, fault === 'invalid-output', n);
    }
    if (answer.stopReason === 'tool_use') {
      this.metricsState.toolUseResponses++;
      this.metricsState.toolUseBlocks += answer.content.filter((b) => b.type === 'tool_use').length;
    } else {
      this.metricsState.textResponses++;
    }
    if (fault === 'invalid-output') this.metricsState.invalidOutputs++;

    const outputTokens = Math.max(1, countTokens(answer.outputText));
    this.metricsState.inputTokens += inputTokens;
    this.metricsState.outputTokens += outputTokens;
    this.sendJson(res, 200, {
      id: makeId('msg', seed, n),
      type: 'message',
      role: 'assistant',
      model: request.model,
      content: answer.content,
      stop_reason: answer.stopReason,
      stop_sequence: answer.stopSequence ?? null,
      usage: {
        input_tokens: inputTokens,
        output_tokens: outputTokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        service_tier: 'standard',
      },
    });
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
      return {
        content: [{ type: 'tool_use', id: makeId('toolu', seed, n), name: forcedTool.name, input }],
        outputText: JSON.stringify(input),
        stopReason: 'tool_use',
      };
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
    let outputText = invalidOutput ? '' : draft(promptText, email);
    let stopReason: Answer['stopReason'] = 'end_turn';
    if (countTokens(outputText) > request.max_tokens) {
      outputText = outputText.slice(0, request.max_tokens * 4);
      stopReason = 'max_tokens';
    }
    return { content: outputText === '' ? [] : [{ type: 'text', text: outputText }], outputText, stopReason };
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
      const cut = (text ?? '').slice(0, request.max_tokens * 4);
      return { content: cut ? [{ type: 'text', text: cut }] : [], outputText: cut, stopReason: 'max_tokens' };
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
