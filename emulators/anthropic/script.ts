// Scripted conversations: a test says what the "model" does turn by turn, e.g. "call search_mailbox
// with {query: 'from:ann'}, then write_draft with {...}, then end with 'done'".
//
// A script is registered under a name and applies to every conversation whose system prompt or first
// user message carries the marker `[emulator:script=<name>]` (scriptMarker(name)). The turn a request
// asks for is the number of assistant messages already in it, so a turn's answer depends only on the
// conversation (a retried call gets the same answer), and concurrent tests that use different names
// cannot see each other's scripts. Fault steps count their failures per script and turn. A script
// registered `forTool` answers only the requests that offer that tool: other calls whose prompt
// carries the marker (the marker may sit in mail text that several calls read) are answered as
// without a script.
import { z } from 'zod';

const NAME = /^[A-Za-z0-9_.:-]{1,100}$/;

const ToolCallSchema = z
  .object({
    /** The tool to call; must be one of the request's tools unless allowUnknownTool is set. */
    name: z.string().min(1),
    /** Sent as is, not checked against the tool's input_schema: script invalid input on purpose. */
    input: z.record(z.string(), z.unknown()).default({}),
    /** Call a tool the request does not offer (the real API never does; only for tests of the caller). */
    allowUnknownTool: z.boolean().optional(),
  })
  .strict();

const FAULTS = ['rate-limit', 'overloaded', 'server-error'] as const;
/** RefusalStopDetails.category values (@anthropic-ai/sdk messages.d.ts). */
export const REFUSAL_CATEGORIES = ['cyber', 'bio', 'frontier_llm', 'reasoning_extraction', 'general_harms'] as const;
export type RefusalCategory = (typeof REFUSAL_CATEGORIES)[number];

export const ScriptStepSchema = z.union([
  z
    .object({
      /** Text before the tool calls, like "Let me look that up." */
      text: z.string().min(1).optional(),
      /** One or more calls in this turn; stop_reason `tool_use`. */
      toolCalls: z.array(ToolCallSchema).min(1),
    })
    .strict(),
  z
    .object({
      /** The final text; stop_reason `end_turn` (or `max_tokens` when it exceeds the request's max_tokens). */
      text: z.string().min(1),
      /** Ends with stop_reason `stop_sequence` and this stop_sequence; must be one of the request's. */
      stopSequence: z.string().min(1).optional(),
    })
    .strict(),
  z
    .object({
      /** stop_reason `refusal` with stop_details (handling-stop-reasons); optional text said before stopping. */
      refusal: z.literal(true),
      text: z.string().min(1).optional(),
      category: z.enum(REFUSAL_CATEGORIES).nullable().optional(),
      explanation: z.string().min(1).optional(),
    })
    .strict(),
  z
    .object({
      /** stop_reason `pause_turn`: the turn is paused; the caller sends this content back to continue it. */
      pause: z.literal(true),
      text: z.string().min(1).optional(),
    })
    .strict(),
  z
    .object({
      /** The turn fails with this fault `times` times (default 1), then the next step answers it. */
      fault: z.enum(FAULTS),
      times: z.number().int().min(1).max(1000).optional(),
    })
    .strict(),
]);

export const ScriptSchema = z
  .object({
    name: z.string().regex(NAME, 'name: 1-100 characters of A-Z a-z 0-9 _ . : -'),
    steps: z.array(ScriptStepSchema).min(1),
    /** Only requests that offer this tool follow the script; the others are answered as without one. */
    forTool: z.string().min(1).max(200).optional(),
  })
  .strict();

export interface ScriptOptions {
  /** Only requests that offer this tool follow the script; the others are answered as without one. */
  forTool?: string;
}

export type ScriptStep = z.input<typeof ScriptStepSchema>;
export type ScriptToolCall = z.output<typeof ToolCallSchema>;
export type ScriptFault = (typeof FAULTS)[number];
type ParsedStep = z.output<typeof ScriptStepSchema>;

/** What a scripted turn answers: a fault, tool calls (with optional text), or final text. */
export type ScriptedTurn =
  | { kind: 'fault'; fault: ScriptFault }
  | { kind: 'tools'; text?: string; toolCalls: ScriptToolCall[] }
  | { kind: 'text'; text: string; stopSequence?: string }
  | { kind: 'refusal'; text?: string; category: RefusalCategory | null; explanation?: string }
  | { kind: 'pause'; text?: string }
  | { kind: 'error'; message: string };

export const scriptMarker = (name: string) => `[emulator:script=${name}]`;
const MARKER = /\[emulator:script=([A-Za-z0-9_.:-]{1,100})\]/;

/** The script name a conversation asks for, from its system prompt or first user message. */
export function scriptNameIn(systemText: string, firstUserText: string): string | undefined {
  return MARKER.exec(systemText)?.[1] ?? MARKER.exec(firstUserText)?.[1];
}

interface Registered {
  steps: ParsedStep[];
  forTool?: string;
  /** Faults served, by turn and step index. */
  failures: Map<string, number>;
  /** Requests answered from this script, faults included. */
  calls: number;
}

export interface ScriptStatus {
  name: string;
  steps: number;
  calls: number;
  forTool?: string;
}

export class ScriptBook {
  private readonly scripts = new Map<string, Registered>();

  /** Registers (or replaces) a script; throws a one-line Error for an invalid one. Returns its marker. */
  register(name: string, steps: unknown, options: ScriptOptions = {}): string {
    const parsed = ScriptSchema.safeParse({ name, steps, ...(options.forTool !== undefined ? { forTool: options.forTool } : {}) });
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new Error(`${issue.path.join('.') || 'script'}: ${issue.message}`);
    }
    if ('fault' in parsed.data.steps.at(-1)!) {
      throw new Error('steps: a fault step must be followed by the step that answers its turn');
    }
    this.scripts.set(name, { steps: parsed.data.steps, ...(parsed.data.forTool ? { forTool: parsed.data.forTool } : {}), failures: new Map(), calls: 0 });
    return scriptMarker(name);
  }

  remove(name: string): boolean {
    return this.scripts.delete(name);
  }

  clear(): void {
    this.scripts.clear();
  }

  list(): ScriptStatus[] {
    return [...this.scripts].map(([name, s]) => ({ name, steps: s.steps.length, calls: s.calls, ...(s.forTool ? { forTool: s.forTool } : {}) }));
  }

  /** Whether a request offering `tools` follows script `name` (an unknown name does: its call is the error). */
  appliesTo(name: string, tools: readonly string[]): boolean {
    const forTool = this.scripts.get(name)?.forTool;
    return forTool === undefined || tools.includes(forTool);
  }

  /** Zeroes fault counters and call counts; the scripts stay registered. */
  resetCounters(): void {
    for (const s of this.scripts.values()) {
      s.failures.clear();
      s.calls = 0;
    }
  }

  /**
   * The answer for turn `turn` (0-based: the number of assistant messages in the request) of a
   * conversation following script `name`. Fault steps belong to the answer step after them.
   */
  next(name: string, turn: number): ScriptedTurn {
    const script = this.scripts.get(name);
    if (!script) return { kind: 'error', message: `emulator: no script named '${name}' is registered` };
    script.calls++;
    let answers = -1;
    let firstOfTurn = 0;
    for (let i = 0; i < script.steps.length; i++) {
      const step = script.steps[i]!;
      if ('fault' in step) continue;
      answers++;
      if (answers === turn) {
        for (let f = firstOfTurn; f < i; f++) {
          const fault = script.steps[f] as Extract<ParsedStep, { fault: string }>;
          const key = `${turn}:${f}`;
          const served = script.failures.get(key) ?? 0;
          if (served < (fault.times ?? 1)) {
            script.failures.set(key, served + 1);
            return { kind: 'fault', fault: fault.fault };
          }
        }
        if ('toolCalls' in step) return { kind: 'tools', text: step.text, toolCalls: step.toolCalls };
        if ('refusal' in step) return { kind: 'refusal', text: step.text, category: step.category ?? null, explanation: step.explanation };
        if ('pause' in step) return { kind: 'pause', text: step.text };
        return { kind: 'text', text: step.text, stopSequence: step.stopSequence };
      }
      firstOfTurn = i + 1;
    }
    return {
      kind: 'error',
      message: `emulator: script '${name}' has no step for turn ${turn} (it answers ${answers + 1} turns)`,
    };
  }
}
