// Standalone Anthropic emulator: `npx tsx emulators/anthropic/main.ts [--port 8236] [--latency-ms 300]
// [--jitter-ms 0] [--seed 1] [--rate-limit-rate 0] [--overloaded-rate 0] [--server-error-rate 0]
// [--retry-after 1] [--api-key KEY] [--batch-processing-ms 1000]`. Point the app at it with ANTHROPIC_BASE_URL=<printed url>.
import { parseArgs } from 'node:util';
import { startAnthropicEmulator } from './index.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    'latency-ms': { type: 'string' },
    'jitter-ms': { type: 'string' },
    seed: { type: 'string' },
    'rate-limit-rate': { type: 'string' },
    'overloaded-rate': { type: 'string' },
    'server-error-rate': { type: 'string' },
    'retry-after': { type: 'string' },
    'api-key': { type: 'string' },
    'batch-processing-ms': { type: 'string' },
  },
});

const num = (value: string | undefined) => (value === undefined ? undefined : Number(value));

try {
  const emulator = await startAnthropicEmulator({
    port: num(values.port) ?? 8236,
    latencyMs: num(values['latency-ms']),
    latencyJitterMs: num(values['jitter-ms']),
    seed: num(values.seed),
    retryAfterSeconds: num(values['retry-after']),
    apiKey: values['api-key'],
    batchProcessingMs: num(values['batch-processing-ms']),
    errorRates: {
      rateLimit: num(values['rate-limit-rate']),
      overloaded: num(values['overloaded-rate']),
      server: num(values['server-error-rate']),
    },
  });
  console.log(`anthropic emulator listening on ${emulator.url} (metrics: ${emulator.url}/__emulator/metrics)`);
  const stop = () => {
    void emulator.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (err) {
  console.error(`anthropic emulator: ${(err as Error).message}`);
  process.exit(1);
}
