// A local Anthropic Messages API for tests, the benchmark and demo mode: the real @anthropic-ai/sdk
// reaches it through `new Anthropic({ apiKey, baseURL: emulator.url })`.
//
// Deterministic from the email in the prompt (see responder.ts): classification by keywords of the newest
// message, drafts that quote the subject and echo rework instructions ("Revised as asked: ..."). Test
// markers in the newest email: [emulator:invalid-output], [emulator:overloaded] (529),
// [emulator:rate-limit] (429 with retry-after), [emulator:server-error] (500), each optionally with a
// count, e.g. [emulator:rate-limit:2] fails only the first two calls. [emulator:category=X] anywhere in
// the prompt forces category X. Multi-turn tool use: tool_use / tool_result turns are validated as the
// API does; an unscripted conversation offering tools calls a read-like tool first, then answers; a
// script (see script.ts and docs/anthropic-emulator.md) decides turn by turn for conversations carrying
// `[emulator:script=<name>]`. Control API: GET /__emulator/metrics, GET|POST /__emulator/config,
// POST /__emulator/reset, GET|POST|DELETE /__emulator/scripts, DELETE /__emulator/scripts/<name>.
import { applyPatch, DEFAULT_CONFIG, type EmulatorConfig, type EmulatorConfigPatch } from './config.js';
import type { ScriptOptions, ScriptStatus, ScriptStep } from './script.js';
import { AnthropicEmulatorServer, type CapturedRequest, type EmulatorMetrics, type UsageCounts } from './server.js';

export type { CapturedRequest, EmulatorConfig, EmulatorConfigPatch, EmulatorMetrics, ScriptOptions, ScriptStatus, ScriptStep, UsageCounts };
export { scriptMarker } from './script.js';
export type { ErrorRates } from './config.js';

export interface AnthropicEmulatorOptions extends EmulatorConfigPatch {
  /** 0 or omitted: a free port. */
  port?: number;
}

export interface AnthropicEmulator {
  /** The baseURL for the SDK, e.g. http://127.0.0.1:8236 (no /v1). */
  url: string;
  port: number;
  close(): Promise<void>;
  metrics(): EmulatorMetrics;
  /** The last valid /v1/messages body received and its counted input tokens. */
  lastRequest(): CapturedRequest | null;
  /** The last 200 valid /v1/messages bodies, oldest first (reset() empties it). */
  recentRequests(): CapturedRequest[];
  config(): EmulatorConfig;
  /** Changes switches at run time; throws on an invalid value. */
  configure(patch: EmulatorConfigPatch): EmulatorConfig;
  /** Zeroes metrics, marker and script fault counters and request numbering; keeps config and scripts. */
  reset(): void;
  /** Ends every Message Batch in progress now (its requests answered); resolves to how many ended. */
  endBatches(): Promise<number>;
  /** The next `times` (default 1) results downloads drop the connection after `afterLines` lines (POST /__emulator/batches/cut-results). */
  cutBatchResults(afterLines: number, times?: number): void;
  /**
   * Registers (or replaces) a script for the conversations whose system prompt or first user message
   * carries the returned marker, `[emulator:script=<name>]`; with `forTool`, only the requests that
   * offer that tool (the others are answered as without a script). Throws on an invalid script.
   */
  script(name: string, steps: ScriptStep[], options?: ScriptOptions): string;
  removeScript(name: string): boolean;
  clearScripts(): void;
  scripts(): ScriptStatus[];
}

export async function startAnthropicEmulator(opts: AnthropicEmulatorOptions = {}): Promise<AnthropicEmulator> {
  const { port = 0, ...patch } = opts;
  const server = new AnthropicEmulatorServer(applyPatch(DEFAULT_CONFIG, patch));
  const boundPort = await server.listen(port);
  return {
    url: `http://127.0.0.1:${boundPort}`,
    port: boundPort,
    close: () => server.close(),
    metrics: () => server.metrics(),
    lastRequest: () => server.metrics().lastRequest,
    recentRequests: () => server.recentRequests(),
    config: () => server.getConfig(),
    configure: (p) => server.configure(p),
    reset: () => server.reset(),
    endBatches: () => server.endBatches(),
    cutBatchResults: (afterLines, times) => server.cutBatchResults(afterLines, times),
    script: (name, steps, options) => server.script(name, steps, options),
    removeScript: (name) => server.removeScript(name),
    clearScripts: () => server.clearScripts(),
    scripts: () => server.scripts(),
  };
}
export { spawnAnthropicEmulator, type ChildAnthropicEmulator } from './child.js';
