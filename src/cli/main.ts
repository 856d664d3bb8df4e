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
const command = name ? commands[name] : undefined;
if (!command) {
  console.log(`usage: npm run cli -- <${Object.keys(commands).join('|')}> ...`);
  process.exit(2);
}
try {
  process.exit(await command(rest));
} catch (err) {
  console.error(`durable-inbox ${name}: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
