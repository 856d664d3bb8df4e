// A worker process run alone (`tsx src/workers/llm-worker.ts`) is scrapable: our metrics on
// METRICS_PORT, the Temporal SDK's on TEMPORAL_METRICS_PORT. With both ports taken it logs why
// and works anyway (several workers on one host would otherwise stop each other).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { expect, inject, it } from 'vitest';
import { freePort } from '../../src/shared/free-port.js';
import { waitUntil } from '../helpers/wait-until.js';

function startWorker(ports: { metrics: number; sdk: number }) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/workers/llm-worker.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: inject('databaseUrl'),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      ANTHROPIC_API_KEY: 'test-key',
      LLM_TASK_QUEUE: `worker-metrics-${randomUUID().slice(0, 8)}`,
      METRICS_PORT: String(ports.metrics),
      TEMPORAL_METRICS_PORT: String(ports.sdk),
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

async function scrape(port: number): Promise<string | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    return res.ok ? await res.text() : undefined;
  } catch {
    return undefined;
  }
}

it('serves our metrics and the SDK metrics on their ports, and runs without them when the ports are taken', async () => {
  const ports = { metrics: await freePort(), sdk: await freePort() };
  const worker = startWorker(ports);
  try {
    const ours = await waitUntil('our /metrics', () => scrape(ports.metrics), { timeoutMs: 60_000, everyMs: 250 });
    expect(ours).toContain('# TYPE durable_inbox_llm_calls_total counter');
    // The gauges read from PostgreSQL at scrape time were read.
    expect(ours).toContain('# TYPE durable_inbox_accounts gauge');
    expect(ours).toMatch(/^durable_inbox_metrics_scrape_errors 0$/m);
    const sdk = await waitUntil('the SDK /metrics', async () => {
      const text = await scrape(ports.sdk);
      return text?.includes('temporal_') ? text : undefined;
    }, { timeoutMs: 30_000, everyMs: 250 });
    expect(sdk).toMatch(/^# TYPE temporal_\w+ /m);
  } finally {
    expect(await worker.stop(), worker.output()).toBe(0);
  }

  // Both ports taken: each is reported, and the worker polls all the same.
  const taken: Server[] = [];
  for (const port of [ports.metrics, ports.sdk]) {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    taken.push(server);
  }
  const crowded = startWorker(ports);
  try {
    await waitUntil('polling', async () => crowded.output().includes('polling task queue'), { timeoutMs: 60_000, everyMs: 250 });
    expect(crowded.output()).toMatch(/the Temporal SDK's metrics are off: .*(in use|EADDRINUSE).*TEMPORAL_METRICS_PORT/);
    expect(crowded.output()).toMatch(/metrics are off: .*EADDRINUSE.*METRICS_PORT/);
  } finally {
    expect(await crowded.stop(), crowded.output()).toBe(0);
    for (const server of taken) server.close();
  }
}, 120_000);
