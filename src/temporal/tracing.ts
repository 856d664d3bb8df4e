// OpenTelemetry traces across the boundaries: the Gmail push, the Temporal client calls, workflows
// and activities (@temporalio/interceptors-opentelemetry: the trace context rides in Temporal headers,
// workflow spans leave the sandbox through a sink) and, inside activities, each Gmail API call and each
// Anthropic HTTP call. Exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set (the standard
// OTEL_EXPORTER_OTLP_* variables apply); otherwise nothing is loaded or started and every helper here
// is a plain pass-through. One tracer provider per process, registered globally.
import { createRequire } from 'node:module';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ClientInterceptors } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import type * as otel from '@opentelemetry/api';

/** The workflow-side interceptors, for workflow bundles built while tracing is on. */
export const workflowTracingModule = createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

interface Active {
  api: typeof otel;
  tracer: otel.Tracer;
  clientInterceptors: () => ClientInterceptors;
  workerOptions: () => Pick<WorkerOptions, 'interceptors' | 'sinks'>;
  shutdown: () => Promise<void>;
}

let active: Active | undefined;

export interface TracingOptions {
  /** service.name of this process's spans (OTEL_SERVICE_NAME wins). */
  serviceName: string;
  /** Where spans go instead of OTLP (tests: an in-memory exporter). */
  spanProcessor?: SpanProcessor;
}

/** Starts tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set (or a span processor is given); true when on. */
export async function startTracing(cfg: { OTEL_EXPORTER_OTLP_ENDPOINT?: string; OTEL_SERVICE_NAME?: string }, opts: TracingOptions): Promise<boolean> {
  if (active) return true;
  if (!cfg.OTEL_EXPORTER_OTLP_ENDPOINT && !opts.spanProcessor) return false;
  const [api, { NodeTracerProvider }, { BatchSpanProcessor }, { Resource }, temporalOtel] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/resources'),
    import('@temporalio/interceptors-opentelemetry'),
  ]);
  let processor = opts.spanProcessor;
  if (!processor) {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    // OTLP/HTTP (JSON) to <endpoint>/v1/traces, as the spec says for OTEL_EXPORTER_OTLP_ENDPOINT; the
    // exporter reads OTEL_EXPORTER_OTLP_HEADERS (e.g. a collector's API key) itself.
    const url = `${cfg.OTEL_EXPORTER_OTLP_ENDPOINT!.replace(/\/+$/, '')}/v1/traces`;
    processor = new BatchSpanProcessor(new OTLPTraceExporter({ url }));
  }
  const resource = new Resource({ 'service.name': cfg.OTEL_SERVICE_NAME ?? opts.serviceName });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  // Global: AsyncLocalStorage context (a span inside an activity is the activity span's child) and W3C propagation.
  provider.register();
  const tracer = api.trace.getTracer('durable-inbox');
  const upstream = temporalOtel.makeWorkflowExporter(processor, resource);
  // The SDK's sink copies the whole WorkflowInfo into each workflow span's attributes, memo and search
  // attributes included: the memo holds the subject (encrypted in Temporal, decoded here). Only ids go out.
  const sinks: WorkerOptions['sinks'] = {
    exporter: { export: { ...upstream.export, fn: (info: WorkflowInfo, spans: Parameters<typeof upstream.export.fn>[1]) => upstream.export.fn(idsOnly(info), spans) } },
  };
  active = {
    api,
    tracer,
    clientInterceptors: () => ({ workflow: [new temporalOtel.OpenTelemetryWorkflowClientInterceptor()] }),
    workerOptions: () => ({
      interceptors: {
        client: { workflow: [new temporalOtel.OpenTelemetryWorkflowClientInterceptor()] },
        activity: [
          (ctx) => ({
            inbound: new temporalOtel.OpenTelemetryActivityInboundInterceptor(ctx),
            outbound: new temporalOtel.OpenTelemetryActivityOutboundInterceptor(ctx),
          }),
        ],
      },
      sinks,
    }),
    shutdown: async () => {
      await provider.shutdown();
      api.trace.disable();
      api.context.disable();
      api.propagation.disable();
    },
  };
  return true;
}

function idsOnly(info: WorkflowInfo): WorkflowInfo {
  const { workflowId, runId, workflowType, taskQueue, namespace, attempt } = info;
  return { workflowId, runId, workflowType, taskQueue, namespace, attempt } as WorkflowInfo;
}

export function tracingEnabled(): boolean {
  return active !== undefined;
}

/** Flushes and stops the exporter; tracing is off again. */
export async function stopTracing(): Promise<void> {
  const stopping = active;
  active = undefined;
  await stopping?.shutdown();
}

/** The Temporal client's tracing interceptors (none when tracing is off). */
export function clientTracingInterceptors(): ClientInterceptors | undefined {
  return active?.clientInterceptors();
}

/** A worker's activity interceptors and the sink workflow spans leave the sandbox through ({} when off). */
export function workerTracingOptions(): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  return active?.workerOptions() ?? {};
}

/**
 * Runs `fn` in a span (a child of the current one: the activity's, the push request's); an error
 * thrown marks the span failed. Without tracing, just runs `fn`.
 */
export async function inSpan<T>(name: string, attributes: Record<string, string | number>, fn: () => Promise<T>): Promise<T> {
  const tracing = active;
  if (!tracing) return fn();
  return tracing.tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn();
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: tracing.api.SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A fetch whose every request is a client span (method, host, path, status), for SDKs that take a fetch. */
export function tracedFetch(service: string, base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    if (!active) return base(input, init);
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    // Method, host and path only: no query string, headers or body (the prompt is mail) in a span.
    return inSpan(`${service} ${method} ${url.pathname}`, { 'http.request.method': method, 'server.address': url.host, 'url.path': url.pathname }, async () => {
      const response = await base(input, init);
      active?.api.trace.getActiveSpan()?.setAttribute('http.response.status_code', response.status);
      return response;
    });
  };
}
