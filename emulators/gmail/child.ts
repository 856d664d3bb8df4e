// Run the standalone emulator as a child process (its own event loop and core), e.g. for
// benchmarks or a dev mode that keeps the app and the emulator apart. Flags are main.ts's.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { EmulatorControlClient } from './control-client.js';

export interface ChildEmulatorDetails {
  url: string;
  gmailRootUrl: string;
  tokenUrl: string;
  authUrl: string;
  pemCertsUrl: string;
  controlUrl: string;
  email: string;
  clientId: string;
  clientSecret: string;
  refreshToken: string;
  messages: number;
  historyId: string;
  quota: string;
}

export interface ChildGmailEmulator {
  url: string;
  details: ChildEmulatorDetails;
  control: EmulatorControlClient;
  close(): Promise<void>;
}

const mainScript = fileURLToPath(new URL('./main.ts', import.meta.url));

/** Spawns `main.ts --json --port 0 ...flags` under tsx and waits for its connection details. */
export async function spawnGmailEmulator(flags: string[] = []): Promise<ChildGmailEmulator> {
  const child = spawn(process.execPath, ['--import', 'tsx', mainScript, '--json', ...(flags.includes('--port') ? [] : ['--port', '0']), ...flags], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const first = await Promise.race([
    once(child.stdout, 'data').then(([chunk]) => (chunk as Buffer).toString()),
    once(child, 'exit').then(([code]) => {
      throw new Error(`gmail emulator exited with ${String(code)}: ${stderr.trim()}`);
    }),
  ]);
  const details = JSON.parse(first.split('\n')[0] ?? '') as ChildEmulatorDetails;
  return {
    url: details.url,
    details,
    control: new EmulatorControlClient(details.url),
    close: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
