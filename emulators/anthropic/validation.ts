// Request validation for POST /v1/messages, with the API's error wording where we know it
// ("max_tokens: Field required"), so clients see the failures they would see in production.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { modelEntry, usableModel } from './models.js';

export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface TextBlock {
  type: 'text';
  text: string;
  cache_control?: CacheControl;
}

export interface ToolDefinition {
  name: string;
  description?: string;
  input_schema: JsonSchema;
  cache_control?: CacheControl;
}

export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
}

export interface MessageParam {
  role: 'user' | 'assistant';
  content: string | Array<{ type: string; [key: string]: unknown }>;
}

export type ToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'none' }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean };

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<{ type: string; [key: string]: unknown }>;
  is_error?: boolean;
}

export interface MessagesRequest {
  model: string;
  max_tokens: number;
  messages: MessageParam[];
  system?: string | TextBlock[];
  tools?: ToolDefinition[];
  tool_choice?: ToolChoice;
  stop_sequences?: string[];
  stream?: boolean;
  /** Automatic caching: one breakpoint on the last cacheable block. */
  cache_control?: CacheControl;
}

export type Validation =
  | { ok: true; request: MessagesRequest }
  | { ok: false; status: 400 | 404; type: 'invalid_request_error' | 'not_found_error'; message: string };

/** At most this many cache_control breakpoints per request (prompt-caching docs). */
export const MAX_CACHE_BREAKPOINTS = 4;
/** Image media types the API reads (vision docs). */
const IMAGE_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];
/** Checks that a tool's input_schema is a JSON Schema (draft 2020-12, as the API requires). */
const schemaChecker = new Ajv2020({ strict: false, validateFormats: false });
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
const KNOWN_FIELDS = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'stream',
  'metadata',
  'thinking',
  'service_tier',
  'container',
  'cache_control',
  'output_config',
  'inference_geo',
  'speed',
  'diagnostics',
  'user_profile_id',
  'workspace_id',
]);

class Invalid extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Invalid(message);
}

/** Pattern of tool_use ids; the API names it in its error text. */
const TOOL_USE_ID = /^[a-zA-Z0-9_-]+$/;
/** Block types a tool_result's content list may hold. */
const TOOL_RESULT_CONTENT_TYPES = new Set(['text', 'image', 'document', 'search_result']);

/** A cache_control value: type ephemeral, ttl 5m or 1h (prompt-caching docs). */
function checkCacheControl(value: unknown, path: string): void {
  if (value === undefined || value === null) return;
  check(isObject(value), `${path}.cache_control: Input should be a valid dictionary`);
  check(value.type === 'ephemeral', `${path}.cache_control.ephemeral.type: Input should be 'ephemeral'`);
  check(
    value.ttl === undefined || value.ttl === '5m' || value.ttl === '1h',
    `${path}.cache_control.ephemeral.ttl: Input should be '5m' or '1h'`,
  );
}

/** An image block's source: base64 data of a supported media type, or a URL (vision docs). */
function checkImage(block: Record<string, unknown>, path: string): void {
  const source = block.source;
  check(isObject(source), `${path}.image.source: Field required`);
  if (source.type === 'url') {
    check(typeof source.url === 'string', `${path}.image.source.url.url: Field required`);
    return;
  }
  check(source.type === 'base64', `${path}.image.source: Input tag '${String(source.type)}' found using 'type' does not match any of the expected tags: 'base64', 'url', 'file'`);
  check(
    typeof source.media_type === 'string' && IMAGE_MEDIA_TYPES.includes(source.media_type),
    `${path}.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`,
  );
  check(typeof source.data === 'string' && source.data !== '', `${path}.image.source.base64.data: Field required`);
}

function checkContent(content: unknown, path: string, role: unknown, index: number, last: boolean): void {
  check(content !== undefined, `${path}: Field required`);
  // Only the final assistant message may be empty (errors docs / the API's own wording).
  const emptyAllowed = role === 'assistant' && last;
  const nonEmpty = `messages.${index}: all messages must have non-empty content except for the optional final assistant message`;
  if (typeof content === 'string') {
    check(content !== '' || emptyAllowed, nonEmpty);
    return;
  }
  check(Array.isArray(content), `${path}: Input should be a valid string or a valid list`);
  check(content.length > 0 || emptyAllowed, nonEmpty);
  content.forEach((block: unknown, j) => {
    check(isObject(block) && typeof block.type === 'string', `${path}.${j}: Input should be a valid dictionary`);
    checkCacheControl(block.cache_control, `${path}.${j}.${block.type}`);
    if (block.type === 'image') checkImage(block, `${path}.${j}`);
    if (block.type === 'text') {
      check(typeof block.text === 'string', `${path}.${j}.text: Field required`);
      check(block.text !== '', `${path}.${j}: text content blocks must be non-empty`);
    }
    if (block.type === 'tool_use') {
      check(role === 'assistant', `${path}.${j}: tool_use blocks may only appear in assistant messages`);
      check(block.id !== undefined, `${path}.${j}.tool_use.id: Field required`);
      check(
        typeof block.id === 'string' && TOOL_USE_ID.test(block.id),
        `${path}.${j}.tool_use.id: String should match pattern '${TOOL_USE_ID.source}'`,
      );
      check(block.name !== undefined, `${path}.${j}.tool_use.name: Field required`);
      check(typeof block.name === 'string', `${path}.${j}.tool_use.name: Input should be a valid string`);
      check(block.input !== undefined, `${path}.${j}.tool_use.input: Field required`);
      check(isObject(block.input), `${path}.${j}.tool_use.input: Input should be a valid dictionary`);
    }
    if (block.type === 'tool_result') {
      check(role === 'user', `${path}.${j}: tool_result blocks may only appear in user messages`);
      check(block.tool_use_id !== undefined, `${path}.${j}.tool_result.tool_use_id: Field required`);
      check(
        typeof block.tool_use_id === 'string' && TOOL_USE_ID.test(block.tool_use_id),
        `${path}.${j}.tool_result.tool_use_id: String should match pattern '${TOOL_USE_ID.source}'`,
      );
      check(
        block.is_error === undefined || typeof block.is_error === 'boolean',
        `${path}.${j}.tool_result.is_error: Input should be a valid boolean`,
      );
      const result = block.content;
      if (result === undefined || typeof result === 'string') return;
      check(Array.isArray(result), `${path}.${j}.tool_result.content: Input should be a valid string or a valid list`);
      result.forEach((inner: unknown, k) => {
        const at = `${path}.${j}.tool_result.content.${k}`;
        check(isObject(inner) && typeof inner.type === 'string', `${at}: Input should be a valid dictionary`);
        check(
          TOOL_RESULT_CONTENT_TYPES.has(inner.type),
          `${at}.type: Input should be 'text', 'image', 'document' or 'search_result'`,
        );
        if (inner.type === 'text') {
          check(typeof inner.text === 'string', `${at}.text: Field required`);
          check(inner.text !== '', `${at}: text content blocks must be non-empty`);
        }
        if (inner.type === 'image') checkImage(inner, at);
      });
    }
  });
}

const blocksOf = (message: MessageParam) => (typeof message.content === 'string' ? [] : message.content);

/**
 * The pairing rules of tool use across turns, in the API's words where confirmed: tool_use ids unique in
 * the request; every tool_result answers a tool_use of the message just before; the message after an
 * assistant turn with tool_use blocks is a user turn that starts with their tool_result blocks; tool_use
 * names are tools of the request (unless the emulator itself called that unknown tool on purpose).
 */
function checkToolTurns(messages: MessageParam[], toolNames: Set<string>, opts: ValidationOptions): void {
  const hasToolBlocks = messages.some((m) =>
    blocksOf(m).some((b) => b.type === 'tool_use' || b.type === 'tool_result'),
  );
  if (!hasToolBlocks) return;
  check(toolNames.size > 0, 'Requests which include `tool_use` or `tool_result` blocks must define tools.');

  const seen = new Set<string>();
  messages.forEach((message, i) => {
    blocksOf(message).forEach((block, j) => {
      if (block.type !== 'tool_use') return;
      const { id, name } = block as unknown as ToolUseBlock;
      check(!seen.has(id), `messages.${i}.content.${j}: \`tool_use\` ids must be unique`);
      seen.add(id);
      check(
        toolNames.has(name) || (opts.unknownToolUseIds?.has(id) ?? false),
        `messages.${i}.content.${j}.tool_use.name: Tool '${name}' not found in 'tools'`,
      );
    });
  });

  messages.forEach((message, i) => {
    if (message.role !== 'user') return;
    const previous = messages[i - 1];
    const offered = new Set(
      previous?.role === 'assistant'
        ? blocksOf(previous)
            .filter((b) => b.type === 'tool_use')
            .map((b) => (b as unknown as ToolUseBlock).id)
        : [],
    );
    blocksOf(message).forEach((block, j) => {
      if (block.type !== 'tool_result') return;
      const id = (block as unknown as ToolResultBlock).tool_use_id;
      check(
        offered.has(id),
        `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. ` +
          'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
      );
    });
  });

  messages.forEach((message, i) => {
    if (message.role !== 'assistant') return;
    const ids = blocksOf(message)
      .filter((b) => b.type === 'tool_use')
      .map((b) => (b as unknown as ToolUseBlock).id);
    if (ids.length === 0) return;
    const next = messages[i + 1];
    const nextBlocks = next?.role === 'user' ? blocksOf(next) : [];
    const answered = new Set(
      nextBlocks.filter((b) => b.type === 'tool_result').map((b) => (b as unknown as ToolResultBlock).tool_use_id),
    );
    const missing = ids.filter((id) => !answered.has(id));
    check(
      missing.length === 0,
      `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ` +
        `${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
    );
    const leading = nextBlocks.findIndex((b) => b.type !== 'tool_result');
    const leadingResults = leading < 0 ? nextBlocks.length : leading;
    check(
      leadingResults >= answered.size,
      `messages.${i + 1}: Did not find ${ids.length} \`tool_result\` block(s) at the beginning of this message. ` +
        'Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.',
    );
  });
}

export interface ValidationOptions {
  /** Ids of tool_use blocks the emulator answered with a tool not in `tools` because a script said so. */
  unknownToolUseIds?: ReadonlySet<string>;
  /** Whether a final assistant message is a paused turn (pause_turn) the emulator sent, sent back to continue. */
  isPausedTurn?: (message: MessageParam) => boolean;
}

/** cache_control breakpoints of a request: on tools, system blocks, message blocks, and the top-level one. */
export function cacheBreakpoints(request: MessagesRequest): number {
  const marked = (b: unknown) => (isObject(b) && b.cache_control !== undefined && b.cache_control !== null ? 1 : 0);
  let n = marked(request);
  for (const tool of Array.isArray(request.tools) ? request.tools : []) n += marked(tool);
  if (Array.isArray(request.system)) for (const block of request.system) n += marked(block);
  for (const message of Array.isArray(request.messages) ? request.messages : []) {
    if (!isObject(message) || !Array.isArray(message.content)) continue;
    for (const block of message.content) n += marked(block);
  }
  return n;
}

/** count_tokens takes the same body as create, less max_tokens. */
export type Endpoint = 'create' | 'count_tokens';

function checkRequest(body: unknown, endpoint: Endpoint, opts: ValidationOptions): MessagesRequest {
  check(isObject(body), 'Request body must be a JSON object');
  for (const key of Object.keys(body)) check(KNOWN_FIELDS.has(key), `${key}: Extra inputs are not permitted`);

  check(body.model !== undefined, 'model: Field required');
  check(typeof body.model === 'string' && body.model !== '', 'model: Input should be a valid string');

  const model = modelEntry(body.model);
  if (endpoint === 'create') {
    const maxTokens = body.max_tokens;
    check(maxTokens !== undefined, 'max_tokens: Field required');
    check(typeof maxTokens === 'number' && Number.isInteger(maxTokens), 'max_tokens: Input should be a valid integer');
    check(maxTokens >= 1, 'max_tokens: Input should be greater than or equal to 1');
    // Each model its own limit (models overview: 128K for the 4.6 models and later, 64K for 4.5).
    if (model) {
      check(
        maxTokens <= model.max_tokens,
        `max_tokens: ${maxTokens} > ${model.max_tokens}, which is the maximum allowed number of output tokens for ${body.model}`,
      );
    }
  }

  const messages = body.messages;
  check(messages !== undefined, 'messages: Field required');
  check(Array.isArray(messages), 'messages: Input should be a valid list');
  check(messages.length > 0, 'messages: at least one message is required');
  messages.forEach((message: unknown, i) => {
    check(isObject(message), `messages.${i}: Input should be a valid dictionary`);
    check(
      message.role === 'user' || message.role === 'assistant',
      `messages.${i}.role: Input should be 'user' or 'assistant'`,
    );
    checkContent(message.content, `messages.${i}.content`, message.role, i, i === messages.length - 1);
  });
  // Claude 4.6 and later: no assistant prefill (whats-new-claude-4-6#prefill-removal). A paused turn
  // sent back to be continued is not a prefill (handling-stop-reasons, pause_turn).
  const lastMessage = messages.at(-1) as MessageParam;
  if (model && !model.prefill && lastMessage.role === 'assistant' && !(opts.isPausedTurn?.(lastMessage) ?? false)) {
    throw new Invalid('This model does not support assistant message prefill. The conversation must end with a user message.');
  }

  if (body.system !== undefined && typeof body.system !== 'string') {
    check(Array.isArray(body.system), 'system: Input should be a valid string or a valid list');
    body.system.forEach((block: unknown, i) => {
      check(
        isObject(block) && block.type === 'text' && typeof block.text === 'string',
        `system.${i}: Input should be a text block`,
      );
      check(block.text !== '', `system.${i}: text content blocks must be non-empty`);
      checkCacheControl(block.cache_control, `system.${i}`);
    });
  }
  checkCacheControl(body.cache_control, 'body');
  if (body.stop_sequences !== undefined) {
    check(Array.isArray(body.stop_sequences), 'stop_sequences: Input should be a valid list');
    body.stop_sequences.forEach((seq: unknown, i) =>
      check(typeof seq === 'string' && seq.trim() !== '', `stop_sequences.${i}: each stop sequence must contain non-whitespace`),
    );
  }

  if (body.temperature !== undefined) {
    check(typeof body.temperature === 'number', 'temperature: Input should be a valid number');
    check(body.temperature >= 0 && body.temperature <= 1, 'temperature: Input should be between 0 and 1');
  }
  check(body.stream !== true, 'stream: streaming is not supported by the durable-inbox emulator');

  const toolNames = new Set<string>();
  if (body.tools !== undefined) {
    check(Array.isArray(body.tools), 'tools: Input should be a valid list');
    body.tools.forEach((tool: unknown, i) => {
      check(isObject(tool), `tools.${i}: Input should be a valid dictionary`);
      check(
        typeof tool.name === 'string' && TOOL_NAME.test(tool.name),
        `tools.${i}.name: String should match pattern '${TOOL_NAME.source}'`,
      );
      check(isObject(tool.input_schema), `tools.${i}.input_schema: Field required`);
      check(tool.input_schema.type === 'object', `tools.${i}.input_schema.type: Input should be 'object'`);
      // Tool definitions (tool-use docs): input_schema must be a valid JSON Schema, draft 2020-12.
      check(
        schemaChecker.validateSchema(tool.input_schema) === true,
        `tools.${i}.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12 (https://json-schema.org/draft/2020-12). ` +
          `Learn more about tool use at https://docs.claude.com/en/docs/tool-use. (${schemaChecker.errorsText(schemaChecker.errors)})`,
      );
      checkCacheControl(tool.cache_control, `tools.${i}.custom`);
      check(!toolNames.has(tool.name), 'tools: Tool names must be unique.');
      toolNames.add(tool.name);
    });
  }
  const breakpoints = cacheBreakpoints(body as unknown as MessagesRequest);
  check(
    breakpoints <= MAX_CACHE_BREAKPOINTS,
    `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints}.`,
  );

  if (body.tool_choice !== undefined) {
    const choice = body.tool_choice;
    check(isObject(choice), 'tool_choice: Input should be a valid dictionary');
    check(
      choice.type === 'auto' || choice.type === 'any' || choice.type === 'tool' || choice.type === 'none',
      "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'",
    );
    if (choice.type !== 'none' && choice.type !== 'auto') {
      check(toolNames.size > 0, 'tool_choice: tool_choice may only be specified while providing tools.');
    }
    if (choice.type === 'tool') {
      check(typeof choice.name === 'string', 'tool_choice.tool.name: Field required');
      check(toolNames.has(choice.name), `tool_choice: Tool '${choice.name}' not found in 'tools'`);
    }
    check(
      choice.disable_parallel_tool_use === undefined || typeof choice.disable_parallel_tool_use === 'boolean',
      `tool_choice.${String(choice.type)}.disable_parallel_tool_use: Input should be a valid boolean`,
    );
  }
  checkToolTurns(messages as MessageParam[], toolNames, opts);
  return body as unknown as MessagesRequest;
}

export function validateMessagesRequest(
  body: unknown,
  endpoint: Endpoint = 'create',
  opts: ValidationOptions = {},
): Validation {
  try {
    const request = checkRequest(body, endpoint, opts);
    // An unknown or retired model is 404 not_found_error (errors docs; models overview: retired
    // models fail every request).
    if (!usableModel(request.model)) {
      return { ok: false, status: 404, type: 'not_found_error', message: `model: ${request.model}` };
    }
    return { ok: true, request };
  } catch (err) {
    if (err instanceof Invalid) return { ok: false, status: 400, type: 'invalid_request_error', message: err.message };
    throw err;
  }
}

/** The system prompt as one string. */
export function systemText(request: MessagesRequest): string {
  if (request.system === undefined) return '';
  return typeof request.system === 'string' ? request.system : request.system.map((b) => b.text).join('\n');
}

/** The text of a message's content: text blocks, tool inputs and tool results. */
export function contentText(content: MessageParam['content']): string {
  if (typeof content === 'string') return content;
  return content
    .map((block) => {
      if (typeof block.text === 'string') return block.text;
      if (block.type === 'tool_use') return JSON.stringify(block.input ?? {});
      if (block.type === 'tool_result') {
        return typeof block.content === 'string'
          ? block.content
          : contentText((block.content ?? []) as MessageParam['content']);
      }
      return '';
    })
    .join('\n');
}
