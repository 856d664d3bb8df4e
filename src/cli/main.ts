// `npm run cli -- <command> ...`: a tiny dispatcher; each command lives in its own module.
import { loadConfigOrExit } from '../config/env.js';
import { runAccountsCli } from './accounts.js';
import { runActionsCli } from './actions.js';
import { runAgentsCli } from './agents.js';
import { runBackfillCli } from './backfill.js';
import { runRemindersCli } from './reminders.js';
import { runMemoryCli } from './memory.js';
import { runRulesCli } from './rules.js';
import { runSchedulesCli } from './schedules.js';
import { runThreadsCli } from './threads.js';
import { groupHelp, isHelp, overallHelp } from './help.js';

const commands: Record<string, (argv: string[]) => Promise<number>> = {
  accounts: (argv) => runAccountsCli(loadConfigOrExit(), argv),
  actions: (argv) => runActionsCli(loadConfigOrExit(), argv),
  agents: (argv) => runAgentsCli(loadConfigOrExit(), argv),
  backfill: (argv) => runBackfillCli(loadConfigOrExit(), argv),
  reminders: (argv) => runRemindersCli(loadConfigOrExit(), argv),
  memory: (argv) => runMemoryCli(loadConfigOrExit(), argv),
  rules: (argv) => runRulesCli(loadConfigOrExit(), argv),
  schedules: (argv) => runSchedulesCli(loadConfigOrExit(), argv),
  threads: (argv) => runThreadsCli(loadConfigOrExit(), argv),
};

const [name, ...rest] = process.argv.slice(2);
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
