// What `npm run cli -- --help` (or `durable-inbox --help`) says: each group and what it is for, one
// line each; and `<group> --help`: its commands, a line each, then its usage. No configuration or
// database is needed to read it.
import { USAGE as ACCOUNTS_USAGE } from './accounts.js';
import { USAGE as ACTIONS_USAGE } from './actions.js';
import { USAGE as AGENTS_USAGE } from './agents.js';
import { USAGE as BACKFILL_USAGE } from './backfill.js';
import { USAGE as CLEANUP_USAGE } from './cleanup.js';
import { USAGE as MEMORY_USAGE } from './memory.js';
import { USAGE as MCP_TOKENS_USAGE } from './mcp-tokens.js';
import { USAGE as REMINDERS_USAGE } from './reminders.js';
import { USAGE as RULES_USAGE } from './rules.js';
import { USAGE as SCHEDULES_USAGE } from './schedules.js';
import { USAGE as THREADS_USAGE } from './threads.js';

export interface GroupHelp {
  /** What the group is for, one line. */
  summary: string;
  /** Each command and what it does, one line. */
  commands: [command: string, does: string][];
  usage: string;
}

export const GROUPS: Record<string, GroupHelp> = {
  accounts: {
    summary: 'connect Gmail accounts, list or disconnect them, check their Gmail set-up, resume their paused model, set their time zone',
    commands: [
      ['connect', 'connect a Gmail account (consent in the browser); its mail is handled from then on'],
      ['list', 'every account, its status and its model’s (a pause says why and what to do)'],
      ['disconnect', 'stop handling an account: watch stopped, grant revoked, tokens deleted'],
      ['llm-resume', 'resume an account’s model after a refused key or credits; its waiting threads carry on'],
      ['timezone', 'show an account’s time zone, or set it'],
      ['doctor', 'check an account’s Gmail set-up (grant, scopes, Gmail API, push) and say what to fix'],
    ],
    usage: ACCOUNTS_USAGE,
  },
  threads: {
    summary: 'what the assistant did with each thread and why; classify again, snooze, remind, send later',
    commands: [
      ['list', 'threads, newest first, with their state'],
      ['show', 'one thread and its decision log'],
      ['reclassify', 'classify a thread again (after a rule changed), or every thread touched since'],
      ['snooze', 'archive a thread now; it is back in the inbox at the time given'],
      ['unsnooze', 'bring a snoozed thread back now'],
      ['remind', 'remind you of a thread then; the thread stays where it is'],
      ['send-later', 'send the thread’s draft at the time given, as it is then'],
      ['cancel', 'cancel a thread’s timers'],
    ],
    usage: THREADS_USAGE,
  },
  actions: {
    summary: 'what the assistant does in Gmail: approve, reject or undo it; the kill switch, the safety policy',
    commands: [
      ['list', 'the journal of actions, newest first'],
      ['show', 'one action: why, its state, how to undo it'],
      ['approve', 'approve an action that waits for approval'],
      ['reject', 'reject an action that waits for approval'],
      ['undo', 'take back an action, or everything an account did since'],
      ['pause', 'the kill switch: no automatic action (drafting goes on)'],
      ['resume', 'automatic actions again'],
      ['defaults', 'what each category’s mail gets, or set it'],
      ['policy', 'the safety policy: who may be auto-replied or forwarded to, protected senders, caps'],
    ],
    usage: ACTIONS_USAGE,
  },
  rules: {
    summary: 'your triage rules, read before the model: list, add, enable or disable, remove, test them',
    commands: [
      ['list', 'the rules in force: yours and the built-in ones'],
      ['add', 'add a rule: the mail it matches and the category, actions, instruction or agent it gives'],
      ['enable', 'turn a rule on'],
      ['disable', 'turn a rule off'],
      ['remove', 'delete a rule'],
      ['test', 'which rule would decide an email, or the rules over an account’s recent threads'],
    ],
    usage: RULES_USAGE,
  },
  memory: {
    summary: 'the lessons learned from your corrections and edits: review, accept, reject, edit, revert them',
    commands: [
      ['list', 'the lessons (after looking for new ones)'],
      ['learn', 'propose what the recent corrections and edits teach'],
      ['show', 'one lesson: its evidence, dry run, versions and journal'],
      ['accept', 'let a lesson take hold'],
      ['reject', 'a lesson never takes hold'],
      ['edit', 'change a lesson (a new version)'],
      ['revert', 'a lesson stops taking hold, or goes back to an earlier version'],
      ['auto-accept', 'let typed lessons (sign-off, greeting, language, tone) take hold alone after N confirmations'],
      ['weekly', 'the “what I learned” report of the last seven days'],
    ],
    usage: MEMORY_USAGE,
  },
  'mcp-tokens': {
    summary: 'the bearer tokens that open the MCP server over HTTP (/mcp) to an assistant: make, list, revoke',
    commands: [
      ['create', 'a new token, read-only or read-write, shown once'],
      ['list', 'every token: who it is for, its scope, its last use'],
      ['revoke', 'a token opens nothing from now on'],
    ],
    usage: MCP_TOKENS_USAGE,
  },
  agents: {
    summary: 'the agent profiles that rules can hand a thread to: their instructions, tools and limits',
    commands: [
      ['list', 'the profiles'],
      ['show', 'one profile in full'],
      ['set', 'create or change a profile'],
      ['remove', 'delete a profile'],
    ],
    usage: AGENTS_USAGE,
  },
  schedules: {
    summary: 'scheduled agent runs (a morning brief, a digest): add, list, pause, trigger, remove them',
    commands: [
      ['add', 'run an agent on a schedule'],
      ['list', 'the schedules, paused or not, and their next run'],
      ['show', 'one schedule: next runs, recent, skipped and missed ones'],
      ['pause', 'pause a schedule'],
      ['resume', 'resume a paused schedule'],
      ['trigger', 'run a schedule now'],
      ['remove', 'delete a schedule'],
    ],
    usage: SCHEDULES_USAGE,
  },
  reminders: {
    summary: 'reminders delivered into your inbox (and Discord), once or on a recurrence',
    commands: [
      ['add', 'add a reminder: its time, and how it recurs'],
      ['list', 'the reminders, their rule in words and their next time'],
      ['show', 'one reminder: its rule, its next times, the last ones delivered'],
      ['pause', 'deliver nothing until resumed'],
      ['resume', 'deliver again, from now on'],
      ['remove', 'delete a reminder'],
    ],
    usage: REMINDERS_USAGE,
  },
  backfill: {
    summary: 'read a mailbox’s older mail (start, watch, cancel), and archive old mail',
    commands: [
      ['start', 'start reading an account’s older mail'],
      ['status', 'its progress, rate and time left'],
      ['cancel', 'cancel it; what was read stays'],
      ['archive', 'run the archiver now'],
    ],
    usage: BACKFILL_USAGE,
  },
  cleanup: {
    summary: 'clean up a mailbox: who sends what, unsubscribe from a sender, archive or trash a sender’s or a search’s mail in bulk, the cold-email allowlist',
    commands: [
      ['senders', 'per sender or domain: messages, unread share, replied to, category, List-Unsubscribe, last date'],
      ['unsubscribe', 'unsubscribe from a sender (one-click or mailto:), journaled and approved like any action'],
      ['bulk', 'archive or trash all the mail of a sender, a domain or a search (--query, Gmail’s syntax), in batches within the quota (--dry-run counts first)'],
      ['bulk-status', 'a bulk run’s progress'],
      ['bulk-undo', 'take a bulk run back, batch by batch, exactly the messages it moved'],
      ['cold-allow', 'never hold back a sender’s or a domain’s mail as cold email'],
      ['cold-unallow', 'take a sender or a domain off the cold-email allowlist'],
      ['cold-allowlist', 'the senders and domains the cold-email gate lets through'],
    ],
    usage: CLEANUP_USAGE,
  },
};

const HELP_WORDS = ['--help', '-h', 'help'];

export function isHelp(arg: string | undefined): boolean {
  return arg !== undefined && HELP_WORDS.includes(arg);
}

/** Lines of two columns, the first padded to the widest. */
function columns(rows: [string, string][], indent: string): string {
  const width = Math.max(...rows.map(([a]) => a.length));
  return rows.map(([a, b]) => `${indent}${a.padEnd(width)}  ${b}`).join('\n');
}

export function overallHelp(): string {
  return [
    'usage: npm run cli -- <group> <command> ...   (or, after npm link: durable-inbox <group> <command> ...)',
    '',
    columns(Object.entries(GROUPS).map(([name, g]) => [name, g.summary]), '  '),
    '',
    'npm run cli -- <group> --help   its commands, a line each, and their options',
  ].join('\n');
}

export function groupHelp(name: string): string {
  const group = GROUPS[name]!;
  return [`npm run cli -- ${name}: ${group.summary}`, '', columns(group.commands, '  '), '', group.usage].join('\n');
}
