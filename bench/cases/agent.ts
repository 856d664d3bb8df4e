// The agent at scale (issue #26; asked for with the agent route): over A accounts on a real Temporal
// dev server with the Anthropic emulator at its default latency, (1) one brief run per account,
// triggered at once through its Schedule, and (2) R mails per account routed by a rule to the
// `scheduling` profile (the thread workflow's agent route). Prints runs and routed threads per
// minute, and steps, tokens and CPU ms per run.
//   --accounts A (50)  --routed R (2)  --llm-latency MS (300, the emulator's default in npm run dev)
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { wholeFlag } from '../args.js';
import { startBenchWorld } from '../bench-world.js';
import { cpuPerEmailLine, cpuSnapshot, cpuSpent } from '../proc-cpu.js';
import { llmPricesFromConfig, threadSettingsFromConfig } from '../../src/config/settings.js';
import { llmCostLines } from '../llm-cost.js';
import { scheduleIdOf } from '../../src/schedules/contracts.js';
import { addUserSchedule } from '../../src/schedules/user-schedules.js';
import { ingestThreadEvent } from '../../src/thread/ingest.js';

const per = (n: number, of: number) => (n / Math.max(1, of)).toFixed(1);

export async function run(args: string[]): Promise<void> {
  const accountsCount = wholeFlag(args, 'accounts', 50);
  const routedPer = wholeFlag(args, 'routed', 2);
  const llmLatency = wholeFlag(args, 'llm-latency', 300);
  Runtime.install({ logger: new DefaultLogger('ERROR') });

  const world = await startBenchWorld({ name: 'agent', accounts: accountsCount, llmLatencyMs: llmLatency });
  const { gmail, prisma, cfg, accounts, client, db } = world;
  await prisma.rule.deleteMany({ where: { scopeRef: 'routed.example' } });

  // (1) Brief runs: one schedule per account, all triggered at once.
  const schedules = [];
  for (const a of accounts) {
    schedules.push(await addUserSchedule(client, db, {
      accountId: a.id, name: 'Morning brief', profile: 'brief', prompt: 'What needs me today?', timing: { at: '07:30', days: ['mon'] }, timeZone: 'UTC', label: 'Brief', discord: false,
    }, { catchupWindowMs: 3600_000, jitterMs: 0 }));
  }
  let cpu = cpuSnapshot();
  let start = Date.now();
  await Promise.all(schedules.map((s) => client.schedule.getHandle(scheduleIdOf(s.id)).trigger()));
  let runs: { steps: number; tokens_in: number; tokens_out: number; finished_at: Date | null }[] = [];
  for (const deadline = Date.now() + 10 * 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
    runs = await db.query(`SELECT steps, tokens_in, tokens_out, finished_at FROM schedule_runs`, []);
    if (runs.length >= schedules.length && runs.every((r) => r.finished_at)) break;
  }
  let spent = cpuSpent(cpu, cpuSnapshot());
  let took = Math.max(...runs.map((r) => r.finished_at?.getTime() ?? Date.now())) - start;
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  console.log(`brief runs: ${runs.length} over ${accountsCount} accounts in ${(took / 1000).toFixed(1)} s: ${((runs.length / took) * 60_000).toFixed(0)} runs/min`);
  console.log(`brief run: steps ${per(sum(runs.map((r) => r.steps)), runs.length)}, tokens in ${per(sum(runs.map((r) => r.tokens_in)), runs.length)}, out ${per(sum(runs.map((r) => r.tokens_out)), runs.length)}`);
  console.log(cpuPerEmailLine('brief run', spent, runs.length).replace('CPU ms/email', 'CPU ms/run'));

  // (2) Routed threads: a rule hands the partner's scheduling mail to the `scheduling` profile.
  await prisma.rule.create({ data: { scope: 'domain', scopeRef: 'routed.example', kind: 'deterministic', action: 'needs_response', route: 'scheduling' } });
  const threads: { accountId: string; threadId: string; messageId: string }[] = [];
  for (const a of accounts) {
    for (let i = 0; i < routedPer; i++) {
      const m = await gmail.control.deliver(a.email, { from: `Pat ${i} <pat${i}@routed.example>`, to: [a.email], subject: `Moving our call ${i}`, text: 'Could we move our call to Thursday at 10:00?' });
      threads.push({ accountId: a.id, threadId: m.threadId, messageId: m.id });
    }
  }
  const settings = threadSettingsFromConfig(cfg);
  cpu = cpuSnapshot();
  start = Date.now();
  await Promise.all(threads.map((t) => ingestThreadEvent(client, { accountId: t.accountId, threadId: t.threadId, event: { type: 'message_added', messageId: t.messageId, labelIds: ['INBOX'] }, settings })));
  let settled = 0;
  let lastAt = start;
  for (const deadline = Date.now() + 10 * 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
    const rows = await prisma.thread.findMany({ where: { state: { notIn: ['pending'] }, accountId: { in: accounts.map((a) => a.id) } }, select: { updatedAt: true } });
    settled = rows.length;
    lastAt = Math.max(start, ...rows.map((r) => r.updatedAt.getTime()));
    if (settled >= threads.length) break;
  }
  spent = cpuSpent(cpu, cpuSnapshot());
  took = lastAt - start;
  const steps = await db.query<{ run_key: string; n: string; tin: string; tout: string }>(
    `SELECT run_key, count(*)::text AS n, coalesce(sum(tokens_in), 0)::text AS tin, coalesce(sum(tokens_out), 0)::text AS tout FROM agent_steps WHERE gmail_thread_id IS NOT NULL GROUP BY run_key`,
    [],
  );
  console.log(`routed threads: ${settled}/${threads.length} settled in ${(took / 1000).toFixed(1)} s: ${((settled / Math.max(1, took)) * 60_000).toFixed(0)} threads/min`);
  console.log(`routed run: steps ${per(sum(steps.map((s) => Number(s.n))), steps.length)}, tokens in ${per(sum(steps.map((s) => Number(s.tin))), steps.length)}, out ${per(sum(steps.map((s) => Number(s.tout))), steps.length)}`);
  console.log(cpuPerEmailLine('routed thread', spent, settled).replace('CPU ms/email', 'CPU ms/run'));
  // Tokens and money of both parts together, per routed thread or brief run.
  for (const line of llmCostLines('agent', await world.anthropic.metrics(), runs.length + threads.length, llmPricesFromConfig(cfg), cfg.ANTHROPIC_MODEL)) console.log(line.replace(/emails?\b/g, 'runs'));

  await prisma.rule.deleteMany({ where: { scopeRef: 'routed.example' } });
  await world.close();
}
