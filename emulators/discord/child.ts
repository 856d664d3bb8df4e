// Run the standalone Discord emulator as a child process (its own event loop), e.g. for benchmarks.
// Flags are main.ts's; the first webhook's URL is read from its output.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { DiscordControlClient } from './control-client.js';

export interface ChildDiscordEmulator {
  url: string;
  /** The URL of the webhook created at start. */
  webhookUrl: string;
  control: DiscordControlClient;
  close(): Promise<void>;
}

const mainScript = fileURLToPath(new URL('./main.ts', import.meta.url));
const LISTENING = /listening on (http:\/\/\S+)/;
const WEBHOOK = /webhook URL: (http:\/\/\S+)/;

/** Spawns `main.ts --port 0 ...flags` under tsx and waits until it listens. */
export async function spawnDiscordEmulator(flags: string[] = []): Promise<ChildDiscordEmulator> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', mainScript, ...(flags.includes('--port') ? [] : ['--port', '0']), ...flags],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let stdout = '';
  const [url, webhookUrl] = await new Promise<[string, string]>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const base = LISTENING.exec(stdout)?.[1];
      const hook = WEBHOOK.exec(stdout)?.[1];
      if (base && hook) resolve([base, hook]);
    });
    child.once('exit', (code) => reject(new Error(`discord emulator exited with ${String(code)}: ${stderr.trim()}`)));
  });
  return {
    url,
    webhookUrl,
    control: new DiscordControlClient(url),
    close: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
