// What the e-mails of a bench run cost in LLM tokens and money, by role, from the Anthropic emulator's
// usage counts (by model and by what was asked) priced with the configured price table
// (src/llm/prices.ts, LLM_PRICES). The baseline prices the same tokens as one model without a cache:
// what a single-model, uncached configuration pays for the same calls.
import type { EmulatorMetrics, UsageCounts } from '../emulators/anthropic/index.js';
import { costOf, type PriceTable } from '../src/llm/prices.js';

/** The product's roles by what their calls ask for (the forced tool, tools offered, plain text). */
const ROLE_OF: Record<string, string> = {
  classify_email: 'classify',
  record_expects_reply: 'expects-reply',
  propose_writing_lessons: 'learning',
  tools: 'agent',
  text: 'draft',
};

const usd = (n: number) => `$${n.toFixed(n < 1 ? 4 : 2)}`;

export function llmCostLines(name: string, metrics: Pick<EmulatorMetrics, 'usage'> & Partial<Pick<EmulatorMetrics, 'batchUsage'>>, emails: number, prices: PriceTable, singleModel: string): string[] {
  const roles = new Map<string, { models: Set<string>; counts: UsageCounts; usd: number; baseline: number }>();
  // Message Batches requests (a backfill's hand-over) are their own role, at the batch price; the baseline prices them as ordinary calls.
  const usages = [
    { usage: metrics.usage, batch: false },
    { usage: metrics.batchUsage ?? {}, batch: true },
  ];
  for (const { usage, batch } of usages) for (const [model, asked] of Object.entries(usage)) {
    for (const [what, c] of Object.entries(asked)) {
      const role = `${ROLE_OF[what] ?? what}${batch ? ' (batch)' : ''}`;
      const r = roles.get(role) ?? { models: new Set(), counts: { calls: 0, input: 0, output: 0, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0 }, usd: 0, baseline: 0 };
      r.models.add(model);
      for (const k of Object.keys(r.counts) as (keyof UsageCounts)[]) r.counts[k] += c[k];
      r.usd += costOf(prices, model, c, batch) ?? Number.NaN;
      const allInput = c.input + c.cacheRead + c.cacheWrite5m + c.cacheWrite1h;
      r.baseline += costOf(prices, singleModel, { input: allInput, output: c.output, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0 }) ?? Number.NaN;
      roles.set(role, r);
    }
  }
  const per = (n: number) => (n / emails).toFixed(1);
  const lines: string[] = [];
  let total = 0;
  let baseline = 0;
  for (const [role, r] of [...roles].sort(([a], [b]) => a.localeCompare(b))) {
    const c = r.counts;
    const written = c.cacheWrite5m + c.cacheWrite1h;
    lines.push(
      `${name} LLM ${role}: ${(c.calls / emails).toFixed(2)} calls/email, tokens/email in ${per(c.input + c.cacheRead + written)} ` +
        `(cache read ${per(c.cacheRead)}, cache write ${per(written)}) out ${per(c.output)}; ${usd((r.usd / emails) * 1000)} per 1,000 emails on ${[...r.models].join(', ')}`,
    );
    total += r.usd;
    baseline += r.baseline;
  }
  lines.push(`${name} LLM cost: ${usd((total / emails) * 1000)} per 1,000 emails at list prices (models per role, prompt cache as used)`);
  lines.push(
    `${name} LLM cost single-model uncached: ${usd((baseline / emails) * 1000)} per 1,000 emails (every call on ${singleModel} at its base input price); ` +
      `the configured run costs ${((total / baseline) * 100).toFixed(0)} % of it`,
  );
  return lines;
}
