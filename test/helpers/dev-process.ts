// `npm run dev` as a user runs it, for the tests that start it (test/dev/dev-command.test.ts,
// test/dev/dev-restart.test.ts): on free ports and a data directory of the test's own, its output
// kept; up when it says it is running; Ctrl-C, and its exit code.
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { expect } from 'vitest';
import { freePort } from '../../src/shared/free-port.js';
import { nodeEntryArgs } from '../../src/shared/node-entry.js';
import { waitUntil } from './wait-until.js';

export const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

/** Free ports for everything `npm run dev` listens on. */
export async function devPorts() {
  return {
    temporal: await freePort(),
    ui: await freePort(),
    codec: await freePort(),
    http: await freePort(),
    gmail: await freePort(),
    anthropic: await freePort(),
    discord: await freePort(),
    sdkMetrics: await freePort(),
  };
}

export type DevPorts = Awaited<ReturnType<typeof devPorts>>;

export type RunningDev = Awaited<ReturnType<typeof startDev>>;

/** `npm run dev` as a user starts it, on these ports and this data directory (untilRunning: until it says it is running). */
export async function startDev(
  dataDir: string,
  ports: DevPorts,
  demoMessages: number,
  databaseUrl: string,
  logLevel = 'warn',
  args: string[] = [],
) {
  const child = spawn(process.execPath, [...nodeEntryArgs('src/dev/main.ts'), ...args], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal}`,
      TEMPORAL_UI_PORT: String(ports.ui),
      CODEC_SERVER_PORT: String(ports.codec),
      HTTP_PORT: String(ports.http),
      GMAIL_EMULATOR_PORT: String(ports.gmail),
      ANTHROPIC_EMULATOR_PORT: String(ports.anthropic),
      DISCORD_EMULATOR_PORT: String(ports.discord),
      TEMPORAL_METRICS_PORT: String(ports.sdkMetrics),
      DEMO_MAILBOX_MESSAGES: String(demoMessages),
      LOG_LEVEL: process.env['DEV_TEST_LOG_LEVEL'] ?? logLevel,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const dev = {
    child,
    output: '',
    exited: new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))),
  };
  child.stdout.on('data', (d: Buffer) => (dev.output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (dev.output += d.toString()));
  return dev;
}

/**
 * Runs `use` on a started `npm run dev`, then Ctrl-C. A failure of `use` is the test's error (the
 * exit code of a process stopped mid-way must not hide it); otherwise the exit code must be 0.
 */
export async function whileRunning(dev: RunningDev, use: () => Promise<void>): Promise<void> {
  let failure: unknown;
  try {
    await use();
  } catch (err) {
    failure = err;
  }
  const code = await stopDev(dev);
  if (failure) throw failure;
  expect(code, dev.output.slice(-2000)).toBe(0);
}

export async function untilRunning(dev: RunningDev, what: string): Promise<void> {
  await waitUntil(
    `${what}: dev up`,
    async () => {
      if (dev.child.exitCode !== null) throw new Error(`dev exited:\n${dev.output.slice(-3000)}`);
      return dev.output.includes('durable-inbox is running');
    },
    // With --imap it starts Dovecot and Postfix and connects their demo mailbox too: on a loaded CI
    // machine (2026-11-28) a second start took over 90 s.
    { timeoutMs: 180_000, everyMs: 250 },
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${dev.output.slice(-3000)}`);
  });
}

/** Ctrl-C; the exit code (SIGKILL after 45 s without one). */
export async function stopDev(dev: RunningDev): Promise<number | null | 'hung'> {
  dev.child.kill('SIGINT');
  let deadline: NodeJS.Timeout | undefined;
  const code = await Promise.race([dev.exited, new Promise<'hung'>((r) => (deadline = setTimeout(() => r('hung'), 45_000)))]);
  clearTimeout(deadline);
  if (code === 'hung') dev.child.kill('SIGKILL');
  return code;
}
