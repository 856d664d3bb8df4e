// The metrics registry renders the Prometheus text format: HELP and TYPE per family, labels
// escaped, scraped gauges read per scrape, and a failing one counted instead of breaking the rest.
import { describe, expect, it } from 'vitest';
import { MetricsRegistry } from '../../src/metrics/registry.js';

describe('metrics registry', () => {
  it('renders counters and gauges with their labels', async () => {
    const r = new MetricsRegistry<number>();
    const calls = r.counter('t_calls_total', 'Calls.', ['method']);
    const open = r.gauge('t_open', 'Open.', ['account']);
    calls.inc({ method: 'messages.get' }, 5);
    calls.inc({ method: 'messages.get' });
    calls.inc({ method: 'say "hi"\\' });
    open.set({ account: 'a' }, 1);
    r.scrapedGauge({ name: 't_scraped', help: 'Read at scrape time.', read: (n) => Promise.resolve([{ labels: {}, value: n }]) });
    const text = await r.render(42);
    expect(text).toBe(
      [
        '# HELP t_calls_total Calls.',
        '# TYPE t_calls_total counter',
        't_calls_total{method="messages.get"} 6',
        't_calls_total{method="say \\"hi\\"\\\\"} 1',
        '# HELP t_open Open.',
        '# TYPE t_open gauge',
        't_open{account="a"} 1',
        '# HELP t_scraped Read at scrape time.',
        '# TYPE t_scraped gauge',
        't_scraped 42',
        '# HELP durable_inbox_metrics_scrape_errors Scraped gauges that could not be read in this scrape.',
        '# TYPE durable_inbox_metrics_scrape_errors gauge',
        'durable_inbox_metrics_scrape_errors 0',
        '',
      ].join('\n'),
    );
  });

  it('leaves out a scraped gauge that fails, and counts it', async () => {
    const r = new MetricsRegistry();
    r.scrapedGauge({ name: 't_broken', help: 'Broken.', read: () => Promise.reject(new Error('db down')) });
    const text = await r.render();
    expect(text).not.toContain('t_broken');
    expect(text).toContain('durable_inbox_metrics_scrape_errors 1');
  });

  it('refuses a counter going down, a missing label and a name twice', () => {
    const r = new MetricsRegistry();
    const c = r.counter('t_total', 'T.', ['kind']);
    expect(() => c.inc({ kind: 'x' }, -1)).toThrow(/only goes up/);
    expect(() => c.inc({} as { kind: string })).toThrow(/label kind missing/);
    expect(() => r.gauge('t_total', 'again')).toThrow(/registered twice/);
    expect(() => r.counter('bad name', 'x')).toThrow(/invalid metric name/);
  });
});
