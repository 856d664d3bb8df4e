// The pause on a lost grant, as a unit: which failures make a step wait for the account, and that
// the step runs again afterwards (the waiting itself needs a workflow: test/thread/failures.test.ts,
// test/sync/sync-accounts.test.ts and test/backfill/resilience-grant-revoked.test.ts run AccountAccess for real).
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { accountUnusable, accountUnusableFailure } from '../../src/accounts/account-access.js';
import { runningAgain, runningAgainAfter, type WaitOut } from '../../src/temporal/waiting-proxy.js';

const failed = (type: string, nonRetryable = true) =>
  new ActivityFailure(
    'activity failed',
    'readThread',
    '1',
    RetryState.NON_RETRYABLE_FAILURE,
    'worker',
    ApplicationFailure.create({ type, message: `${type} happened`, nonRetryable }),
  );

describe('account access', () => {
  it('names the failures only a reconnect can fix', () => {
    expect(accountUnusable(failed('GmailAuthError'))).toEqual({ type: 'GmailAuthError', message: 'GmailAuthError happened' });
    expect(accountUnusable(failed('AccountNotConnectedError'))?.type).toBe('AccountNotConnectedError');
    expect(accountUnusable(failed('GmailServerError'))).toBeUndefined();
    // A 401 the next attempt fixes by refreshing its token is retried, not waited out.
    expect(accountUnusable(failed('GmailAuthError', false))).toBeUndefined();
    expect(accountUnusable(new Error('GmailAuthError'))).toBeUndefined();
    // What a backfill raises for a slice that reported the account unusable.
    expect(accountUnusable(accountUnusableFailure('GmailAuthError', 'grant revoked'))).toEqual({ type: 'GmailAuthError', message: 'grant revoked' });
    expect(accountUnusable(ApplicationFailure.create({ type: 'BackfillSliceFailed', nonRetryable: true }))).toBeUndefined();
  });

  it('waits for the account and runs the step again, as often as it takes', async () => {
    const outcomes = [failed('GmailAuthError'), failed('AccountNotConnectedError')];
    const activities = {
      async readThread(input: { threadId: string }) {
        const next = outcomes.shift();
        if (next) throw next;
        return `thread ${input.threadId}`;
      },
    };
    const { waits, waitOut } = waitingForAccount();
    const gmail = runningAgainAfter(activities, waitOut);
    await expect(gmail.readThread({ threadId: 't1' })).resolves.toBe('thread t1');
    expect(waits).toEqual(['readThread: GmailAuthError', 'readThread: AccountNotConnectedError']);
  });

  it('runs a workflow step of its own again the same way', async () => {
    const { waits, waitOut } = waitingForAccount();
    let runs = 0;
    const step = async () => {
      runs++;
      if (runs === 1) throw accountUnusableFailure('GmailAuthError', 'a slice found the grant revoked');
      return 'window done';
    };
    await expect(runningAgain('slices', step, waitOut)).resolves.toBe('window done');
    expect(runs).toBe(2);
    expect(waits).toEqual(['slices: GmailAuthError']);
  });

  it('passes every other failure on at once', async () => {
    const { waits, waitOut } = waitingForAccount();
    const gmail = runningAgainAfter(
      {
        async placeDraft() {
          throw failed('GmailBadRequestError');
        },
      },
      waitOut,
    );
    await expect(gmail.placeDraft()).rejects.toBeInstanceOf(ActivityFailure);
    expect(waits).toEqual([]);
  });
});

/** AccountAccess's decision without its wait (a condition needs a workflow): the reasons it would wait for. */
function waitingForAccount(): { waits: string[]; waitOut: WaitOut } {
  const waits: string[] = [];
  const waitOut: WaitOut = async (step, err) => {
    const unusable = accountUnusable(err);
    if (unusable) waits.push(`${step}: ${unusable.type}`);
    return unusable !== undefined;
  };
  return { waits, waitOut };
}
