// One workflow per reminder (id `reminder/<id>`): plan the next occurrence from the reminder's row
// (an activity: the rule, the zone, the state), sleep on a durable timer until it is due, deliver
// it (inbox and Discord) and mark it sent, and go on. An occurrence found later than the catch-up
// window (the cluster or the workers were down) is recorded as skipped instead; one within it is
// delivered once. Pause, resume, remove and a changed zone come as a signal: the workflow plans
// again from the row. Continue-as-new keeps the history short. The plumbing is reminder-run.ts.
import { log } from '@temporalio/workflow';
import { missedWhy, type OccurrenceRef, type ReminderWorkflowInput } from './contracts.js';
import { ReminderRun, type DueOccurrence } from './reminder-run.js';

export { reminderChangedSignal } from './contracts.js';

export async function reminderWorkflow(input: ReminderWorkflowInput): Promise<{ ended: string }> {
  const run = new ReminderRun(input);
  for (;;) {
    const plan = await run.plan();
    if (plan.skipped > 0) log.warn('occurrences missed past the catch-up window were skipped', { reminderId: run.reminderId, skipped: plan.skipped });
    if (plan.kind === 'ended') return { ended: plan.why };
    if (plan.kind === 'paused') {
      await run.changeSignalled(); // resumed, removed or changed
      continue;
    }
    if (!(await run.sleepUntil(plan))) continue; // the row changed while waiting: plan again
    await deliverOrSkip(run, plan);
    if (run.historyIsLong) await run.continueAsNew();
  }
}

/** Delivered once when on time or within the catch-up window; recorded as skipped when later. */
async function deliverOrSkip(run: ReminderRun, due: DueOccurrence): Promise<void> {
  const occurrence: OccurrenceRef = { reminderId: run.reminderId, dueAt: due.dueAt, localTime: due.localTime };
  const lateMs = run.lateMs(due);
  if (lateMs > run.catchUpWindowMs) {
    await run.skip(occurrence, missedWhy(lateMs, run.catchUpWindowMs));
  } else {
    const outcome = await run.deliver(occurrence);
    if (!outcome.delivered) await run.skip(occurrence, outcome.why);
  }
  run.handled(occurrence);
}
