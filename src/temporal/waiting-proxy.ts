// Workflow code: activities whose failed calls may be waited out and run again. The thread and the
// sync wait this way through a lost grant (src/accounts/account-access.ts), an outage of the
// account's Gmail (src/accounts/stuck-steps.ts) and a paused LLM (src/thread/llm-pause.ts).

/**
 * Says, for a call that failed, whether it was waited out (run the call again: true) or is not
 * this wait's to handle (the failure goes up: false).
 */
export type WaitOut = (step: string, err: unknown) => Promise<boolean>;

/**
 * The activities, each call run again for as long as `waitOut` waits its failures out; `afterWaiting`
 * runs once a call that waited is over. proxyActivities returns a Proxy without own keys, so this is
 * a Proxy too.
 */
export function runningAgainAfter<T extends object>(activities: T, waitOut: WaitOut, afterWaiting?: () => void): T {
  return new Proxy(activities, {
    get(target, name) {
      const call = Reflect.get(target, name) as (...args: unknown[]) => Promise<unknown>;
      return async (...args: unknown[]) => {
        let waited = false;
        try {
          for (;;) {
            try {
              return await call(...args);
            } catch (err) {
              if (!(await waitOut(String(name), err))) throw err;
              waited = true;
            }
          }
        } finally {
          if (waited) afterWaiting?.();
        }
      };
    },
  });
}
