// The chaos benchmark's short form as a CI test (bench/chaos/harness.ts): 60 emails through
// delivery, push, sync, the thread workflows and the three workers as separate OS processes, while
// the Gmail and LLM workers are SIGKILLed, Gmail answers 429, pushes are dropped and doubled, the LLM
// answers 529 and poison mail arrives (content the model's answer fails on, broken MIME). Its own
// Temporal dev server and a scratch database; the emulators' state is what counts.
import { expect, it } from 'vitest';
import { formatChaosReport, runChaos, shortChaosOptions } from '../../bench/chaos/harness.js';
import { createScratchDatabase } from '../helpers/scratch-database.js';

it('loses no email and does nothing twice through worker kills, a 429 storm, dropped and doubled pushes, an LLM outage and poison mail', async () => {
  const db = await createScratchDatabase();
  try {
    // The run's progress lines and its report go with any failed expectation: CI keeps only the message.
    const progress: string[] = [];
    const report = await runChaos({ ...shortChaosOptions(db.url, 1), log: (line) => progress.push(line) });
    const story = [...progress, ...formatChaosReport(report)].join('\n');
    expect(report.unsettled, story).toEqual([]);
    expect(report.delivered).toBe(60);
    expect(report.settled).toBe(report.delivered);
    expect(report.lost).toBe(0);
    expect(report.duplicateDrafts).toBe(0);
    expect(report.duplicateSends).toBe(0);
    // One draft per mail that needs a reply, one send per forward, every poison mail (bad model output, broken MIME) isolated.
    expect(report.drafts).toBe(report.byKind.reply.delivered);
    expect(report.sends).toBe(report.byKind.forward.delivered);
    expect(report.faults.poisonIsolated).toBe(2);
    expect(report.byKind.unreadable).toEqual({ delivered: 1, settled: 1 });
    // The faults happened while the mail was in flight.
    expect(report.faults.workerKills, story).toEqual({ workflow: 0, gmail: 1, llm: 1 });
    expect(report.faults.gmail429s, story).toBeGreaterThan(0);
    expect(report.faults.llm529s, story).toBeGreaterThan(0);
    expect(report.faults.pushesDropped, story).toBeGreaterThan(0);
    expect(report.faults.pushesDuplicated, story).toBeGreaterThan(0);
  } finally {
    await db.drop();
  }
}, 180_000);
