// A small metrics registry: labelled counters and gauges in process memory, and gauges read at
// scrape time (from the database), rendered in the Prometheus text exposition format (0.0.4).
// Hand-written: a few counters do not need prom-client, and the format is a dozen lines.

export type Labels = Record<string, string>;

export interface Sample {
  labels: Labels;
  value: number;
}

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples(): Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

function keyOf(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));
}

class LabelledValues<L extends string> {
  protected readonly values = new Map<string, Sample>();

  constructor(readonly labelNames: readonly L[]) {}

  protected entry(labels: Record<L, string>): Sample {
    const key = keyOf(labels);
    let sample = this.values.get(key);
    if (!sample) {
      for (const name of this.labelNames) if (labels[name] === undefined) throw new Error(`metric label ${name} missing`);
      sample = { labels: { ...labels }, value: 0 };
      this.values.set(key, sample);
    }
    return sample;
  }

  samples(): Sample[] {
    return [...this.values.values()].map((s) => ({ labels: s.labels, value: s.value }));
  }

  /** The current value for these labels (0 when never touched). */
  get(labels: Record<L, string>): number {
    return this.values.get(keyOf(labels))?.value ?? 0;
  }
}

export class Counter<L extends string = never> extends LabelledValues<L> {
  inc(labels: Record<L, string>, by = 1): void {
    if (!(by >= 0)) throw new Error(`a counter only goes up (got ${by})`);
    this.entry(labels).value += by;
  }
}

export class Gauge<L extends string = never> extends LabelledValues<L> {
  set(labels: Record<L, string>, value: number): void {
    this.entry(labels).value = value;
  }
}

/** A gauge whose samples are read when scraped; `read` gets whatever the scraper passes (a database). */
export interface ScrapedGauge<C> {
  name: string;
  help: string;
  read(context: C): Promise<Sample[]>;
}

export class MetricsRegistry<C = void> {
  private readonly families: Family[] = [];
  private readonly scraped: ScrapedGauge<C>[] = [];

  private add(family: Family): void {
    if (!NAME.test(family.name)) throw new Error(`invalid metric name ${family.name}`);
    if (this.families.some((f) => f.name === family.name) || this.scraped.some((f) => f.name === family.name)) {
      throw new Error(`metric ${family.name} registered twice`);
    }
    this.families.push(family);
  }

  counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    const counter = new Counter<L>(labelNames);
    this.add({ name, help, type: 'counter', samples: () => counter.samples() });
    return counter;
  }

  gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    const gauge = new Gauge<L>(labelNames);
    this.add({ name, help, type: 'gauge', samples: () => gauge.samples() });
    return gauge;
  }

  scrapedGauge(gauge: ScrapedGauge<C>): void {
    if (!NAME.test(gauge.name)) throw new Error(`invalid metric name ${gauge.name}`);
    this.scraped.push(gauge);
  }

  /**
   * Every family in the text format. A scraped gauge that fails to read is left out and counted in
   * `<prefix>metrics_scrape_errors`, so one broken source does not hide the others.
   */
  async render(context: C): Promise<string> {
    const lines: string[] = [];
    const emit = (name: string, help: string, type: string, samples: Sample[]) => {
      lines.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`);
      for (const s of samples) lines.push(`${name}${formatLabels(s.labels)} ${formatValue(s.value)}`);
    };
    for (const f of this.families) emit(f.name, f.help, f.type, f.samples());
    let failed = 0;
    for (const g of this.scraped) {
      try {
        emit(g.name, g.help, 'gauge', await g.read(context));
      } catch {
        failed++;
      }
    }
    emit('durable_inbox_metrics_scrape_errors', 'Scraped gauges that could not be read in this scrape.', 'gauge', [{ labels: {}, value: failed }]);
    return `${lines.join('\n')}\n`;
  }
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function escapeValue(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function formatLabels(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  return `{${entries.map(([k, v]) => `${k}="${escapeValue(v)}"`).join(',')}}`;
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** The content type Prometheus expects for the text format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
