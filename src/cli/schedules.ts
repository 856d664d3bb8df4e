// `npm run cli -- schedules ...`: scheduled agent runs (docs/time.md, "Schedules and reminders").
//   add --account A --name N --profile P --prompt TEXT (--at HH:MM [--days mon,...] | --cron "m h dom mon dow") [--tz Zone] [--label L] [--discord yes|no]
//   list [--account A]          with each Schedule's state: paused, next run
//   show <ref>                  the Schedule (next runs, recent, skipped, missed) and the last runs
//   pause <ref> [--reason T] | resume <ref> | trigger <ref> | remove <ref>
// <ref> is the schedule's id, its Temporal Schedule id (schedule-<id>), or its name with --account.
// State comes from the Temporal Schedule: `temporal schedule toggle|trigger` show here too.
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { userScheduleSettingsFromConfig } from '../config/settings.js';
import type { Env } from '../config/env.js';
import { prismaExecutor, type SqlExecutor } from '../db/sql-executor.js';
import { loadAgentProfile } from '../agent/profiles.js';
import { isIanaZone } from '../schedules/calendar-spec.js';
import { scheduleIdOf, scheduleTiming, WEEKDAYS, type AgentScheduleRow, type ScheduleTiming } from '../schedules/contracts.js';
import { findAgentSchedule, listAgentSchedules, listScheduleRuns } from '../schedules/schedule-store.js';
import { addUserSchedule, removeUserSchedule, userScheduleState, zoneOf } from '../schedules/user-schedules.js';
import { connectClient } from '../temporal/client.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';
import { accountIdOf, requireAccount } from '../operations/account-ref.js';
import { findSchedule, triggerSchedule } from '../operations/schedules.js';
import { parseSubcommand, UsageError, withDatabase, type CliIo } from './command.js';
import { printTable } from './table.js';

export const USAGE = `usage: npm run cli -- schedules add --account A --name N --profile brief|digest|<profile> --prompt TEXT
                                   (--at HH:MM [--days ${WEEKDAYS.join(',')}] | --cron "30 7 * * 1-5")
                                   [--tz Europe/Berlin] [--label L] [--discord yes|no]
       npm run cli -- schedules list [--account A]
       npm run cli -- schedules show|trigger|resume|remove <ref> [--account A]
       npm run cli -- schedules pause <ref> [--account A] [--reason TEXT]
<ref>: the schedule's id, its Temporal Schedule id (schedule-<id>), or its name with --account.
Without --tz a schedule follows the account's time zone (and moves with it).`;

const OPTIONS = {
  account: { type: 'string' },
  name: { type: 'string' },
  profile: { type: 'string' },
  prompt: { type: 'string' },
  at: { type: 'string' },
  days: { type: 'string' },
  cron: { type: 'string' },
  tz: { type: 'string' },
  label: { type: 'string' },
  discord: { type: 'string' },
  reason: { type: 'string' },
} as const;

const addArgs = z.object({
  account: z.string({ error: 'expected the account (id or email)' }),
  name: z.string({ error: 'expected a name' }).trim().min(1).max(100),
  profile: z.string({ error: 'expected an agent profile (brief, digest, ...)' }).min(1),
  prompt: z.string().trim().max(4000).optional(),
  tz: z.string().refine(isIanaZone, 'expected an IANA time zone such as Europe/Berlin').optional(),
  label: z.string().trim().min(1).max(225).optional(),
  discord: z.enum(['yes', 'no'], { error: 'expected yes or no' }).default('yes'),
});

const DEFAULT_PROMPTS: Record<string, string> = {
  brief: 'What needs me today, and what did you do since the last brief?',
  digest: 'Summarise the newsletters you archived since the last digest.',
};

function timingOf(values: Record<string, unknown>): ScheduleTiming {
  if (values.at !== undefined && values.cron !== undefined) throw new UsageError('--at and --cron: give one of them');
  const raw = values.cron !== undefined
    ? { cron: values.cron }
    : { at: values.at, ...(values.days !== undefined ? { days: String(values.days).split(',').map((d) => d.trim().toLowerCase()).filter(Boolean) } : {}) };
  if (values.at === undefined && values.cron === undefined) throw new UsageError('--at HH:MM or --cron: when it runs');
  const parsed = scheduleTiming.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues.at(-1)!;
    throw new UsageError(`${values.cron !== undefined ? '--cron' : issue.path[0] === 'days' ? '--days' : '--at'}: ${issue.message}`);
  }
  return parsed.data;
}

export function describeTiming(t: ScheduleTiming): string {
  return 'cron' in t ? `cron ${t.cron}` : `${t.at} ${t.days.length === 7 ? 'daily' : t.days.join(',')}`;
}

const when = (d: Date | undefined, zone: string) =>
  d ? `${d.toISOString().replace('T', ' ').slice(0, 16)} UTC (${d.toLocaleString('sv-SE', { timeZone: zone }).slice(0, 16)} ${zone})` : '–';

async function show(client: Client, db: SqlExecutor, io: CliIo, row: AgentScheduleRow, defaultZone?: string): Promise<void> {
  const state = await userScheduleState(client, row);
  const zone = state?.zone ?? (await zoneOf(db, row, defaultZone));
  io.out(`schedule ${row.name} (${row.id}) of account ${row.accountId}`);
  io.out(`  Temporal Schedule: ${scheduleIdOf(row.id)}${state ? '' : ' — missing (re-add the schedule)'}`);
  io.out(`  when: ${describeTiming(row.timing)} in ${zone}${row.timeZone ? '' : " (the account's zone)"}`);
  io.out(`  agent: ${row.profile}; label ${row.label}; Discord ${row.discord ? 'yes' : 'no'}; delivery thread ${row.deliveryThreadId ?? '(first run)'}`);
  io.out(`  prompt: ${row.prompt}`);
  if (state) {
    io.out(`  state: ${state.paused ? `paused${state.note ? ` (${state.note})` : ''}` : 'active'}`);
    io.out(`  policies: catch-up window ${Math.round(state.catchupWindowMs / 60_000)} min, overlap skip, jitter ${Math.round(state.jitterMs / 1000)} s`);
    io.out(`  skipped (a run still going): ${state.skippedOverlap}; missed (down past the catch-up window): ${state.missedCatchup}`);
    io.out(`  next: ${state.nextRuns.slice(0, 3).map((d) => when(d, zone)).join('; ') || '–'}`);
  }
  const runs = await listScheduleRuns(db, row.id, 10);
  if (runs.length === 0) return io.out('  runs: none yet');
  io.out('  runs (newest first):');
  printTable((l) => io.out(`    ${l}`), ['STARTED', 'FOR', 'STATUS', 'STEPS', 'TOKENS', 'GMAIL', 'NOTE'], runs.map((r) => [
    r.startedAt.toISOString().slice(0, 19),
    r.localSlot,
    r.status,
    String(r.steps),
    `${r.tokensIn}/${r.tokensOut}`,
    r.gmailMessageId ?? '–',
    r.note ?? '',
  ]));
}

/** Entry for src/cli/main.ts. Returns the exit code. */
export async function runSchedulesCli(cfg: Env, argv: string[], io: CliIo = { out: (l) => console.log(l) }): Promise<number> {
  const parsed = parseSubcommand(io, { name: 'schedules', usage: USAGE, subcommands: ['add', 'list', 'show', 'pause', 'resume', 'trigger', 'remove'], options: OPTIONS }, argv);
  if (typeof parsed === 'number') return parsed;
  const { sub, values } = parsed;
  const settings = userScheduleSettingsFromConfig(cfg);
  let client: Client | undefined;
  const temporal = async () => (client ??= await connectClient(cfg, await resolvePayloadKeys(cfg)));
  try {
    return await withDatabase(cfg, io, { name: 'schedules', usage: USAGE }, async (prisma) => {
      const db = prismaExecutor(prisma);
      if (sub === 'add') {
        const a = addArgs.safeParse(values);
        if (!a.success) {
          const issue = a.error.issues[0]!;
          throw new UsageError(`--${String(issue.path[0])}: ${issue.message}`);
        }
        const timing = timingOf(values);
        const account = await requireAccount(prisma, a.data.account);
        if (!(await loadAgentProfile(db, a.data.profile))) throw new UsageError(`--profile: no agent profile ${a.data.profile} (see npm run cli -- agents list)`);
        if (await findAgentSchedule(db, account.id, a.data.name)) throw new UsageError(`--name: ${account.email} has a schedule ${a.data.name} already`);
        const prompt = a.data.prompt ?? DEFAULT_PROMPTS[a.data.profile];
        if (!prompt) throw new UsageError('--prompt: what the agent is asked at each run');
        const row = await addUserSchedule(await temporal(), db, {
          accountId: account.id,
          name: a.data.name,
          profile: a.data.profile,
          prompt,
          timing,
          timeZone: a.data.tz ?? null,
          label: a.data.label ?? (a.data.profile === 'digest' ? 'Digest' : 'Brief'),
          discord: a.data.discord === 'yes',
        }, settings);
        io.out(`added schedule ${row.name} (${row.id}): ${row.profile} at ${describeTiming(timing)} in ${await zoneOf(db, row, settings.defaultZone)}; Temporal Schedule ${scheduleIdOf(row.id)}`);
        return;
      }
      if (sub === 'list') {
        const rows = await listAgentSchedules(db, await accountIdOf(prisma, values.account));
        if (rows.length === 0) return io.out('No schedules. Add one: npm run cli -- schedules add --account A --name "Morning brief" --profile brief --at 07:30');
        const c = await temporal();
        const lines: string[][] = [];
        for (const r of rows) {
          const state = await userScheduleState(c, r);
          const zone = state?.zone ?? (await zoneOf(db, r, settings.defaultZone));
          lines.push([r.id, r.name, r.profile, `${describeTiming(r.timing)} ${zone}`, state ? (state.paused ? 'paused' : 'active') : 'missing', when(state?.nextRuns[0], zone)]);
        }
        printTable(io.out, ['ID', 'NAME', 'AGENT', 'WHEN', 'STATE', 'NEXT'], lines);
        return;
      }
      const row = await findSchedule(prisma, db, parsed.positionals[0], values.account);
      const c = await temporal();
      const handle = c.schedule.getHandle(scheduleIdOf(row.id));
      switch (sub) {
        case 'show':
          return show(c, db, io, row, settings.defaultZone);
        case 'pause':
          await handle.pause(values.reason ?? 'paused with npm run cli -- schedules pause');
          return io.out(`paused ${row.name}; resume with: npm run cli -- schedules resume ${row.id}`);
        case 'resume':
          await handle.unpause('resumed with npm run cli -- schedules resume');
          return io.out(`resumed ${row.name}`);
        case 'trigger':
          await triggerSchedule(c, row);
          return io.out(`triggered ${row.name}: the report arrives in the inbox shortly (npm run cli -- schedules show ${row.id})`);
        case 'remove':
          await removeUserSchedule(c, db, row);
          return io.out(`removed ${row.name} and its Temporal Schedule`);
      }
    });
  } finally {
    await client?.connection.close();
  }
}
