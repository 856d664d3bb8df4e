// Tracing off unless OTEL_EXPORTER_OTLP_ENDPOINT is set; when set, spans reach an OTLP/HTTP collector
// (a tiny one in this process) with the process's service name.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import {
  clientTracingInterceptors,
  inSpan,
  startTracing,
  stopTracing,
  tracingEnabled,
  workerTracingOptions,
} from '../../src/temporal/tracing.js';

const received: { path: string; contentType: string; body: string }[] = [];
const collector = createServer((req: IncomingMessage, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    received.push({ path: req.url ?? '', contentType: req.headers['content-type'] ?? '', body: Buffer.concat(chunks).toString('utf8') });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;

afterAll(async () => {
  await stopTracing();
  await new Promise((resolve) => collector.close(resolve));
});

describe('tracing', () => {
  it('is off without OTEL_EXPORTER_OTLP_ENDPOINT: nothing started, every hook a pass-through', async () => {
    expect(await startTracing(loadConfig({}), { serviceName: 'off' })).toBe(false);
    expect(tracingEnabled()).toBe(false);
    expect(clientTracingInterceptors()).toBeUndefined();
    expect(workerTracingOptions()).toEqual({});
    expect(await inSpan('nothing', {}, async () => 42)).toBe(42);
  });

  it('exports spans over OTLP/HTTP to <endpoint>/v1/traces with the service name', async () => {
    const cfg = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: `${endpoint}/`, OTEL_SERVICE_NAME: 'durable-inbox-test' });
    expect(await startTracing(cfg, { serviceName: 'ignored: OTEL_SERVICE_NAME wins' })).toBe(true);
    await inSpan('gmail threads.get', { 'gmail.operation': 'threads.get' }, async () => undefined);
    await expect(inSpan('anthropic POST /v1/messages', {}, async () => Promise.reject(new Error('overloaded')))).rejects.toThrow('overloaded');
    await stopTracing(); // flushes the batch
    expect(tracingEnabled()).toBe(false);

    expect(received.map((r) => r.path)).toEqual(['/v1/traces']);
    expect(received[0]!.contentType).toContain('application/json');
    const body = JSON.parse(received[0]!.body) as {
      resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: { name: string; status: { code?: number } }[] }[] }[];
    };
    const [resourceSpans] = body.resourceSpans;
    expect(resourceSpans!.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'durable-inbox-test' } });
    const exported = resourceSpans!.scopeSpans.flatMap((s) => s.spans);
    expect(exported.map((s) => s.name)).toEqual(['gmail threads.get', 'anthropic POST /v1/messages']);
    expect(exported[1]!.status.code).toBe(2); // ERROR
  });
});
