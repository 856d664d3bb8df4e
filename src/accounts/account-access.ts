// Workflow code: the pause on a lost Gmail grant, shared by the thread and sync workflows.
// When Google revokes the account's grant (or the user disconnects the account), no Gmail step can
// succeed until the user reconnects it. The workflow then waits, for hours or days if need be, for
// the accountReconnected signal (sent by `accounts connect`), looking again every recheck interval
// without one. Nothing is lost or failed, and the status query says what it waits for.
import { condition, defineSignal, log, setHandler } from '@temporalio/workflow';
import { runningAgainAfter } from '../temporal/waiting-proxy.js';
import { activityError } from '../temporal/workflow-failures.js';

/** Sent to an account's sync and thread workflows when the account is connected again. */
export const accountReconnectedSignal = defineSignal('accountReconnected');

/** Failure types after which only the user reconnecting the account helps. */
export const ACCOUNT_UNUSABLE_TYPES = ['GmailAuthError', 'AccountNotConnectedError'];

/**
 * The failure's type and message when an activity failed because the account cannot be used. An
 * auth failure a retry can fix (a 401 for an access token the next attempt refreshes) is not one.
 */
export function accountUnusable(err: unknown): { type: string; message: string } | undefined {
  const cause = activityError(err);
  const type = cause?.type ?? '';
  return cause && ACCOUNT_UNUSABLE_TYPES.includes(type) && cause.nonRetryable ? { type, message: cause.message } : undefined;
}

export class AccountReconnect {
  private reconnected = false;
  /** While the workflow waits for the account: why (the failure that stopped it).  */
  waitingFor: string | undefined;

  /** Registers the accountReconnected handler; `onReconnected` runs on every such signal. */
  constructor(
    private readonly recheckMs: number,
    onReconnected: () => void = () => {},
  ) {
    setHandler(accountReconnectedSignal, () => {
      this.reconnected = true;
      onReconnected();
    });
  }

  /** Waits until the account is reconnected, or recheckMs without news (then the caller tries again). */
  async wait(reason: string): Promise<void> {
    log.warn('Gmail access lost: waiting for the account to be reconnected', { reason });
    this.waitingFor = reason;
    this.reconnected = false;
    await condition(() => this.reconnected, this.recheckMs);
    this.reconnected = false;
    this.waitingFor = undefined;
  }
}

/**
 * The activities, with every call that fails because the account is unusable waiting for the
 * account (`reconnect.wait`) and running again: a Gmail step that may take hours.
 */
export function waitingForAccountAccess<T extends object>(activities: T, reconnect: Pick<AccountReconnect, 'wait'>): T {
  return runningAgainAfter(activities, async (step, err) => {
    const unusable = accountUnusable(err);
    if (!unusable) return false;
    await reconnect.wait(`${step}: ${unusable.type}`);
    return true;
  });
}
