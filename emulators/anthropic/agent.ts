// Multi-turn tool use: the unscripted default agent, and the checks a scripted turn must pass against the
// request (tool_choice, offered tools, stop sequences) before it is sent.
import { classify, toolInput, type EmailView } from './responder.js';
import type { ScriptToolCall, ScriptedTurn } from './script.js';
import type { MessageParam, MessagesRequest, ToolDefinition } from './validation.js';

const blocksOf = (message: MessageParam) => (typeof message.content === 'string' ? [] : message.content);

/** Whether the conversation already carries tool results, i.e. the caller has run a tool for us. */
export function hasToolResults(request: MessagesRequest): boolean {
  return request.messages.some((m) => m.role === 'user' && blocksOf(m).some((b) => b.type === 'tool_result'));
}

/** Whether any message holds tool_use or tool_result blocks: a multi-turn tool conversation. */
export function isToolConversation(request: MessagesRequest): boolean {
  return request.messages.some((m) => blocksOf(m).some((b) => b.type === 'tool_use' || b.type === 'tool_result'));
}

/** The turn a request asks for: how many assistant messages it already holds. */
export function turnOf(request: MessagesRequest): number {
  return request.messages.filter((m) => m.role === 'assistant').length;
}

/** Tools the default agent reads with first: `read_thread` above all, then other read-like names. */
const READ_LIKE = [/^read_thread$/i, /read_?thread|thread_?read/i, /^(read|get|fetch|load|search|list|find|lookup)/i];

export function readLikeTool(tools: ToolDefinition[] | undefined): ToolDefinition | undefined {
  for (const pattern of READ_LIKE) {
    const tool = tools?.find((t) => pattern.test(t.name));
    if (tool) return tool;
  }
  return undefined;
}

/**
 * The default agent's input for a tool: one that fits its schema (see toolInput), with top-level string
 * properties taken from the prompt when it names them, e.g. `thread_id: 18c2f0` fills `thread_id`.
 */
export function defaultToolInput(tool: ToolDefinition, promptText: string, email: EmailView): Record<string, unknown> {
  const base = toolInput(tool, classify(promptText, email));
  const input = (typeof base === 'object' && base !== null ? base : {}) as Record<string, unknown>;
  for (const [key, schema] of Object.entries(tool.input_schema.properties ?? {})) {
    if (schema.type !== 'string' || schema.enum) continue;
    const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const found = new RegExp(`\\b${escaped}\\b["']?\\s*[:=]\\s*["']?([^\\s"'<>,;]+)`, 'i').exec(promptText)?.[1];
    const value = found?.replace(/[.!?:)\]]+$/, '');
    if (value) input[key] = value;
  }
  return input;
}

/** A tool that writes a draft (its name says so, it takes a string `body`), if offered and not called yet. */
export function unusedDraftTool(request: MessagesRequest): ToolDefinition | undefined {
  const tool = (request.tools ?? []).find((t) => /draft/i.test(t.name) && t.input_schema.properties?.body?.type === 'string');
  if (!tool) return undefined;
  const called = request.messages.some((m) => m.role === 'assistant' && blocksOf(m).some((b) => b.type === 'tool_use' && b.name === tool.name));
  return called ? undefined : tool;
}

/**
 * Why a scripted turn cannot answer this request, as the emulator's own 400 text, or undefined when it
 * can. A real model obeys tool_choice and disable_parallel_tool_use and only calls offered tools; a script
 * that would break that is a mistake in the test, reported rather than answered.
 */
export function scriptConflict(
  name: string,
  turn: number,
  scripted: Exclude<ScriptedTurn, { kind: 'fault' } | { kind: 'error' }>,
  request: MessagesRequest,
): string | undefined {
  const where = `emulator: script '${name}' turn ${turn}`;
  const choice = request.tool_choice;
  // The classifiers may stop any turn, and a paused turn is the API's own doing.
  if (scripted.kind === 'refusal' || scripted.kind === 'pause') return undefined;
  if (scripted.kind === 'text') {
    if (choice?.type === 'any' || choice?.type === 'tool') {
      return `${where} answers with text, but tool_choice ${choice.type} requires a tool call`;
    }
    if (scripted.stopSequence !== undefined && !(request.stop_sequences ?? []).includes(scripted.stopSequence)) {
      return `${where} stops at ${JSON.stringify(scripted.stopSequence)}, which is not one of the request's stop_sequences`;
    }
    return undefined;
  }
  if (choice?.type === 'none') return `${where} calls tools, but tool_choice is none`;
  const offered = new Set((request.tools ?? []).map((t) => t.name));
  const unknown = scripted.toolCalls.find((c: ScriptToolCall) => !offered.has(c.name) && !c.allowUnknownTool);
  if (unknown) {
    return `${where} calls '${unknown.name}', which is not in 'tools' (set allowUnknownTool to call it anyway)`;
  }
  if (choice?.type === 'tool' && scripted.toolCalls.some((c) => c.name !== choice.name)) {
    return `${where} calls a tool other than '${choice.name}', which tool_choice forces`;
  }
  if (
    choice !== undefined &&
    'disable_parallel_tool_use' in choice &&
    choice.disable_parallel_tool_use === true &&
    scripted.toolCalls.length > 1
  ) {
    return `${where} makes ${scripted.toolCalls.length} tool calls, but tool_choice.disable_parallel_tool_use is set`;
  }
  return undefined;
}
