// Call accounting for the control API: calls, units and error statuses per Gmail method.

export interface MethodMetrics {
  calls: number;
  units: number;
  errors: Record<string, number>;
}

export class Metrics {
  private readonly byMethod = new Map<string, MethodMetrics>();

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
