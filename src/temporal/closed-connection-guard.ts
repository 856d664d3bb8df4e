// @temporalio/client retries a failed call from a timer that Connection.close() does not clear: a retry
// due after the close throws "Channel has been shut down" inside that timer, where no caller can catch
// it, and the process dies on its way out (seen when `npm run dev` stopped under load; the same race is
// reported against the SDK's grpc-retry elsewhere). Once we close a connection, that error is only the
// retry of a call nobody waits for any more: it is logged and dropped. Any other uncaught error ends the
// process as Node would (its stack on stderr, exit code 1).
import { createLogger } from '../shared/log.js';

const log = createLogger('temporal');
let installed = false;

function isRetryAfterClose(err: unknown): boolean {
  return err instanceof Error && err.message === 'Channel has been shut down' && /grpc-retry/.test(err.stack ?? '');
}

/** Installs the guard once per process (the composition floor's long-running entry points). */
export function dropRetriesAfterClose(): void {
  if (installed) return;
  installed = true;
  process.on('uncaughtException', (err) => {
    if (isRetryAfterClose(err)) {
      log.debug('a Temporal client call retried after its connection was closed; dropped');
      return;
    }
    console.error(err);
    process.exit(1);
  });
}
