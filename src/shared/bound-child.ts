// A child process that never outlives us: the Temporal dev server, the Temporal server and its Web UI.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { forEachLine } from './lines.js';

const DEFAULT_STOP_GRACE_MS = 10_000;

export interface BoundChild {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** Resolves once the child has exited (or failed to start). */
  exited: Promise<void>;
  /** The last lines of its output, for error messages. */
  outputTail(): string;
  /** SIGTERM to its process group, SIGKILL after the grace period; resolves once it has exited. */
  stop(): Promise<void>;
}

export interface BoundChildOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Each output line while running; after stop() output is only kept for outputTail(). */
  log?: (line: string) => void;
  /** Rewrites each output line before it is logged and kept (e.g. to shorten JSON logs). */
  formatLine?: (line: string) => string;
  /** Lines of output kept for outputTail() (default 40). */
  tailLines?: number;
  /** SIGTERM → SIGKILL delay in stop() (default 10 s). */
  stopGraceMs?: number;
}

/**
 * Spawns a child that dies with this process: in its own process group (Ctrl-C reaches us, and we
 * decide when to stop it; stop() signals the whole group, so nothing it forked survives), killed from
 * our 'exit' hook and default-action signals, and on Linux also by the kernel (setpriv --pdeathsig)
 * if we are SIGKILLed.
 */
export function spawnBoundToUs(command: string, args: string[], opts: BoundChildOptions = {}): BoundChild {
  const log = opts.log ?? (() => {});
  const tailLines = opts.tailLines ?? 40;
  const stopGraceMs = opts.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
  const setpriv =
    process.platform === 'linux' ? ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p)) : undefined;
  const spawnOptions = {
    stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: opts.env,
    cwd: opts.cwd,
  };
  // setpriv execs the command: same pid, and that pid leads the new process group.
  const child = setpriv
    ? spawn(setpriv, ['--pdeathsig', 'SIGTERM', '--', command, ...args], spawnOptions)
    : spawn(command, args, spawnOptions);

  const tail: string[] = [];
  let stopRequested = false;
  const format = opts.formatLine ?? ((line: string) => line);
  const onLine = (raw: string) => {
    if (!raw.trim()) return;
    const line = format(raw);
    tail.push(line);
    if (tail.length > tailLines) tail.shift();
    // Once we stop it, its internal clients complain about the closed ports: noise.
    if (!stopRequested) log(line);
  };
  forEachLine(child.stdout, onLine);
  forEachLine(child.stderr, onLine);

  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', (err) => {
      onLine(`failed to start ${command}: ${err.message}`);
      resolve();
    });
  });
  const isRunning = () => child.exitCode === null && child.signalCode === null && child.pid !== undefined;

  const signalGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // The group is gone already, or was never made (spawn failed): the child itself, if anything.
      if (isRunning()) child.kill(signal);
    }
  };
  const killNow = () => {
    if (isRunning()) signalGroup('SIGKILL');
  };
  // Only act on a signal when nobody else listens, i.e. when the default action (death) would have
  // applied: kill the child, then re-raise so we still die as expected. An app with its own handler
  // calls stop() itself.
  const signalHandlers = new Map<NodeJS.Signals, () => void>();
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const handler = () => {
      if (process.listenerCount(signal) > 1) return;
      killNow();
      detach();
      process.kill(process.pid, signal);
    };
    signalHandlers.set(signal, handler);
    process.on(signal, handler);
  }
  process.on('exit', killNow);
  const detach = () => {
    process.removeListener('exit', killNow);
    for (const [signal, handler] of signalHandlers) process.removeListener(signal, handler);
  };
  void exited.then(detach);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      if (isRunning()) {
        stopRequested = true;
        signalGroup('SIGTERM');
        const ac = new AbortController();
        const gaveUp = await Promise.race([
          exited.then(() => false),
          sleep(stopGraceMs, true, { signal: ac.signal }).catch(() => false),
        ]);
        ac.abort();
        if (gaveUp) killNow();
      }
      await exited;
      // Anything the child left behind in its group goes too (a no-op when the group is empty).
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // no such group: nothing left
        }
      }
      detach();
    })());

  return { child, exited, outputTail: () => tail.join('\n'), stop };
}
