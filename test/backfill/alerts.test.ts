// Seed 004's backfill alert thresholds, one by one: the bad-message rate over a 10,000-message
// window (warn at 0.2 %, critical at 1 %, never judged on a tiny sample), spikes (more than 200 bad
// in an hour) and the metadata budget (warn at 50 %, critical at 80 %).
import { describe, expect, it } from 'vitest';
import {
  BAD_RATE_WINDOW,
  judgeBadRate,
  judgeMetadata,
  judgeSpike,
  recordBadTimes,
  slideBadWindow,
  worstLevel,
} from '../../src/backfill/alerts.js';

const BIG_MAILBOX = 1_000_000;

/** The window after finished slices of (processed, bad) messages, oldest first. */
function windowOf(slices: Array<[number, number]>): Array<[number, number]> {
  return slices.reduce<Array<[number, number]>>((w, [p, b]) => slideBadWindow(w, p, b), []);
}

describe('bad-message rate over the last 10,000 messages', () => {
  it('is ok below 0.2 %', () => {
    expect(judgeBadRate(windowOf([[10_000, 19]]), BIG_MAILBOX).level).toBe('ok');
  });

  it('warns at 0.2 %', () => {
    const j = judgeBadRate(windowOf([[5_000, 10], [5_000, 10]]), BIG_MAILBOX);
    expect(j.level).toBe('warn');
    expect(j.detail).toBe('bad-message rate 0.20 %: 20 bad of the last 10000 messages (warn at 0.20 %)');
  });

  it('is critical at 1 %', () => {
    const j = judgeBadRate(windowOf([[10_000, 100]]), BIG_MAILBOX);
    expect(j.level).toBe('critical');
    expect(j.measured).toEqual({ processed: 10_000, bad: 100, rate: 0.01 });
  });

  it('does not fire on a tiny sample, however bad', () => {
    const j = judgeBadRate(windowOf([[50, 25]]), BIG_MAILBOX);
    expect(j.level).toBe('ok');
    expect(j.detail).toMatch(/too few to judge \(needs 10000\)/);
    // A small mailbox is judged on all of it, but never on fewer than 1,000 messages.
    expect(judgeBadRate(windowOf([[300, 30]]), 300).level).toBe('ok');
    expect(judgeBadRate(windowOf([[2_000, 20]]), 2_000).level).toBe('critical');
  });

  it('slides: old bad messages leave the window once 10,000 newer ones cover it', () => {
    let w = windowOf([[1_000, 200]]);
    for (let i = 0; i < 10; i++) w = slideBadWindow(w, 1_000, 0);
    expect(w.reduce((s, [p]) => s + p, 0)).toBe(BAD_RATE_WINDOW);
    expect(judgeBadRate(w, BIG_MAILBOX).level).toBe('ok');
    // One slice less and the bad ones are still inside: critical.
    expect(judgeBadRate(windowOf([[1_000, 200], ...Array.from({ length: 9 }, () => [1_000, 0] as [number, number])]), BIG_MAILBOX).level).toBe('critical');
  });
});

describe('bad-message spike', () => {
  const t0 = Date.UTC(2026, 0, 1);

  it('is critical above 200 bad messages within an hour, and ok at 200', () => {
    let times = recordBadTimes([], t0, 150);
    times = recordBadTimes(times, t0 + 30 * 60_000, 50);
    expect(judgeSpike(times, t0 + 30 * 60_000).level).toBe('ok');
    times = recordBadTimes(times, t0 + 40 * 60_000, 1);
    const j = judgeSpike(times, t0 + 40 * 60_000);
    expect(j.level).toBe('critical');
    expect(j.detail).toBe('201 bad messages in the last hour (critical above 200)');
  });

  it('forgets what is older than an hour', () => {
    let times = recordBadTimes([], t0, 150);
    times = recordBadTimes(times, t0 + 61 * 60_000, 100);
    expect(times).toEqual([[t0 + 61 * 60_000, 100]]);
    expect(judgeSpike(times, t0 + 61 * 60_000).level).toBe('ok');
  });
});

describe('metadata budget', () => {
  it('warns at 50 % and is critical at 80 %', () => {
    expect(judgeMetadata(499, 1000).level).toBe('ok');
    expect(judgeMetadata(500, 1000).level).toBe('warn');
    expect(judgeMetadata(799, 1000).level).toBe('warn');
    const j = judgeMetadata(800, 1000);
    expect(j.level).toBe('critical');
    expect(j.detail).toBe('metadata 800 of 1000 bytes, 80.00 % of the budget (critical at 80.00 %)');
  });
});

it('the worst level wins', () => {
  expect(worstLevel([])).toBe('ok');
  expect(worstLevel(['ok', 'warn'])).toBe('warn');
  expect(worstLevel(['warn', 'critical', 'ok'])).toBe('critical');
});
