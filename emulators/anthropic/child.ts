// Run the standalone Anthropic emulator as a child process (its own event loop and core), e.g. for
// benchmarks, where it must not share the workers' thread. Flags are main.ts's.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { ScriptStep } from './script.js';
import type { EmulatorMetrics } from './server.js';

export interface ChildAnthropicEmulator {
  url: string;
  metrics(): Promise<EmulatorMetrics>;
  /** POST /__emulator/scripts; resolves to the marker. */
  script(name: string, steps: ScriptStep[]): Promise<string>;
  close(): Promise<void>;
}

const mainScript = fileURLToPath(new URL('./main.ts', import.meta.url));
const LISTENING = /listening on (http:\/\/\S+)/;

/** Spawns `main.ts --port 0 ...flags` under tsx and waits until it listens. */
export async function spawnAnthropicEmulator(flags: string[] = []): Promise<ChildAnthropicEmulator> {
  const child = spawn(process.execPath, ['--import', 'tsx', mainScript, ...(flags.includes('--port') ? [] : ['--port', '0']), ...flags], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let stdout = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const found = LISTENING.exec(stdout)?.[1];
      if (found) resolve(found);
    });
    child.once('exit', (code) => reject(new Error(`anthropic emulator exited with ${String(code)}: ${stderr.trim()}`)));
  });
  return {
    url,
    async metrics() {
      const response = await fetch(`${url}/__emulator/metrics`);
      if (!response.ok) throw new Error(`anthropic emulator metrics: HTTP ${response.status}`);
      return (await response.json()) as EmulatorMetrics;
    },
    async script(name, steps) {
      const response = await fetch(`${url}/__emulator/scripts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name, steps }),
      });
      const body = (await response.json()) as { marker?: string; error?: { message: string } };
      if (!response.ok) throw new Error(`anthropic emulator script: ${body.error?.message ?? response.status}`);
      return body.marker!;
    },
    close: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
