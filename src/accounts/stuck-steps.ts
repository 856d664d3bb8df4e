// Workflow code: a Gmail step that keeps failing with an error a retry could fix. Its retries are
// bounded in time (scheduleToCloseTimeout, activity-proxies.ts); when they run out, one cheap call
// asks whether the account's Gmail answers at all. If it does, the step is stuck on this thread's
// own mail (every read of one message answers 500, say): the failure goes up and the thread ends in
// Action Required with the reason. If it does not, the whole account is out: the workflow waits,
// looking again every recheck interval, and then runs the step afresh, as long as the outage lasts.
import { log, sleep } from '@temporalio/workflow';
import { runningAgainAfter } from '../temporal/waiting-proxy.js';
import { accountUnusable } from './account-access.js';
import { describeFailure, retriesRanOut } from '../temporal/workflow-failures.js';

export class StuckSteps {
  /** While the workflow waits for the account's Gmail to answer again: why. */
  waitingFor: string | undefined;

  constructor(
    /** Whether the account's Gmail answers now (one cheap activity, no retries). */
    private readonly probe: () => Promise<boolean>,
    private readonly recheckMs: number,
  ) {}

  /** The probe's answer; a probe that failed itself (timed out) means no. A lost grant goes up to the account wrapper. */
  private async gmailAnswers(): Promise<boolean> {
    try {
      return await this.probe();
    } catch (err) {
      if (accountUnusable(err)) throw err;
      return false;
    }
  }

  /** Returns once the account answers again (the step is then worth running afresh); false: it answered at once. */
  async waitForOutage(err: unknown): Promise<boolean> {
    if (await this.gmailAnswers()) return false;
    this.waitingFor = `Gmail does not answer for this account (${describeFailure(err)})`;
    log.warn('Gmail does not answer for the account: waiting for it before running the step again', { reason: this.waitingFor });
    do await sleep(this.recheckMs);
    while (!(await this.gmailAnswers()));
    this.waitingFor = undefined;
    return true;
  }
}

/**
 * The activities, with a step whose retries ran out waiting through an outage of the whole account
 * and running again, and failing for good when only this step is stuck.
 */
export function givingUpOnStuckSteps<T extends object>(activities: T, stuck: Pick<StuckSteps, 'waitForOutage'>): T {
  return runningAgainAfter(activities, async (_step, err) => retriesRanOut(err) && (await stuck.waitForOutage(err)));
}
