// Reading failures in workflow code (deterministic; imports only @temporalio/workflow): what an
// activity's failure was, in words a user can read in the decision log, and whether its retries
// ran out on an error a retry could still have fixed (the step is stuck rather than refused).
import { RetryState } from '@temporalio/common';
import { ActivityFailure, ApplicationFailure, TemporalFailure, TimeoutFailure } from '@temporalio/workflow';

/** The error an activity failed with, as the activity threw it (its type is the error's class name), if any. */
export function activityError(err: unknown): ApplicationFailure | undefined {
  return err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause : undefined;
}

/** The ApplicationFailure type an activity failed with (the error's class name), if any. */
export function failureType(err: unknown): string | undefined {
  return activityError(err)?.type ?? undefined;
}

/** `Type: message` of the error an activity failed with ('' when it was not an activity's error). */
export function activityErrorText(err: unknown): string {
  const cause = activityError(err);
  return cause ? `${cause.type ?? 'Error'}: ${cause.message}` : '';
}

/** True when an activity stopped being retried because its time ran out, not because its error was final. */
export function retriesRanOut(err: unknown): boolean {
  return err instanceof ActivityFailure && (err.retryState === RetryState.TIMEOUT || err.retryState === RetryState.MAXIMUM_ATTEMPTS_REACHED);
}

/**
 * One line for the decision log and the journal: which step failed and why, e.g.
 * `readThread failed: GmailBadRequestError: Invalid query` or
 * `readThread gave up after retrying: GmailServerError: Backend Error`.
 */
export function describeFailure(err: unknown): string {
  if (err instanceof ActivityFailure) {
    const verb = retriesRanOut(err) ? 'gave up after retrying' : 'failed';
    return `${err.activityType} ${verb}: ${causeOf(err.cause)}`;
  }
  return `the workflow's own step failed: ${causeOf(err)}`;
}

function causeOf(err: unknown, depth = 0): string {
  if (err instanceof ApplicationFailure) return `${err.type ?? 'Error'}: ${err.message}`;
  if (err instanceof TimeoutFailure) {
    // A schedule-to-close timeout carries the last attempt's failure as its cause.
    const last = err.cause && depth < 3 ? `; last error ${causeOf(err.cause, depth + 1)}` : '';
    return `timed out (${err.timeoutType ?? 'unknown'})${last}`;
  }
  if (err instanceof TemporalFailure) return `${err.name}: ${err.message}`;
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return String(err);
}
