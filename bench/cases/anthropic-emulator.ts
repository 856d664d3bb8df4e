// `npm run bench -- anthropic-emulator [--calls 1000] [--concurrency 200] [--latency-ms 300]`: how many
// classify calls per minute the LLM service gets through the real SDK from the emulator at a given model
// latency, i.e. the ceiling the emulator (not the model) puts on the pipeline benchmark.
import { parseArgs } from 'node:util';
import { startAnthropicEmulator } from '../../emulators/anthropic/index.js';
import { classifyEmail, createLlmClient } from '../../src/llm/index.js';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      calls: { type: 'string', default: '1000' },
      concurrency: { type: 'string', default: '200' },
      'latency-ms': { type: 'string', default: '300' },
    },
  });
  const calls = Number(values.calls);
  const concurrency = Number(values.concurrency);
  const emulator = await startAnthropicEmulator({ latencyMs: Number(values['latency-ms']) });
  const client = createLlmClient({ apiKey: 'bench', baseURL: emulator.url });
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < calls) {
      const i = next++;
      const started = performance.now();
      await classifyEmail(client, {
        model: 'claude-haiku-4-5',
        email: {
          from: `Sender ${i} <sender${i}@example.com>`,
          to: 'me@example.com',
          subject: `Message ${i}`,
          date: new Date(0).toUTCString(),
          body: i % 2 ? 'Can you send me the report?' : 'The report is attached, nothing to do.',
          headers: {},
        },
        instructions: [],
        maxInputTokens: 4000,
      });
      latencies.push(performance.now() - started);
    }
  };
  const started = performance.now();
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, calls) }, worker));
  } finally {
    await emulator.close();
  }
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const metrics = emulator.metrics();
  console.log(`anthropic-emulator: ${Math.round((calls / seconds) * 60)} calls/min`);
  console.log(`anthropic-emulator p50: ${Math.round(percentile(latencies, 50))} ms`);
  console.log(`anthropic-emulator p95: ${Math.round(percentile(latencies, 95))} ms`);
  console.log(`anthropic-emulator tokens in: ${metrics.inputTokens} tokens`);
  console.log(`anthropic-emulator max in flight: ${metrics.maxInFlight} calls`);
}
