// `npm run cli -- <command> ...`: a tiny dispatcher; each command lives in its own module.
import { loadConfigOrExit } from '../config/env.js';
import { groupHelp, isHelp, overallHelp } from './help.js';

// Each group's module is loaded when it runs: help loads none, a command only its own group's.
const commands: Record<string, (argv: string[]) => Promise<number>> = {
  accounts: async (argv) => (await import('./accounts.js')).runAccountsCli(loadConfigOrExit(), argv),
  actions: async (argv) => (await import('./actions.js')).runActionsCli(loadConfigOrExit(), argv),
  agents: async (argv) => (await import('./agents.js')).runAgentsCli(loadConfigOrExit(), argv),
  backfill: async (argv) => (await import('./backfill.js')).runBackfillCli(loadConfigOrExit(), argv),
  cleanup: async (argv) => (await import('./cleanup.js')).runCleanupCli(loadConfigOrExit(), argv),
  reminders: async (argv) => (await import('./reminders.js')).runRemindersCli(loadConfigOrExit(), argv),
  memory: async (argv) => (await import('./memory.js')).runMemoryCli(loadConfigOrExit(), argv),
  'mcp-tokens': async (argv) => (await import('./mcp-tokens.js')).runMcpTokensCli(loadConfigOrExit(), argv),
  rules: async (argv) => (await import('./rules.js')).runRulesCli(loadConfigOrExit(), argv),
  schedules: async (argv) => (await import('./schedules.js')).runSchedulesCli(loadConfigOrExit(), argv),
  threads: async (argv) => (await import('./threads.js')).runThreadsCli(loadConfigOrExit(), argv),
};

const argv = process.argv.slice(2);
// `senders ...` is `cleanup senders ...`: the one command that reads well alone.
const [name, ...rest] = argv[0] === 'senders' && !isHelp(argv[1]) ? ['cleanup', ...argv] : argv;
// Help needs no configuration: it is read before any is loaded. Asked for, it exits 0; shown for a
// missing or unknown group or command, 2.
if (name === undefined || isHelp(name)) {
  console.log(overallHelp());
  process.exit(name === undefined ? 2 : 0);
}
const command = commands[name];
if (!command) {
  console.log(`durable-inbox: no group ${JSON.stringify(name)}\n${overallHelp()}`);
  process.exit(2);
}
if (rest.length === 0 || isHelp(rest[0])) {
  console.log(groupHelp(name));
  process.exit(rest.length === 0 ? 2 : 0);
}
try {
  process.exit(await command(rest));
} catch (err) {
  console.error(`durable-inbox ${name}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
