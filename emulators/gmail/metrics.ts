// Call accounting for the control API: calls, units and error statuses per Gmail method, and the
// calls in flight: read in full (they take effect even if their client dies now) and not answered yet.

export interface MethodMetrics {
  calls: number;
  units: number;
  errors: Record<string, number>;
}

export class Metrics {
  private readonly byMethod = new Map<string, MethodMetrics>();
  private readonly pending = new Map<string, number>();

  /** A call read in full: in flight until end(). */
  begin(method: string): void {
    this.pending.set(method, (this.pending.get(method) ?? 0) + 1);
  }

  end(method: string): void {
    const n = (this.pending.get(method) ?? 0) - 1;
    if (n > 0) this.pending.set(method, n);
    else this.pending.delete(method);
  }

  /** Calls in flight per method (reset() leaves them: they are still running). */
  inFlight(): Record<string, number> {
    return Object.fromEntries(this.pending);
  }

  record(method: string, units: number, status: number): void {
    let entry = this.byMethod.get(method);
    if (!entry) {
      entry = { calls: 0, units: 0, errors: {} };
      this.byMethod.set(method, entry);
    }
    entry.calls++;
    entry.units += units;
    if (status >= 400) entry.errors[status] = (entry.errors[status] ?? 0) + 1;
  }

  snapshot(): Record<string, MethodMetrics> {
    return Object.fromEntries([...this.byMethod].map(([method, m]) => [method, { ...m, errors: { ...m.errors } }]));
  }

  reset(): void {
    this.byMethod.clear();
  }
}
