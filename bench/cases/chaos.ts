// Chaos benchmark (issue 14): a burst of mail through the whole path while workers are SIGKILLed,
// the Temporal dev server restarts, Gmail answers 429 for a minute, pushes are dropped and doubled,
// the LLM answers 529 for two minutes, and poison mail arrives (bench/chaos/harness.ts). Prints each
// figure on its own line; lost, duplicate drafts and duplicate sends must be 0.
//   --emails N   emails in the burst (default 500; 100 with --short)
//   --seed S     seeds the fault moments, the poison's places and the emulators (default 1)
//   --short      the CI form: a Gmail and an LLM worker kill, 8 s of 429s, 10 s of 529s, no restart
// Database: BENCH_DATABASE_URL (default the local server's durable_inbox_bench_chaos), emptied first.
import { fullChaosOptions, formatChaosReport, runChaos, shortChaosOptions } from '../chaos/harness.js';

function flag(args: string[], name: string): number | undefined {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const value = Number(args[i + 1]);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} expects a positive whole number`);
  return value;
}

export async function run(args: string[]): Promise<void> {
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/durable_inbox_bench_chaos';
  const seed = flag(args, 'seed') ?? 1;
  const base = args.includes('--short') ? shortChaosOptions(databaseUrl, seed) : fullChaosOptions(databaseUrl, seed);
  const emails = flag(args, 'emails') ?? base.emails;
  const report = await runChaos({ ...base, emails, log: (line) => console.error(line) });
  for (const line of formatChaosReport(report)) console.log(`chaos ${line}`);
  for (const u of report.unsettled.slice(0, 20)) console.log(`chaos unsettled: ${u.kind} ${u.email} thread ${u.threadId}`);
  if (report.lost > 0 || report.duplicateDrafts > 0 || report.duplicateSends > 0) process.exitCode = 1;
}
