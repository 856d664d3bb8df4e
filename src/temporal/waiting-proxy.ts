// Workflow code: steps whose failures may be waited out and run again. The thread, the sync and the
// backfill wait this way through a lost grant (src/accounts/account-access.ts); the thread also
// through an outage of the account's Gmail (src/accounts/stuck-steps.ts) and a paused LLM
// (src/thread/llm-pause.ts).

/**
 * Says, for a call that failed, whether it was waited out (run the call again: true) or is not
 * this wait's to handle (the failure goes up: false).
 */
export type WaitOut = (step: string, err: unknown) => Promise<boolean>;

/** Runs `work` again for as long as `waitOut` waits its failures out; `afterWaiting` runs once work that waited is over. */
export async function runningAgain<T>(step: string, work: () => Promise<T>, waitOut: WaitOut, afterWaiting?: () => void): Promise<T> {
  let waited = false;
  try {
    for (;;) {
      try {
        return await work();
      } catch (err) {
        if (!(await waitOut(step, err))) throw err;
        waited = true;
      }
    }
  } finally {
    if (waited) afterWaiting?.();
  }
}

/**
 * The activities, each call run through `runningAgain`. proxyActivities returns a Proxy without
 * own keys, so this is a Proxy too.
 */
export function runningAgainAfter<T extends object>(activities: T, waitOut: WaitOut, afterWaiting?: () => void): T {
  return new Proxy(activities, {
    get(target, name) {
      const call = Reflect.get(target, name) as (...args: unknown[]) => Promise<unknown>;
      return (...args: unknown[]) => runningAgain(String(name), () => call(...args), waitOut, afterWaiting);
    },
  });
}
