// Readiness: a server is up when it greets a client (IMAP "* OK", SMTP "220"), not after a while.
import { connect } from 'node:net';
import type { BoundChild } from '../src/shared/bound-child.js';

/** The first line a TCP server sends on 127.0.0.1:port, or an error (refused, closed, timeout). */
export function readGreeting(port: number, timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let buffered = '';
    const done = (err: Error | undefined, line?: string) => {
      socket.destroy();
      if (err) reject(err);
      else resolve(line ?? '');
    };
    socket.setTimeout(timeoutMs, () => done(new Error(`no greeting on port ${port} within ${timeoutMs} ms`)));
    socket.on('error', (err) => done(err));
    socket.on('close', () => done(new Error(`port ${port} closed before greeting`)));
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      const end = buffered.indexOf('\n');
      if (end >= 0) done(undefined, buffered.slice(0, end).trimEnd());
    });
  });
}

/**
 * Waits until the server on `port` greets with a line starting with `expected`; fails at once,
 * with the server's last output, if its process exits first.
 */
export async function waitForGreeting(
  name: string,
  server: BoundChild,
  port: number,
  expected: string,
  timeoutMs = 30_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void server.exited.then(() => (exited = true));
  let last = '';
  for (;;) {
    if (exited) throw new Error(`${name} exited before it answered on 127.0.0.1:${port}:\n${server.outputTail()}`);
    try {
      const line = await readGreeting(port);
      if (line.startsWith(expected)) return line;
      last = `greeted with "${line}"`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${name} did not greet on 127.0.0.1:${port} within ${timeoutMs} ms (${last}):\n${server.outputTail()}`,
      );
    }
    // Between connection attempts only; readiness is the greeting itself.
    await Promise.race([new Promise((r) => setTimeout(r, 50)), server.exited]);
  }
}
