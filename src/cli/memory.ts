// `npm run cli -- memory ...`: the lessons the assistant learned from the user, and the user's say
// over them (docs/learning.md).
//   list [--account A] [--state S] [--kind K]       looks for new lessons first (learn), then lists them
//   learn [--account A]                             proposes what the recent corrections and edits teach
//   show <lesson id>                                the lesson, its evidence, dry run, versions and journal
//   accept <lesson id> [--dry-run] [--note N]        takes hold (a triage lesson writes its rule)
//   reject <lesson id> [--note N]                   never takes hold
//   edit <lesson id> [--text T] [--category C] [--actions LIST]   a new version
//   revert <lesson id> [--to N]                     stops taking hold (its rule removed); --to N: version N again, as a new version
//   weekly --account A                              the "what I learned" report of the last seven days
//   auto-accept --account A [--after N|off]         typed lessons (sign-off, greeting, language, tone) take hold alone after N confirmations (default off)
import { parseArgs } from 'node:util';
import { learningSettingsFromConfig, wholeDays } from '../config/settings.js';
import type { Env } from '../config/env.js';
import { type LearningSettings, type Lesson, LESSON_KINDS, LESSON_STATES, type LessonKind, type LessonState, type TriageRule } from '../learning/contracts.js';
import type { PrismaClient } from '../db/client.js';
import { prismaExecutor, type SqlExecutor } from '../db/sql-executor.js';
import { formatActionList, InvalidActionSpecError, parseActionList } from '../actions/action-specs.js';
import { CATEGORIES, isCategory } from '../mail/types.js';
import { dryRunLines, formText, scopeText } from '../learning/describe.js';
import { previewLesson } from '../learning/lesson-preview.js';
import {
  acceptLesson,
  editLesson,
  lessonEvents,
  lessonVersions,
  LessonChangeError,
  listLessons,
  loadLesson,
  rejectLesson,
  restoreVersion,
  revertLesson,
} from '../learning/memory.js';
import { deriveTriageLessons } from '../learning/triage-lessons.js';
import { learningWorkflow } from '../learning/learning-workflow.js';
import { connectClient } from '../temporal/client.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';
import { autoAcceptAfter, setAutoAcceptAfter } from '../learning/auto-accept.js';
import { weeklyReport } from '../learning/weekly-report.js';
import { evidenceByIds, type WritingEvidence } from '../learning/writing-evidence.js';
import { displaySafe } from '../shared/display-text.js';
import { accountIdOf } from '../operations/account-ref.js';
import { parseSubcommand, UsageError, withDatabase, type CliIo } from './command.js';
import { printTable } from './table.js';

export const USAGE = `usage: npm run cli -- memory list [--account A] [--state ${LESSON_STATES.join('|')}] [--kind ${LESSON_KINDS.join('|')}]
       npm run cli -- memory learn [--account A]
       npm run cli -- memory show <lesson id>
       npm run cli -- memory accept <lesson id> [--dry-run] [--note N]
       npm run cli -- memory reject <lesson id> [--note N]
       npm run cli -- memory edit <lesson id> [--text T] [--category C] [--actions LIST]
       npm run cli -- memory revert <lesson id> [--to VERSION]
       npm run cli -- memory auto-accept --account A [--after N|off]
       npm run cli -- memory weekly --account A
LIST: what a triage lesson's mail gets, e.g. add_label:Newsletters,mark_read, or none (docs/actions.md)`;

const OPTIONS = {
  account: { type: 'string' },
  state: { type: 'string' },
  kind: { type: 'string' },
  note: { type: 'string' },
  text: { type: 'string' },
  category: { type: 'string' },
  actions: { type: 'string' },
  to: { type: 'string' },
  after: { type: 'string' },
  'dry-run': { type: 'boolean', default: false },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

interface MemoryCtx {
  db: SqlExecutor;
  prisma: PrismaClient;
  io: CliIo;
  settings: LearningSettings;
}

function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${flag}: expected one of ${allowed.join(', ')}`);
  return value as T;
}

/**
 * Writing lessons from the account's new evidence (or every account's): the learning Schedule's
 * workflow, started now for it and waited for, so the LLM call goes through the worker's guard and
 * budget like every tick. One run per account (or for all) at a time: a second `memory learn` joins it.
 */
async function learnWriting(cfg: Env, io: CliIo, accountId: string | undefined): Promise<void> {
  const client = await connectClient(cfg, await resolvePayloadKeys(cfg));
  try {
    const workflowId = `learning-cli-${accountId ?? 'all'}`;
    io.out(`writing lessons: workflow ${workflowId} (the workers run it; npm run dev)`);
    const handle = await client.workflow.start(learningWorkflow, {
      taskQueue: cfg.TEMPORAL_TASK_QUEUE,
      workflowId,
      workflowIdConflictPolicy: 'USE_EXISTING',
      args: [{ llmTaskQueue: cfg.LLM_TASK_QUEUE, ...(accountId ? { accountIds: [accountId] } : {}) }],
    });
    const result = await handle.result();
    io.out(`writing lessons: ${result.proposed.length} proposed or updated from the new edits of ${result.accounts} account(s)`);
    for (const s of result.skipped) io.out(`  skipped ${s.accountId}: ${s.reason} (the next tick asks again)`);
  } finally {
    await client.connection.close();
  }
}

/** Proposes what the corrections of the account (or every active account) teach; returns how many changed. */
async function learn(ctx: MemoryCtx, accountId: string | undefined): Promise<number> {
  const ids = accountId ? [accountId] : (await ctx.prisma.account.findMany({ where: { status: 'active' }, select: { id: true } })).map((a) => a.id);
  let changed = 0;
  for (const id of ids) changed += (await deriveTriageLessons(ctx.db, { accountId: id, settings: ctx.settings })).changed.length;
  return changed;
}

const ruleText = (rule: TriageRule | undefined) => (rule ? `category ${rule.category}, then ${formatActionList(rule.actions)}` : '-');

async function list(ctx: MemoryCtx, values: Values): Promise<void> {
  const accountId = await accountIdOf(ctx.prisma, values.account);
  const state = oneOf<LessonState>('state', values.state, LESSON_STATES);
  const kind = oneOf<LessonKind>('kind', values.kind, LESSON_KINDS);
  if (ctx.settings.enabled) await learn(ctx, accountId);
  const lessons = await listLessons(ctx.db, { ...(accountId ? { accountId } : {}), ...(state ? { state } : {}), ...(kind ? { kind } : {}) });
  if (lessons.length === 0) {
    ctx.io.out(ctx.settings.enabled ? 'No lessons yet.' : 'No lessons (learning is off: LEARNING=false).');
    return;
  }
  printTable(
    ctx.io.out,
    ['ID', 'KIND', 'SCOPE', 'STATE', 'VERSION', 'EVIDENCE', 'LESSON'],
    lessons.map((l) => [l.id, l.kind, scopeText(l), l.state, String(l.version), String(l.current.evidence.length), l.current.text]),
  );
}

async function requireLesson(ctx: MemoryCtx, id: string | undefined): Promise<Lesson> {
  if (!id) throw new UsageError('needs a lesson id (see npm run cli -- memory list)');
  const lesson = await loadLesson(ctx.db, id);
  if (!lesson) throw new UsageError(`no lesson ${id} (see npm run cli -- memory list)`);
  return lesson;
}

async function printDryRun(ctx: MemoryCtx, lesson: Lesson): Promise<void> {
  const result = await previewLesson(ctx.db, lesson, ctx.settings.dryRunWindowMs);
  if (result) for (const line of dryRunLines(result, wholeDays(ctx.settings.dryRunWindowMs))) ctx.io.out(`dry run    ${line}`);
}

async function show(ctx: MemoryCtx, id: string | undefined): Promise<void> {
  const lesson = await requireLesson(ctx, id);
  const out = ctx.io.out;
  out(`lesson     ${lesson.id} (${lesson.kind}, ${scopeText(lesson)})`);
  out(`state      ${lesson.state}, version ${lesson.version}${lesson.ruleId ? `, in force as rule ${lesson.ruleId}` : ''}`);
  out(`says       ${lesson.current.text}`);
  if (lesson.kind === 'triage') out(`rule       ${ruleText(lesson.current.rule)}`);
  else out(`form       ${formText(lesson)}`);
  out(`evidence   ${lesson.current.evidence.length} correction(s)`);
  const kept = await evidenceByIds(ctx.db, lesson.current.evidence.flatMap((e) => e.evidenceId ?? []));
  for (const e of lesson.current.evidence) {
    out(`  ${e.at}  ${e.source} ${e.kind}${e.argument ? `:${e.argument}` : ''}  ${e.sender}  ${JSON.stringify(e.subject ?? '')}  ${e.link}${e.actionId ? `  (actions show ${e.actionId})` : ''}`);
    if (e.evidenceId) for (const line of editLines(kept.get(e.evidenceId))) out(`      ${line}`);
  }
  await printDryRun(ctx, lesson);
  out('versions');
  for (const v of await lessonVersions(ctx.db, lesson.id)) {
    out(`  ${v.version}  ${v.createdAt}  by ${v.createdBy}${v.revertOf ? ` (restores ${v.revertOf})` : ''}  ${v.text}${v.rule ? `  [${ruleText(v.rule)}]` : ''}`);
  }
  out('journal');
  for (const e of await lessonEvents(ctx.db, lesson.id)) {
    out(`  ${e.at}  ${e.event}  ${e.fromState ?? '-'} -> ${e.toState}  v${e.version}  by ${e.decidedBy}${e.note ? `  ${e.note}` : ''}`);
  }
}

/** A writing lesson's edit while its evidence is kept: the lines added (+) and removed (-), or the rework's instructions. */
function editLines(e: WritingEvidence | undefined): string[] {
  if (!e) return ['(its text is deleted: evidence is kept LEARNING_EVIDENCE_DAYS days; the thread is linked above)'];
  if (e.source === 'rework') return e.final.split('\n').map((l) => `instructions: ${displaySafe(l)}`);
  return [...e.diff.added.map((l) => `+ ${displaySafe(l)}`), ...e.diff.removed.map((l) => `- ${displaySafe(l)}`)];
}

function editOf(lesson: Lesson, values: Values): { text?: string; rule?: TriageRule } {
  const edit: { text?: string; rule?: TriageRule } = {};
  if (values.text !== undefined) {
    if (values.text.trim() === '') throw new UsageError('--text: expected the lesson text');
    edit.text = values.text.trim();
  }
  if (values.category !== undefined || values.actions !== undefined) {
    if (lesson.kind !== 'triage' || !lesson.current.rule) throw new UsageError('--category and --actions edit a triage lesson\'s rule');
    if (values.category !== undefined && !isCategory(values.category)) throw new UsageError(`--category: expected one of ${CATEGORIES.join(', ')}`);
    let actions = lesson.current.rule.actions;
    try {
      if (values.actions !== undefined) actions = parseActionList(values.actions);
    } catch (err) {
      if (err instanceof InvalidActionSpecError) throw new UsageError(`--actions: ${err.message}`);
      throw err;
    }
    edit.rule = { category: (values.category as TriageRule['category'] | undefined) ?? lesson.current.rule.category, actions };
  }
  if (!edit.text && !edit.rule) throw new UsageError('edit needs --text, --category or --actions');
  return edit;
}

async function change(ctx: MemoryCtx, sub: string, values: Values, id: string | undefined): Promise<void> {
  const lesson = await requireLesson(ctx, id);
  const out = ctx.io.out;
  switch (sub) {
    case 'accept': {
      await printDryRun(ctx, lesson);
      if (values['dry-run']) return out('dry run only: nothing changed');
      const { lesson: after, moved } = await acceptLesson(ctx.db, lesson.id, 'cli', values.note);
      return out(moved ? `Accepted lesson ${after.id}${after.ruleId ? `: rule ${after.ruleId} in force from the next mail` : ''}` : `Lesson ${after.id} was accepted already`);
    }
    case 'reject': {
      const { lesson: after, moved } = await rejectLesson(ctx.db, lesson.id, 'cli', values.note);
      return out(moved ? `Rejected lesson ${after.id}: it will not be proposed again` : `Lesson ${after.id} was rejected already`);
    }
    case 'edit': {
      const after = await editLesson(ctx.db, lesson.id, editOf(lesson, values), 'cli', values.note);
      return out(`Lesson ${after.id} is now version ${after.version} (${after.state}): ${after.current.text}`);
    }
    case 'revert': {
      if (values.to !== undefined) {
        if (!/^\d+$/.test(values.to)) throw new UsageError('--to: expected a version number (see npm run cli -- memory show)');
        const after = await restoreVersion(ctx.db, lesson.id, Number(values.to), 'cli', values.note);
        return out(`Lesson ${after.id} is now version ${after.version}, a copy of version ${values.to} (${after.state})`);
      }
      const { lesson: after, moved } = await revertLesson(ctx.db, lesson.id, 'cli', values.note);
      return out(moved ? `Reverted lesson ${after.id}: it no longer takes hold${lesson.ruleId ? ` (rule ${lesson.ruleId} removed)` : ''}` : `Lesson ${after.id} was reverted already`);
    }
  }
}

/** Shows or sets the account's auto-accept setting (auto-accept.ts). */
async function autoAccept(ctx: MemoryCtx, values: Values): Promise<void> {
  if (!values.account) throw new UsageError('auto-accept needs --account');
  const accountId = (await accountIdOf(ctx.prisma, values.account))!;
  if (values.after !== undefined) {
    if (values.after !== 'off' && !/^[1-9]\d{0,2}$/.test(values.after)) throw new UsageError('--after: expected a number of confirmations (1-999) or off');
    await setAutoAcceptAfter(ctx.db, accountId, values.after === 'off' ? null : Number(values.after));
  }
  const after = await autoAcceptAfter(ctx.db, accountId);
  ctx.io.out(
    after === null
      ? `Auto-accept is off for ${values.account}: every lesson waits for you.`
      : `Typed lessons of ${values.account} (a sign-off, greeting, language or tone that fits its type) take hold without review after ${after} confirmation(s); every free-text lesson, and every triage lesson, waits for you.`,
  );
}

/** Entry for src/cli/main.ts. Returns the exit code. */
export async function runMemoryCli(cfg: Env, argv: string[], io: CliIo = { out: (l) => console.log(l) }): Promise<number> {
  const command = { name: 'memory', usage: USAGE, subcommands: ['list', 'learn', 'show', 'accept', 'reject', 'edit', 'revert', 'auto-accept', 'weekly'], options: OPTIONS };
  const parsed = parseSubcommand(io, command, argv);
  if (typeof parsed === 'number') return parsed;
  return withDatabase(cfg, io, command, async (prisma) => {
    const ctx: MemoryCtx = { db: prismaExecutor(prisma), prisma, io, settings: learningSettingsFromConfig(cfg) };
    try {
      switch (parsed.sub) {
        case 'list':
          return await list(ctx, parsed.values);
        case 'learn': {
          if (!ctx.settings.enabled) return io.out('Learning is off (LEARNING=false): nothing proposed.');
          const accountId = await accountIdOf(prisma, parsed.values.account);
          const changed = await learn(ctx, accountId);
          io.out(`triage lessons: ${changed} proposed or updated from the recent corrections`);
          await learnWriting(cfg, io, accountId);
          return io.out('see npm run cli -- memory list --state proposed');
        }
        case 'show':
          return await show(ctx, parsed.positionals[0]);
        case 'auto-accept':
          return await autoAccept(ctx, parsed.values);
        case 'weekly': {
          if (!parsed.values.account) throw new UsageError('weekly needs --account');
          const report = await weeklyReport(ctx.db, { accountId: (await accountIdOf(prisma, parsed.values.account))! });
          io.out(report.subject);
          return io.out(`\n${report.body}`);
        }
        default:
          return await change(ctx, parsed.sub, parsed.values, parsed.positionals[0]);
      }
    } catch (err) {
      if (err instanceof LessonChangeError) throw new UsageError(err.message);
      throw err;
    }
  });
}
