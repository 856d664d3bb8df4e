// Clean-up benchmark (docs/cleanup.md):
//   1. the senders view over a mailbox of --messages (100,000) from --senders (2,000), as the backfill
//      stores it (rows written straight into `messages` and `threads` with SQL, the shape the backfill
//      writes): the query's time, median of 5;
//   2. a bulk archive of --bulk (20,000) messages of one sender through the real stack (dev server,
//      Postgres, the workers in this process, the Gmail emulator in a child process with its legacy
//      quota on): messages/s against the quota's ceiling, the latency of live-lane Gmail calls made
//      meanwhile through the same limiter, and CPU per message.
import { wholeFlag } from '../args.js';
import { startBenchWorld } from '../bench-world.js';
import { percentile } from '../bench-kit.js';
import { cpuPerEmailLine, cpuSnapshot, cpuSpent } from '../proc-cpu.js';
import { GmailAccounts } from '../../src/accounts/gmail-accounts.js';
import { TokenVault } from '../../src/accounts/token-vault.js';
import { startBulk } from '../../src/cleanup/bulk.js';
import { listSenders } from '../../src/cleanup/senders.js';
import { gmailOAuthSettings, quotaOptionsFromConfig } from '../../src/config/settings.js';
import { QuotaLimiter } from '../../src/quota/limiter.js';
import { QUOTA_PROFILES, unitCost } from '../../src/quota/profiles.js';

function mbox(from: string, count: number, offset: number): string {
  const parts: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = offset + i;
    parts.push(
      `From MAILER-DAEMON Thu Jan  1 00:00:00 2026\nFrom: Bulk <${from}>\nTo: user@example.com\nSubject: Offer ${n}\nMessage-ID: <bulk-${n}@bench.example>\nDate: Thu, 1 Jan 2026 00:00:00 +0000\nList-Unsubscribe: <https://bench.example/u/${n}>\n\nBuy now ${n}.\n`,
    );
  }
  return parts.join('\n');
}

export async function run(args: string[]): Promise<void> {
  const messages = wholeFlag(args, 'messages', 100_000);
  const senders = wholeFlag(args, 'senders', 2_000);
  const bulkCount = wholeFlag(args, 'bulk', 20_000);
  const world = await startBenchWorld({ name: 'cleanup', accounts: 1, llmLatencyMs: 0, gmailFlags: ['--quota', 'legacy'] });
  try {
    const account = world.accounts[0]!;
    // ---- 1. the senders view -------------------------------------------------------------------
    await world.db.query(
      `INSERT INTO messages (account_id, gmail_id, gmail_thread_id, label_ids, internal_date, headers, body_text, raw_size)
       SELECT $1, 'v' || g, 't' || (g / 3), CASE WHEN g % 4 = 0 THEN ARRAY['INBOX'] WHEN g % 97 = 0 THEN ARRAY['SENT'] ELSE ARRAY['INBOX','UNREAD'] END,
         now() - make_interval(secs => g * 60), jsonb_build_object('from', 'Sender ' || (g % $3) || ' <s' || (g % $3) || '@d' || (g % ($3 / 4)) || '.example>')
           || CASE WHEN g % $3 < $3 / 2 THEN jsonb_build_object('list-unsubscribe', '<https://x.example/u>') ELSE '{}'::jsonb END,
         '', 1000
       FROM generate_series(1, $2) g`,
      [account.id, messages, senders],
    );
    await world.db.query(
      `INSERT INTO threads (id, account_id, gmail_thread_id, state, category, updated_at)
       SELECT gen_random_uuid(), $1, 't' || t, 'closed', (ARRAY['newsletter','automated','fyi','needs_response'])[1 + t % 4], now()
       FROM generate_series(0, $2 / 3) t`,
      [account.id, messages],
    );
    await world.db.query('ANALYZE messages', []);
    await world.db.query('ANALYZE threads', []);
    const times: number[] = [];
    let rows = 0;
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      rows = (await listSenders(world.db, { accountId: account.id, limit: 100_000 })).length;
      times.push(performance.now() - t0);
    }
    const domains0 = performance.now();
    const domains = (await listSenders(world.db, { accountId: account.id, by: 'domain', limit: 100_000 })).length;
    const domainMs = performance.now() - domains0;
    times.sort((a, b) => a - b);
    console.log(`senders view, ${messages} messages from ${senders} senders: ${rows} senders in ${percentile(times, 50).toFixed(0)} ms (median of 5; min ${times[0]!.toFixed(0)}, max ${times.at(-1)!.toFixed(0)})`);
    console.log(`senders view per domain: ${domains} domains in ${domainMs.toFixed(0)} ms`);

    // ---- 2. a bulk archive within the quota ----------------------------------------------------
    const sender = 'offers@bulk.example';
    for (let done = 0; done < bulkCount; done += 2_000) {
      await world.gmail.control.importMail(account.email, { format: 'mbox', data: mbox(sender, Math.min(2_000, bulkCount - done), done), labelIds: ['INBOX'] });
    }
    const live = await world.gmail.control.deliver(account.email, { from: 'Friend <friend@live.example>', to: [account.email], subject: 'Live', text: 'Hi' });
    const limiter = new QuotaLimiter(world.db, quotaOptionsFromConfig(world.cfg));
    const gmail = new GmailAccounts(world.prisma, new TokenVault(Buffer.from(world.cfg.TOKEN_ENCRYPTION_KEY!, 'base64')), gmailOAuthSettings(world.cfg));
    const service = await gmail.forAccount(account.id);
    const latencies: number[] = [];
    let running = true;
    const liveLoop = (async () => {
      while (running) {
        const t0 = performance.now();
        await limiter.run(account.id, 'messages.get', () => service.gmail.getMessage(live.id), undefined, 'live');
        latencies.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const cpu0 = cpuSnapshot();
    const started = performance.now();
    const handle = await startBulk(world.client, {
      accountId: account.id,
      selection: { kind: 'sender', value: sender },
      operation: 'archive',
      dryRun: false,
      taskQueue: world.cfg.TEMPORAL_TASK_QUEUE,
      gmailTaskQueue: world.cfg.GMAIL_TASK_QUEUE,
    });
    const result = await handle.result();
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuSpent(cpu0, cpuSnapshot());
    running = false;
    await liveLoop;
    const profile = QUOTA_PROFILES[world.cfg.GMAIL_QUOTA_PROFILE];
    // A batch: two messages.list pages of 500 ids and one batchModify of the 1000.
    const unitsPerBatch = 2 * unitCost(profile, 'messages.list') + unitCost(profile, 'messages.batchModify');
    const ceiling = (profile.unitsPerSecond / unitsPerBatch) * 1000;
    latencies.sort((a, b) => a - b);
    console.log(`bulk archive: ${result.messages} messages in ${result.batches} batches, ${seconds.toFixed(1)} s: ${(result.messages / seconds).toFixed(0)} messages/s (quota ceiling ${ceiling.toFixed(0)} messages/s at ${profile.unitsPerSecond} units/s, ${unitsPerBatch} units per batch of 1000)`);
    console.log(`live-lane Gmail calls meanwhile: ${latencies.length}, p50 ${percentile(latencies, 50).toFixed(0)} ms, p95 ${percentile(latencies, 95).toFixed(0)} ms, max ${latencies.at(-1)?.toFixed(0)} ms`);
    console.log(cpuPerEmailLine('bulk archive', cpu, result.messages));
  } finally {
    await world.close();
  }
}
