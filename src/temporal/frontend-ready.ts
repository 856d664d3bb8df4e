// Waiting for a Temporal server we started to answer on its frontend: the dev server and the real
// server both poll it with a fresh lazy connection per try (a failed Connection.connect leaves its
// channel redialling), and give up early when the process exits.
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection, type TLSConfig } from '@temporalio/client';
import type { BoundChild } from '../shared/bound-child.js';

export async function untilFrontendAnswers(opts: {
  address: string;
  /** With mTLS: our CA and client certificate. */
  tls?: TLSConfig | null;
  server: BoundChild;
  /** How the error messages name the server ("Temporal dev server"). */
  what: string;
  timeoutMs: number;
  everyMs: number;
  /** The call that must succeed. */
  probe: (connection: Connection) => Promise<unknown>;
  /** The error to throw (default Error). */
  error?: (message: string) => Error;
}): Promise<void> {
  const { address, server, what } = opts;
  const fail = opts.error ?? ((message: string) => new Error(message));
  const deadline = Date.now() + opts.timeoutMs;
  let exited = false;
  void server.exited.then(() => (exited = true));
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (exited) throw fail(`${what} exited during start-up:\n${server.outputTail()}`);
    const connection = Connection.lazy({ address, connectTimeout: 1_000, ...(opts.tls ? { tls: opts.tls } : {}) });
    try {
      await connection.withDeadline(Date.now() + 2_000, () => opts.probe(connection));
      return;
    } catch (err) {
      lastError = err;
    } finally {
      await connection.close();
    }
    await sleep(opts.everyMs);
  }
  throw fail(`${what} did not answer on ${address} within ${opts.timeoutMs / 1000}s (${String(lastError)}):\n${server.outputTail()}`);
}
