// The pause on a lost grant, as a unit: which failures make a Gmail step wait for the account,
// and that the step runs again afterwards. (test/thread/failures.test.ts runs it for real.)
import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { accountUnusable, waitingForAccountAccess } from '../../src/accounts/account-access.js';

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
    const waits: string[] = [];
    const gmail = waitingForAccountAccess(activities, { wait: async (reason) => void waits.push(reason) });
    await expect(gmail.readThread({ threadId: 't1' })).resolves.toBe('thread t1');
    expect(waits).toEqual(['readThread: GmailAuthError', 'readThread: AccountNotConnectedError']);
  });

  it('passes every other failure on at once', async () => {
    const waits: string[] = [];
    const gmail = waitingForAccountAccess(
      {
        async placeDraft() {
          throw failed('GmailBadRequestError');
        },
      },
      { wait: async (reason) => void waits.push(reason) },
    );
    await expect(gmail.placeDraft()).rejects.toBeInstanceOf(ActivityFailure);
    expect(waits).toEqual([]);
  });
});
