// Does pacing by the rate-limit headers pay (issue 35)? The same mail through the pipeline twice, the
// Anthropic emulator enforcing a requests-per-minute limit (token bucket, 429 with retry-after, and
// anthropic-ratelimit-* headers on every answer): once reacting to 429s only (LLM_RATE_LIMIT_PACING
// off), once waiting before a call the headers say would be refused (on). Prints the 429s served, the
// model calls made, and how long the mail took to settle.
//   --emails N (150)  --rpm R (120)  --llm-latency MS (300)
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { wholeFlag } from '../args.js';
import { startBenchWorld } from '../bench-world.js';
import { threadSettingsFromConfig } from '../../src/config/settings.js';
import { ingestThreadEvent } from '../../src/thread/ingest.js';

export async function run(args: string[]): Promise<void> {
  const emails = wholeFlag(args, 'emails', 150);
  const rpm = wholeFlag(args, 'rpm', 120);
  const llmLatency = wholeFlag(args, 'llm-latency', 300);
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  for (const pacing of [false, true]) {
    const world = await startBenchWorld({ name: 'llm_rate_limits', accounts: 5, llmLatencyMs: llmLatency, env: { LLM_RATE_LIMIT_PACING: String(pacing) }, startWorkers: false });
    const { gmail, anthropic, prisma, cfg, accounts, client } = world;
    const configured = await fetch(`${anthropic.url}/__emulator/config`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rateLimits: { requestsPerMinute: rpm, inputTokensPerMinute: 10_000_000, outputTokensPerMinute: 10_000_000 }, retryAfterSeconds: 1 }),
    });
    if (!configured.ok) throw new Error(`emulator config: HTTP ${configured.status}`);
    const settings = threadSettingsFromConfig(cfg);
    const threads: { accountId: string; threadId: string; messageId: string }[] = [];
    for (let i = 0; i < emails; i++) {
      const account = accounts[i % accounts.length]!;
      const m = await gmail.control.deliver(account.email, { to: [account.email], from: `Client ${i} <c${i}@partner.example>`, subject: `Question ${i}`, text: `Could you send me the report ${i} by Friday?` });
      threads.push({ accountId: account.id, threadId: m.threadId, messageId: m.id });
    }
    await world.startWorkers();
    const start = Date.now();
    for (const t of threads) {
      await ingestThreadEvent(client, { accountId: t.accountId, threadId: t.threadId, event: { type: 'message_added', messageId: t.messageId, labelIds: ['INBOX'] }, settings });
    }
    let settled = 0;
    for (const deadline = Date.now() + 20 * 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
      settled = await prisma.thread.count({ where: { state: { notIn: ['pending'] } } });
      if (settled >= threads.length) break;
    }
    const took = Date.now() - start;
    const m = await anthropic.metrics();
    const label = pacing ? 'paced by the headers' : 'reacting to 429s';
    console.log(
      `llm-rate-limits ${label}: ${settled}/${threads.length} settled in ${(took / 1000).toFixed(1)} s at ${rpm} requests/min; ` +
        `429s served ${m.byStatus['429'] ?? 0}, model calls ${m.requests} (${m.byStatus['200'] ?? 0} answered)`,
    );
    await world.close();
  }
}
