// `npm run cli -- cleanup <senders|unsubscribe> ...` (and `npm run cli -- senders ...`): clean up a
// mailbox (docs/cleanup.md).
//   senders [--account A] [--since 90d] [--by sender|domain] [--sort messages|unread|replied|last] [--filter never-opened] [--limit N]
//   unsubscribe <sender> --account A [--now] [--wait SECONDS]
//   bulk --account A (--sender S | --domain D | --query Q) (--archive | --trash | --label NAME) [--dry-run] [--batch N] [--watch]
//   bulk-status <workflow id> | bulk-undo <workflow id>
//   cold-allow | cold-unallow --account A (--sender S | --domain D); cold-allowlist --account A
import { WorkflowFailedError } from '@temporalio/client';
import type { Env } from '../config/env.js';
import type { PrismaClient } from '../db/client.js';
import { prismaExecutor } from '../db/sql-executor.js';
import { connectClient } from '../temporal/client.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';
import { listSenders, SENDER_SORTS, type SenderFigures, type SenderSort } from '../cleanup/senders.js';
import { startUnsubscribe, unsubscribeStatus } from '../cleanup/unsubscribe.js';
import { MAX_BULK_BATCH, type BulkOperation, type BulkProgress, type UnsubscribeStatus } from '../cleanup/contracts.js';
import { searchableLabelName } from '../gmail/label-search.js';
import { bulkProgress, startBulk, undoBulk } from '../cleanup/bulk.js';
import { requireAccount } from '../operations/account-ref.js';
import { parseSubcommand, sinceDate, UsageError, withDatabase, type CliIo } from './command.js';
import { printTable } from './table.js';
import { allow, disallow, InvalidAllowEntryError, listAllowed } from '../rules/cold-email-allowlist.js';

const COLD_SUBCOMMANDS = ['cold-allow', 'cold-unallow', 'cold-allowlist'] as const;
type ColdSubcommand = (typeof COLD_SUBCOMMANDS)[number];

export const USAGE = `usage: npm run cli -- cleanup senders --account A [--since 90d] [--by sender|domain] [--sort messages|unread|replied|last] [--filter never-opened] [--limit N]
       npm run cli -- cleanup unsubscribe <sender> --account A [--now] [--wait SECONDS]
       npm run cli -- cleanup bulk --account A (--sender S | --domain D | --query Q) (--archive | --trash | --label NAME) [--dry-run] [--batch N] [--watch]
       npm run cli -- cleanup bulk-status|bulk-undo <workflow id>
       npm run cli -- cleanup cold-allow|cold-unallow --account A (--sender S | --domain D)
       npm run cli -- cleanup cold-allowlist --account A
       (npm run cli -- senders ... is cleanup senders)`;

const OPTIONS = {
  account: { type: 'string' },
  since: { type: 'string' },
  by: { type: 'string' },
  sort: { type: 'string' },
  filter: { type: 'string' },
  limit: { type: 'string' },
  now: { type: 'boolean' },
  wait: { type: 'string' },
  sender: { type: 'string' },
  domain: { type: 'string' },
  query: { type: 'string' },
  archive: { type: 'boolean' },
  trash: { type: 'boolean' },
  label: { type: 'string' },
  'dry-run': { type: 'boolean' },
  batch: { type: 'string' },
  watch: { type: 'boolean' },
} as const;

export async function runCleanupCli(cfg: Env, argv: string[], io: CliIo = { out: (l) => console.log(l) }): Promise<number> {
  const parsed = parseSubcommand(io, { name: 'cleanup', usage: USAGE, subcommands: ['senders', 'unsubscribe', 'bulk', 'bulk-status', 'bulk-undo', ...COLD_SUBCOMMANDS], options: OPTIONS }, argv);
  if (typeof parsed === 'number') return parsed;
  const { sub, values, positionals } = parsed;
  let code = 0;
  const exit = await withDatabase(cfg, io, { name: `cleanup ${sub}`, usage: USAGE }, async (prisma) => {
    if (sub === 'bulk-status' || sub === 'bulk-undo') {
      code = await bulkFollowUp(cfg, prisma, io, sub, positionals[0]);
      return;
    }
    if (!values.account) throw new UsageError(`${sub} needs --account`);
    const account = await requireAccount(prisma, values.account);
    if (sub === 'senders') await senders(prisma, io, account.id, values);
    else if ((COLD_SUBCOMMANDS as readonly string[]).includes(sub)) code = await coldAllowlist(prisma, io, account.id, sub as ColdSubcommand, values);
    else if (sub === 'bulk') code = await bulk(cfg, io, account.id, values);
    else code = await unsubscribe(cfg, io, account.id, positionals[0], values);
  });
  return exit || code;
}

type Values = {
  since?: string;
  by?: string;
  sort?: string;
  filter?: string;
  limit?: string;
  now?: boolean;
  wait?: string;
  sender?: string;
  domain?: string;
  query?: string;
  archive?: boolean;
  trash?: boolean;
  label?: string;
  'dry-run'?: boolean;
  batch?: string;
  watch?: boolean;
};

async function bulk(cfg: Env, io: CliIo, accountId: string, values: Values): Promise<number> {
  const selections = [values.sender, values.domain, values.query].filter((v) => v !== undefined);
  if (selections.length !== 1) throw new UsageError('bulk needs one of --sender, --domain or --query');
  if ([values.archive, values.trash, values.label !== undefined].filter(Boolean).length !== 1) throw new UsageError('bulk needs --archive, --trash or --label NAME (one of them)');
  const operation: BulkOperation = values.archive ? 'archive' : values.trash ? 'trash' : 'label';
  if (values.label !== undefined && !searchableLabelName(values.label)) throw new UsageError(`--label: a name of letters, digits, blanks and - _ . /, not a system label`);
  const batchSize = values.batch === undefined ? MAX_BULK_BATCH : Number(values.batch);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BULK_BATCH) throw new UsageError(`--batch: 1 to ${MAX_BULK_BATCH}`);
  const client = await connectClient(cfg, await resolvePayloadKeys(cfg));
  try {
    const handle = await startBulk(client, {
      accountId,
      selection: values.sender ? { kind: 'sender', value: values.sender } : values.domain ? { kind: 'domain', value: values.domain } : { kind: 'query', value: values.query! },
      operation,
      ...(values.label !== undefined ? { label: values.label } : {}),
      dryRun: !!values['dry-run'],
      batchSize,
      taskQueue: cfg.TEMPORAL_TASK_QUEUE,
      gmailTaskQueue: cfg.GMAIL_TASK_QUEUE,
      heartbeatTimeoutMs: cfg.GMAIL_HEARTBEAT_TIMEOUT,
    });
    io.out(`bulk ${operation === 'label' ? `label ${JSON.stringify(values.label)}` : operation} started: ${handle.workflowId}`);
    if (values['dry-run'] || values.watch) {
      try {
        io.out(progressLine(await handle.result()));
      } catch (err) {
        // A selection it refused (not an address, a query this server cannot run exactly): its reason.
        if (!(err instanceof WorkflowFailedError)) throw err;
        let cause: Error = err;
        while (cause.cause instanceof Error) cause = cause.cause; // workflow ← activity ← the activity's own error
        io.out(`bulk ${handle.workflowId} failed: ${cause.message}`);
        return 1;
      }
    } else {
      io.out(`progress: npm run cli -- cleanup bulk-status ${handle.workflowId}`);
    }
    return 0;
  } finally {
    await client.connection.close();
  }
}

/** The cold-email gate's allowlist (docs/cleanup.md): add, remove, list. */
async function coldAllowlist(prisma: PrismaClient, io: CliIo, accountId: string, sub: ColdSubcommand, values: Values): Promise<number> {
  const db = prismaExecutor(prisma);
  if (sub === 'cold-allowlist') {
    const entries = await listAllowed(db, accountId);
    printTable(io.out, ['kind', 'value', 'since'], entries.map((e) => [e.kind, e.value, e.createdAt.toISOString().slice(0, 10)]));
    io.out(`${entries.length} allowed`);
    return 0;
  }
  if (!!values.sender === !!values.domain) throw new UsageError(`${sub} needs --sender or --domain (one of them)`);
  const kind = values.sender ? 'sender' : 'domain';
  try {
    const changed = await (sub === 'cold-allow' ? allow : disallow)(db, accountId, kind, (values.sender ?? values.domain)!);
    const what = `${kind} ${values.sender ?? values.domain}`;
    io.out(sub === 'cold-allow' ? `${what}: ${changed ? 'allowed' : 'already allowed'}, never held back as cold email` : `${what}: ${changed ? 'removed' : 'was not allowed'}`);
    return 0;
  } catch (err) {
    if (err instanceof InvalidAllowEntryError) throw new UsageError(err.message);
    throw err;
  }
}

function progressLine(p: BulkProgress): string {
  if (p.state === 'dry_run') return `dry run: it would touch ${p.messages} messages in ${p.threads ?? 0} threads`;
  const seconds = (Date.now() - p.startedAtMs) / 1000;
  return `${p.state}: ${p.messages} messages ${p.operation === 'label' ? 'labelled' : 'moved'} in ${p.batches} batches (${(p.messages / Math.max(seconds, 0.001)).toFixed(1)} messages/s)`;
}

async function bulkFollowUp(cfg: Env, prisma: PrismaClient, io: CliIo, sub: string, workflowId: string | undefined): Promise<number> {
  if (!workflowId?.startsWith('bulk/')) throw new UsageError(`${sub} needs the bulk workflow id (bulk/<account>/<id>)`);
  const client = await connectClient(cfg, await resolvePayloadKeys(cfg));
  try {
    if (sub === 'bulk-status') {
      io.out(progressLine(await bulkProgress(client.workflow.getHandle(workflowId))));
      return 0;
    }
    const deps = { client, db: prismaExecutor(prisma), taskQueue: cfg.TEMPORAL_TASK_QUEUE, gmailTaskQueue: cfg.GMAIL_TASK_QUEUE };
    const outcomes = await undoBulk(deps, workflowId, 'cli');
    if (outcomes.length === 0) io.out('nothing to undo');
    for (const o of outcomes) io.out(`${o.ok ? 'undone    ' : 'not undone'} ${o.message}`);
    return outcomes.every((o) => o.ok) ? 0 : 1;
  } finally {
    await client.connection.close();
  }
}

async function senders(prisma: PrismaClient, io: CliIo, accountId: string, values: Values): Promise<void> {
  const by = values.by ?? 'sender';
  if (by !== 'sender' && by !== 'domain') throw new UsageError('--by: sender or domain');
  const sort = values.sort ?? 'messages';
  if (!(SENDER_SORTS as readonly string[]).includes(sort)) throw new UsageError(`--sort: ${SENDER_SORTS.join(', ')}`);
  if (values.filter !== undefined && values.filter !== 'never-opened') throw new UsageError('--filter: never-opened');
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isInteger(limit) || limit <= 0) throw new UsageError('--limit: a positive whole number');
  const started = performance.now();
  const rows = await listSenders(prismaExecutor(prisma), {
    accountId,
    since: sinceDate(values.since ?? '90d'),
    by,
    sort: sort as SenderSort,
    ...(values.filter ? { filter: 'never-opened' as const } : {}),
    limit,
  });
  printTable(io.out, [by, 'messages', 'unread', 'replied', 'category', 'unsubscribe', 'last'], rows.map(senderCells));
  io.out(`${rows.length} ${by === 'domain' ? 'domains' : 'senders'} (${Math.round(performance.now() - started)} ms)`);
}

function senderCells(s: SenderFigures): string[] {
  return [s.key || '(no sender)', String(s.messages), `${Math.round(s.unreadShare * 100)}%`, String(s.repliedTo), s.category || '-', s.listUnsubscribe ? 'yes' : 'no', s.lastAt.slice(0, 10)];
}

async function unsubscribe(cfg: Env, io: CliIo, accountId: string, sender: string | undefined, values: Values): Promise<number> {
  if (!sender) throw new UsageError('unsubscribe needs the sender address');
  const waitMs = (values.wait === undefined ? 20 : Number(values.wait)) * 1000;
  if (!Number.isFinite(waitMs) || waitMs < 0) throw new UsageError('--wait: seconds');
  const client = await connectClient(cfg, await resolvePayloadKeys(cfg));
  try {
    const handle = await startUnsubscribe(client, {
      accountId,
      sender,
      // --now: the user's own act (the policy still holds a mail to another domain); else the
      // clean-up's suggestion, judged like any automatic action.
      reason: values.now ? { source: 'user' } : { source: 'system', why: `clean-up: unsubscribe from ${sender} asked from the CLI` },
      taskQueue: cfg.TEMPORAL_TASK_QUEUE,
      gmailTaskQueue: cfg.GMAIL_TASK_QUEUE,
    });
    const status = await settled(() => unsubscribeStatus(handle), waitMs);
    io.out(describeStatus(sender, status));
    return status.state === 'failed' || status.state === 'nothing_to_do' ? 1 : 0;
  } finally {
    await client.connection.close();
  }
}

/** The status once it stops moving on its own (waits for approval, or ended), or as it is after waitMs. */
async function settled(read: () => Promise<UnsubscribeStatus>, waitMs: number): Promise<UnsubscribeStatus> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const status = await read();
    if (!['proposing', 'queued', 'approved'].includes(status.state) || Date.now() >= deadline) return status;
    await new Promise((r) => setTimeout(r, 200));
  }
}

function describeStatus(sender: string, s: UnsubscribeStatus): string {
  const note = s.note ? `: ${s.note}` : '';
  switch (s.state) {
    case 'awaiting_approval':
      return `unsubscribe from ${sender} waits for your approval: npm run cli -- actions approve ${s.actionId}`;
    case 'done':
      return `unsubscribed from ${sender} (action ${s.actionId})`;
    case 'nothing_to_do':
      return `nothing to unsubscribe from${note}`;
    default:
      return `unsubscribe from ${sender}: ${s.state}${note}${s.actionId ? ` (action ${s.actionId})` : ''}`;
  }
}
