// Prompt caching as the docs describe it (platform.claude.com/docs/en/build-with-claude/prompt-caching):
// the prompt is read in the order tools → system → messages; each cache_control breakpoint (or the
// top-level one, which marks the last block) caches the prefix up to it for its TTL (5m default, 1h);
// a request reads the longest cached prefix, looking back up to 20 blocks before each breakpoint, and
// writes the prefixes of the breakpoints after it. A prefix shorter than the model's minimum cacheable
// length caches nothing, without an error. Any change before a breakpoint misses it.
import { createHash } from 'node:crypto';
import type { MessageParam, MessagesRequest } from './validation.js';

/** How far back from a breakpoint the cache looks for an earlier cached prefix. */
const LOOKBACK_BLOCKS = 20;
const TTL_MS = { '5m': 5 * 60_000, '1h': 60 * 60_000 } as const;
type Ttl = keyof typeof TTL_MS;

export interface CacheUsage {
  /** Input tokens neither read from nor written to the cache. */
  input: number;
  read: number;
  creation: number;
  creation5m: number;
  creation1h: number;
}

/** A position in the prompt: a tool, a system block, or a block of a message (-1: a string content). */
type Slot = { where: 'tools'; i: number } | { where: 'system'; i: number } | { where: 'messages'; i: number; j: number };

interface Breakpoint {
  at: number;
  ttl: Ttl;
}

const stripped = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value, (key, v: unknown) => (key === 'cache_control' ? undefined : v)));

function slotsOf(request: MessagesRequest): Slot[] {
  const slots: Slot[] = [];
  (request.tools ?? []).forEach((_t, i) => slots.push({ where: 'tools', i }));
  if (typeof request.system === 'string' && request.system !== '') slots.push({ where: 'system', i: 0 });
  if (Array.isArray(request.system)) request.system.forEach((_b, i) => slots.push({ where: 'system', i }));
  request.messages.forEach((m, i) => {
    if (typeof m.content === 'string') slots.push({ where: 'messages', i, j: -1 });
    else m.content.forEach((_b, j) => slots.push({ where: 'messages', i, j }));
  });
  return slots;
}

/** The request cut just after `slot`: what a breakpoint there caches. */
function prefixOf(request: MessagesRequest, slot: Slot): MessagesRequest {
  const base = { model: request.model, max_tokens: request.max_tokens };
  if (slot.where === 'tools') return { ...base, tools: request.tools!.slice(0, slot.i + 1), messages: [] };
  if (slot.where === 'system') {
    const system = typeof request.system === 'string' ? request.system : request.system!.slice(0, slot.i + 1);
    return { ...base, tools: request.tools, system, messages: [] };
  }
  const message = request.messages[slot.i]!;
  const cut: MessageParam = slot.j < 0 ? message : { role: message.role, content: (message.content as Exclude<MessageParam['content'], string>).slice(0, slot.j + 1) };
  return { ...base, tools: request.tools, system: request.system, messages: [...request.messages.slice(0, slot.i), cut] };
}

function cacheControlAt(request: MessagesRequest, slot: Slot): { ttl?: string } | undefined {
  const block: unknown =
    slot.where === 'tools'
      ? request.tools![slot.i]
      : slot.where === 'system'
        ? (Array.isArray(request.system) ? request.system[slot.i] : undefined)
        : slot.j < 0
          ? undefined
          : (request.messages[slot.i]!.content as unknown[])[slot.j];
  const control = (block as { cache_control?: { ttl?: string } | null } | undefined)?.cache_control;
  return control ?? undefined;
}

export class PromptCache {
  private readonly entries = new Map<string, number>();

  /**
   * What a request reads from and writes to the cache, given its total input tokens and how the
   * emulator counts the tokens of a (prefix) request.
   */
  account(request: MessagesRequest, total: number, minTokens: number, tokensOf: (r: MessagesRequest) => number, now = Date.now()): CacheUsage {
    const none: CacheUsage = { input: total, read: 0, creation: 0, creation5m: 0, creation1h: 0 };
    const slots = slotsOf(request);
    const breakpoints: Breakpoint[] = [];
    slots.forEach((slot, at) => {
      const control = cacheControlAt(request, slot);
      if (control) breakpoints.push({ at, ttl: control.ttl === '1h' ? '1h' : '5m' });
    });
    if (request.cache_control && slots.length > 0) {
      // Automatic caching: the breakpoint goes on the last block.
      const ttl: Ttl = request.cache_control.ttl === '1h' ? '1h' : '5m';
      if (!breakpoints.some((b) => b.at === slots.length - 1)) breakpoints.push({ at: slots.length - 1, ttl });
    }
    if (breakpoints.length === 0) return none;
    breakpoints.sort((a, b) => a.at - b.at);

    const keys = new Map<number, string>();
    const keyAt = (at: number) => {
      let key = keys.get(at);
      if (key === undefined) {
        key = createHash('sha256').update(JSON.stringify(stripped({ ...prefixOf(request, slots[at]!), max_tokens: undefined }))).digest('hex');
        keys.set(at, key);
      }
      return key;
    };
    const tokensAt = (at: number) => tokensOf(prefixOf(request, slots[at]!));
    const live = (at: number) => (this.entries.get(keyAt(at)) ?? 0) > now;

    // The longest cached prefix at or before a breakpoint, within the lookback.
    let readAt = -1;
    for (const b of breakpoints) {
      for (let at = b.at; at >= Math.max(0, b.at - LOOKBACK_BLOCKS); at--) {
        if (at <= readAt) break;
        if (live(at)) {
          readAt = at;
          break;
        }
      }
    }
    const read = readAt >= 0 ? Math.min(total, tokensAt(readAt)) : 0;
    if (readAt >= 0) {
      const ttl = breakpoints.find((b) => b.at >= readAt)?.ttl ?? '5m';
      this.entries.set(keyAt(readAt), now + TTL_MS[ttl]); // a hit refreshes the entry
    }

    const usage: CacheUsage = { ...none, read };
    let covered = read;
    for (const b of breakpoints) {
      if (b.at <= readAt) continue;
      const tokens = Math.min(total, tokensAt(b.at));
      if (tokens < minTokens) continue;
      this.entries.set(keyAt(b.at), now + TTL_MS[b.ttl]);
      const written = Math.max(0, tokens - covered);
      covered = Math.max(covered, tokens);
      usage.creation += written;
      if (b.ttl === '1h') usage.creation1h += written;
      else usage.creation5m += written;
    }
    usage.input = Math.max(0, total - usage.read - usage.creation);
    return usage;
  }

  clear(): void {
    this.entries.clear();
  }
}
