// The LLM circuit breaker's transitions (src/llm/breaker.ts): plain data, no Temporal, no database.
import { describe, expect, it } from 'vitest';
import {
  admit,
  afterFailure,
  afterSuccess,
  claimProbe,
  CLOSED,
  describePause,
  needsReset,
  nextUtcDay,
  pauseWakeAt,
  probeDelayMs,
  type BreakerState,
} from '../../src/llm/breaker.js';

const settings = { failuresToOpen: 3, probeMinMs: 1_000, probeMaxMs: 8_000 };
const t0 = new Date('2026-03-10T15:00:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

function fail(b: BreakerState, times: number, kind: Parameters<typeof afterFailure>[1] = 'outage', now = t0): BreakerState {
  for (let i = 0; i < times; i++) b = afterFailure(b, kind, `529 overloaded #${i + 1}`, now, settings);
  return b;
}

describe('nextUtcDay', () => {
  it('is the next midnight UTC, whatever the hour', () => {
    expect(new Date(nextUtcDay(t0.getTime())).toISOString()).toBe('2026-03-11T00:00:00.000Z');
    expect(new Date(nextUtcDay(Date.parse('2026-03-10T00:00:00.000Z'))).toISOString()).toBe('2026-03-11T00:00:00.000Z');
    expect(new Date(nextUtcDay(Date.parse('2026-12-31T23:59:59.999Z'))).toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(new Date(nextUtcDay(Date.parse('2028-02-28T12:00:00.000Z'))).toISOString()).toBe('2028-02-29T00:00:00.000Z');
  });
});

describe('probeDelayMs', () => {
  it('doubles from the minimum and stops at the maximum', () => {
    expect([0, 1, 2, 3, 4, 50].map((n) => probeDelayMs(n, settings))).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
  });
});

describe('outage', () => {
  it('stays closed below the threshold, counting failures in a row', () => {
    const b = fail(CLOSED, 2);
    expect(b).toMatchObject({ state: 'closed', failures: 2, lastError: '529 overloaded #2' });
    expect(admit(b, t0, settings)).toEqual({ call: true, probe: false });
    expect(needsReset(b)).toBe(true);
  });

  it('opens at the threshold, fails fast until the probe is due, and lets one probe through', () => {
    const open = fail(CLOSED, 3);
    expect(open).toMatchObject({ state: 'open', reason: 'outage', failures: 3, openedAt: t0, nextProbeAt: at(1_000) });
    expect(admit(open, at(500), settings)).toEqual({ call: false, resumeAt: at(1_000) });
    expect(admit(open, at(1_000), settings)).toEqual({ call: true, probe: true });

    const probing = claimProbe(open, at(1_000), settings);
    expect(admit(probing, at(1_001), settings)).toEqual({ call: false, resumeAt: at(2_000) });
  });

  it('backs off after each failed probe, bounded, and keeps the time it opened', () => {
    let b = fail(CLOSED, 3);
    const waits: number[] = [];
    for (let i = 1; i <= 5; i++) {
      b = afterFailure(b, 'outage', 'still 529', at(i * 10_000), settings);
      waits.push(b.nextProbeAt!.getTime() - at(i * 10_000).getTime());
    }
    expect(waits).toEqual([2_000, 4_000, 8_000, 8_000, 8_000]);
    expect(b.openedAt).toEqual(t0);
  });

  it('closes on the first answer', () => {
    expect(afterSuccess()).toEqual(CLOSED);
    expect(needsReset(CLOSED)).toBe(false);
  });
});

describe('auth and credits', () => {
  it('open at once and never probe the model: only an operator resumes', () => {
    for (const kind of ['auth', 'credits'] as const) {
      const b = afterFailure(CLOSED, kind, '401 invalid x-api-key', t0, settings);
      expect(b).toMatchObject({ state: 'open', reason: kind, nextProbeAt: null });
      // Waiting threads look again after the longest probe wait, and are refused without a model call.
      expect(admit(b, at(3_600_000), settings)).toEqual({ call: false, resumeAt: at(3_600_000 + 8_000) });
      expect(describePause(b, 'me@example.com')).toContain('npm run cli -- accounts llm-resume me@example.com');
    }
  });

  it('an outage after a refused key does not reopen it for probing', () => {
    const auth = afterFailure(CLOSED, 'auth', '401', t0, settings);
    expect(afterFailure(auth, 'auth', '401 again', at(5), settings).nextProbeAt).toBeNull();
  });
});

describe('budget', () => {
  it('opens until the next UTC day, then lets a call through', () => {
    const b = afterFailure(CLOSED, 'budget', 'spent 200000 of 200000', t0, settings);
    expect(b).toMatchObject({ state: 'open', reason: 'budget', nextProbeAt: new Date('2026-03-11T00:00:00.000Z') });
    expect(admit(b, new Date('2026-03-10T23:59:59.000Z'), settings)).toMatchObject({ call: false });
    expect(admit(b, new Date('2026-03-11T00:00:00.000Z'), settings)).toEqual({ call: true, probe: true });
  });
});

describe('pauseWakeAt', () => {
  it('wakes a budget pause at the next UTC day of workflow time, others at the time the breaker gave', () => {
    const now = t0.getTime();
    expect(pauseWakeAt({ reason: 'budget', resumeAt: '2030-01-01T00:00:00.000Z' }, now)).toBe(Date.parse('2026-03-11T00:00:00.000Z'));
    expect(pauseWakeAt({ reason: 'outage', resumeAt: at(1_500).toISOString() }, now)).toBe(now + 1_500);
    expect(pauseWakeAt({ reason: 'auth', resumeAt: 'not a time' }, now)).toBe(now);
  });
});
