// The start-up retry: errors of a server that is not ready yet are retried (a log line each) until
// the overall wait is over; any other error fails at once. The Temporal call is the unit's input,
// so it stands in here (ensureSchedules against a late dev server: test/schedules).
import { describe, expect, it } from 'vitest';
import type { Connection } from '@temporalio/client';
import { serverNotReady, untilServerReady } from '../../src/temporal/not-ready-retry.js';

/** An error as @grpc/grpc-js raises it (what isGrpcServiceError recognises). */
const grpcError = (code: number, message: string) => Object.assign(new Error(message), { code, details: message, metadata: {} });

const deadlines: number[] = [];
const connection: Pick<Connection, 'withDeadline'> = {
  withDeadline: <T>(deadline: number | Date, fn: () => Promise<T>) => {
    deadlines.push(Number(deadline));
    return fn();
  },
};

describe('untilServerReady', () => {
  it('retries UNAVAILABLE and DEADLINE_EXCEEDED (also as a cause), each try bounded, with a log line per retry', async () => {
    const failures = [grpcError(14, 'connect ECONNREFUSED'), new Error('schedule call failed', { cause: grpcError(4, 'Deadline exceeded') })];
    const logs: string[] = [];
    deadlines.length = 0;
    const startedAt = Date.now();
    const result = await untilServerReady(connection, 'schedule retention', async () => {
      const failure = failures.shift();
      if (failure) throw failure;
      return 'created';
    }, { waitMs: 10_000, attemptMs: 2_000, log: (m) => logs.push(m) });
    expect(result).toBe('created');
    expect(logs).toHaveLength(2);
    expect(logs[0]).toMatch(/^schedule retention: the Temporal server is not ready \(connect ECONNREFUSED\); trying again in 500 ms \(try 1\)$/);
    expect(logs[1]).toMatch(/trying again in 1000 ms \(try 2\)$/);
    expect(deadlines).toHaveLength(3);
    for (const d of deadlines) expect(d - startedAt).toBeLessThanOrEqual(2_000 + (Date.now() - startedAt));
  });

  it('fails at once on an error waiting cannot fix', async () => {
    let calls = 0;
    const refused = grpcError(7, 'permission denied');
    await expect(untilServerReady(connection, 'x', async () => {
      calls++;
      throw refused;
    }, { waitMs: 10_000 })).rejects.toBe(refused);
    expect(calls).toBe(1);
    expect(serverNotReady(new Error('not from gRPC'))).toBe(false);
  });

  it('gives up with the last error once the wait is over', async () => {
    let calls = 0;
    await expect(untilServerReady(connection, 'x', async () => {
      calls++;
      throw grpcError(14, 'still down');
    }, { waitMs: 600 })).rejects.toThrow('still down');
    expect(calls).toBeGreaterThanOrEqual(2);
  });
});
