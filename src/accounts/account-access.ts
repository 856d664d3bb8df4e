// Workflow code: the one wait for an account that cannot be used, shared by the thread, sync and
// backfill workflows. When Google revokes the account's grant (or the user disconnects the
// account), no Gmail step can succeed until the user reconnects it. The workflow then waits, for
// hours or days if need be, for the accountReconnected signal (sent by `accounts connect`),
// looking again every recheck interval without one, and runs the step again. Nothing is lost or
// failed, and the workflow's query says what it waits for (`waitingFor`).
import { ApplicationFailure, condition, defineSignal, log, setHandler } from '@temporalio/workflow';
import { runningAgain, runningAgainAfter } from '../temporal/waiting-proxy.js';
import { activityError } from '../temporal/workflow-failures.js';

/** Sent to an account's sync, thread and backfill workflows when the account is connected again. */
export const accountReconnectedSignal = defineSignal('accountReconnected');

/** Failure types after which only the user reconnecting the account helps. */
export const ACCOUNT_UNUSABLE_TYPES = ['GmailAuthError', 'AccountNotConnectedError'];

/**
 * The failure's type and message when a step failed because the account cannot be used: an
 * activity's failure, or one the workflow raised with `accountUnusableFailure`. An auth failure a
 * retry can fix (a 401 for an access token the next attempt refreshes) is not one.
 */
export function accountUnusable(err: unknown): { type: string; message: string } | undefined {
  const cause = err instanceof ApplicationFailure ? err : activityError(err);
  const type = cause?.type ?? '';
  return cause && ACCOUNT_UNUSABLE_TYPES.includes(type) && cause.nonRetryable ? { type, message: cause.message } : undefined;
}

/**
 * The failure a workflow raises when a child workflow found the account unusable (a backfill slice
 * reports it by signal): `whileUsable` waits it out like an activity's.
 */
export function accountUnusableFailure(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

export class AccountAccess {
  private reconnected = false;
  /** accountReconnected signals this run has received: a step started before the last one may fail on the old grant. */
  reconnects = 0;
  /** While the workflow waits for the account: why (the step and the failure that stopped it). */
  waitingFor: string | undefined;

  /** Registers the accountReconnected handler; `onReconnected` runs on every such signal. */
  constructor(
    private readonly recheckMs: number,
    onReconnected: () => void = () => {},
  ) {
    setHandler(accountReconnectedSignal, () => {
      this.reconnected = true;
      this.reconnects++;
      onReconnected();
    });
  }

  /**
   * Runs `work`; each time it fails because the account cannot be used, waits until the account is
   * reconnected (or recheckMs passes without news) and runs it again. Every other failure goes up.
   */
  whileUsable<T>(step: string, work: () => Promise<T>): Promise<T> {
    return runningAgain(step, work, (s, err) => this.waitedOut(s, err));
  }

  /** The activities, each call through `whileUsable`: a Gmail step that may take hours. */
  activitiesWhileUsable<T extends object>(activities: T): T {
    return runningAgainAfter(activities, (step, err) => this.waitedOut(step, err));
  }

  /**
   * When `err` says the account cannot be used: waits until the account is reconnected, or
   * recheckMs without news (then the caller tries again), and returns true. Else false at once.
   */
  private async waitedOut(step: string, err: unknown): Promise<boolean> {
    const unusable = accountUnusable(err);
    if (!unusable) return false;
    log.warn('Gmail access lost: waiting for the account to be reconnected', { step, ...unusable });
    this.waitingFor = `${step}: ${unusable.type}`;
    this.reconnected = false;
    await condition(() => this.reconnected, this.recheckMs);
    this.reconnected = false;
    this.waitingFor = undefined;
    return true;
  }
}
