// `npm run cli -- reminders ...`: reminders with recurrence, delivered into the account's inbox (and
// Discord) by one durable workflow each (docs/time.md, "Reminders").
//   add TITLE --at HH:MM [--every day|week|month|year] [--on DAYS] [--interval N] [--start YYYY-MM-DD]
//       [--rrule RULE] [--tz ZONE] [--account A]
//   list [--account A] [--all]        running ones (--all: removed and finished too)
//   show <reminder id>                the rule, the next occurrences (local and UTC), the last ones handled
//   pause|resume|remove <reminder id>
// <A> is an account id or its email address; without --account, the only account there is.
import { reminderSettingsFromConfig } from '../config/settings.js';
import type { Env } from '../config/env.js';
import type { PrismaClient } from '../db/client.js';
import { prismaExecutor, type SqlExecutor } from '../db/sql-executor.js';
import { addReminder, changeReminderState, moveAccountReminders, type ReminderDeps } from '../reminders/reminders.js';
import { describeRecurrence, EVERY_VALUES, isValidZone, occurrencesAfter, RecurrenceError, type Every } from '../reminders/recurrence.js';
import { listOccurrences, listReminders, loadReminder, type ReminderRow } from '../reminders/reminder-store.js';
import { accountTimeSettings } from '../accounts/time-settings.js';
import { connectClient } from '../temporal/client.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';
import { requireAccount } from '../operations/account-ref.js';
import { parseSubcommand, UsageError, withDatabase, type CliIo } from './command.js';
import { printTable } from './table.js';

export const USAGE = `usage: npm run cli -- reminders add TITLE --at HH:MM [--every ${EVERY_VALUES.join('|')}] [--on DAYS] [--interval N]
                                       [--start YYYY-MM-DD] [--rrule RULE] [--tz ZONE] [--account A]
       npm run cli -- reminders list [--account A] [--all]
       npm run cli -- reminders show <reminder id>
       npm run cli -- reminders pause|resume|remove <reminder id>
DAYS: month: 1-31 (29-31: or the month's last day), last, first-monday ... last-friday; week: mon,thu; year: MM-DD
RULE: an RFC 5545 RRULE instead of --every/--on/--interval, e.g. FREQ=MONTHLY;BYDAY=-1FR (its own meaning: BYMONTHDAY=31 skips short months)
ZONE: an IANA time zone (Europe/Berlin); default: the account's, and the reminder moves when it changes`;

const OPTIONS = {
  account: { type: 'string' },
  at: { type: 'string' },
  every: { type: 'string' },
  on: { type: 'string' },
  interval: { type: 'string' },
  start: { type: 'string' },
  rrule: { type: 'string' },
  tz: { type: 'string' },
  all: { type: 'boolean', default: false },
} as const;

const SUBCOMMANDS = ['add', 'list', 'show', 'pause', 'resume', 'remove'] as const;

type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

/** An instant in the reminder's zone and in UTC: `2026-12-01 09:00 Europe/Berlin (08:00 UTC)`. */
function localAndUtc(at: Date, local: string, zone: string): string {
  return `${local.replace('T', ' ')} ${zone} (${at.toISOString().slice(0, 16).replace('T', ' ')} UTC)`;
}

function whenText(r: ReminderRow): string {
  return describeRecurrence(r);
}

/** The account named, or the only one there is. */
async function accountFor(prisma: PrismaClient, ref: string | undefined): Promise<{ id: string; email: string }> {
  if (ref !== undefined) return requireAccount(prisma, ref);
  const accounts = await prisma.account.findMany({ where: { status: { not: 'disconnected' } }, select: { id: true, email: true }, take: 2 });
  if (accounts.length !== 1) throw new UsageError(accounts.length === 0 ? 'no account yet (npm run cli -- accounts connect)' : 'more than one account: say which with --account');
  return accounts[0]!;
}

async function add(cfg: Env, prisma: PrismaClient, io: CliIo, values: Values, title: string | undefined): Promise<void> {
  if (!title?.trim()) throw new UsageError('add needs the reminder\'s title, e.g. "Pay the rent"');
  if (title.length > 200) throw new UsageError('the title is at most 200 characters');
  if (!values.at) throw new UsageError('--at: the time of day is required, e.g. --at 09:00');
  if (values.every !== undefined && !(EVERY_VALUES as string[]).includes(values.every)) throw new UsageError(`--every: expected ${EVERY_VALUES.join(', ')}`);
  if (values.tz !== undefined && !isValidZone(values.tz)) throw new UsageError(`--tz: not an IANA time zone: ${JSON.stringify(values.tz)} (e.g. Europe/Berlin)`);
  if (values.interval !== undefined && !/^\d+$/.test(values.interval)) throw new UsageError('--interval: expected a whole number');
  const account = await accountFor(prisma, values.account);
  const db = prismaExecutor(prisma);
  await withReminderDeps(cfg, db, async (deps) => {
    let reminder: ReminderRow;
    try {
      reminder = await addReminder(deps, {
        accountId: account.id,
        title: title.trim(),
        spec: {
          at: values.at!,
          ...(values.every !== undefined ? { every: values.every as Every } : {}),
          ...(values.on !== undefined ? { on: values.on } : {}),
          ...(values.interval !== undefined ? { interval: Number(values.interval) } : {}),
          ...(values.start !== undefined ? { start: values.start } : {}),
          ...(values.rrule !== undefined ? { rrule: values.rrule } : {}),
        },
        ...(values.tz !== undefined ? { timeZone: values.tz } : {}),
        accountZone: (await accountTimeSettings(prisma, account.id, cfg))!.zone,
      });
    } catch (err) {
      if (err instanceof RecurrenceError) throw new UsageError(err.message);
      throw err;
    }
    const [next] = occurrencesAfter(reminder, reminder.zone, new Date(Math.max(Date.now(), reminder.notBefore.getTime()) - 1), 1);
    io.out(`Added reminder ${reminder.id}: ${reminder.title} — ${whenText(reminder)}, ${reminder.timeZone ?? `${reminder.zone} (the account's zone)`}`);
    io.out(next ? `next: ${localAndUtc(next.at, next.local, reminder.zone)}` : 'no occurrence left: nothing will be delivered');
  });
}

async function list(cfg: Env, prisma: PrismaClient, io: CliIo, values: Values): Promise<void> {
  const accountId = values.account === undefined ? undefined : (await requireAccount(prisma, values.account)).id;
  const reminders = await listReminders(prismaExecutor(prisma), { ...(accountId ? { accountId } : {}), includeEnded: values.all === true }, cfg.DEFAULT_TIME_ZONE);
  printTable(
    io.out,
    ['ID', 'ACCOUNT', 'TITLE', 'WHEN', 'ZONE', 'STATE', 'NEXT (UTC)'],
    reminders.map((r) => [r.id, r.accountEmail, r.title, whenText(r), r.timeZone ?? `${r.zone} (account)`, r.state, r.nextAt ? r.nextAt.toISOString().slice(0, 16).replace('T', ' ') : '-']),
  );
}

async function show(cfg: Env, prisma: PrismaClient, io: CliIo, id: string | undefined): Promise<void> {
  if (!id) throw new UsageError('show needs a reminder id (see npm run cli -- reminders list)');
  const db = prismaExecutor(prisma);
  const r = await loadReminder(db, id, cfg.DEFAULT_TIME_ZONE);
  if (!r) throw new UsageError(`no reminder ${id} (see npm run cli -- reminders list --all)`);
  io.out(`reminder   ${r.id}`);
  io.out(`title      ${r.title}`);
  io.out(`account    ${r.accountEmail}`);
  io.out(`state      ${r.state}`);
  io.out(`when       ${whenText(r)}`);
  io.out(`rule       RRULE:${r.rrule} from ${r.startLocal.replace('T', ' ')}`);
  io.out(`zone       ${r.timeZone ?? `${r.zone} (follows the account's zone)`}`);
  if (r.state === 'active' || r.state === 'paused') {
    const upcoming = occurrencesAfter(r, r.zone, new Date(Math.max(Date.now(), r.notBefore.getTime()) - 1), 5);
    io.out(`next${r.state === 'paused' ? ' (when resumed)' : ''}${upcoming.length ? '' : '       none'}`);
    for (const o of upcoming) io.out(`           ${localAndUtc(o.at, o.local, r.zone)}`);
  }
  const handled = await listOccurrences(db, r.id, 10);
  if (handled.length > 0) {
    io.out('handled (newest first)');
    for (const o of handled) {
      const channels = [o.emailMessageId ? 'e-mail' : '', o.discordMessageId ? 'discord' : ''].filter(Boolean).join(' + ');
      io.out(`           ${o.localTime} (${o.dueAt.toISOString().slice(0, 16).replace('T', ' ')} UTC)  ${o.state}${channels ? ` by ${channels}` : ''}${o.notes.length ? `  ${o.notes.join('; ')}` : ''}`);
    }
  }
}

async function changeState(cfg: Env, prisma: PrismaClient, io: CliIo, id: string | undefined, sub: 'pause' | 'resume' | 'remove'): Promise<void> {
  if (!id) throw new UsageError(`${sub} needs a reminder id (see npm run cli -- reminders list)`);
  const db = prismaExecutor(prisma);
  const state = ({ pause: 'paused', resume: 'active', remove: 'removed' } as const)[sub];
  await withReminderDeps(cfg, db, async (deps) => {
    if (!(await changeReminderState(deps, id, state))) throw new UsageError(`no running reminder ${id} (see npm run cli -- reminders list)`);
  });
  const said = { pause: 'paused: nothing is delivered until resumed (what falls due meanwhile is not sent late)', resume: 'resumed: the next occurrence from now on is delivered', remove: 'removed' };
  io.out(`reminder ${id} ${said[sub]}`);
}

/** After `accounts timezone` set a zone: the account's reminders without a zone of their own plan again in it. */
export async function moveRemindersToAccountZone(cfg: Env, prisma: PrismaClient, accountId: string): Promise<number> {
  const db = prismaExecutor(prisma);
  if ((await listReminders(db, { accountId })).every((r) => r.timeZone !== null)) return 0;
  let moved = 0;
  await withReminderDeps(cfg, db, async (deps) => {
    moved = await moveAccountReminders(deps, accountId);
  });
  return moved;
}

async function withReminderDeps(cfg: Env, db: SqlExecutor, fn: (deps: ReminderDeps) => Promise<void>): Promise<void> {
  const client = await connectClient(cfg, await resolvePayloadKeys(cfg));
  try {
    const settings = reminderSettingsFromConfig(cfg);
    await fn({
      db,
      client,
      taskQueue: cfg.TEMPORAL_TASK_QUEUE,
      gmailTaskQueue: cfg.GMAIL_TASK_QUEUE,
      catchUpWindowMs: settings.catchUpWindowMs,
      ...(settings.deliveryTimeoutMs ? { deliveryTimeoutMs: settings.deliveryTimeoutMs } : {}),
    });
  } finally {
    await client.connection.close();
  }
}

/** Entry for src/cli/main.ts. Returns the exit code. */
export async function runRemindersCli(cfg: Env, argv: string[], io: CliIo = { out: (l) => console.log(l) }): Promise<number> {
  const parsed = parseSubcommand(io, { name: 'reminders', usage: USAGE, subcommands: SUBCOMMANDS, options: OPTIONS }, argv);
  if (typeof parsed === 'number') return parsed;
  const { sub, values, positionals } = parsed;
  return withDatabase(cfg, io, { name: 'reminders', usage: USAGE }, async (prisma) => {
    switch (sub) {
      case 'add':
        return add(cfg, prisma, io, values, positionals.join(' '));
      case 'list':
        return list(cfg, prisma, io, values);
      case 'show':
        return show(cfg, prisma, io, positionals[0]);
      case 'pause':
      case 'resume':
      case 'remove':
        return changeState(cfg, prisma, io, positionals[0], sub);
    }
  });
}
