// Gmail errors → Temporal failures. The failure type is the error's class name (stable), so
// workflows can tell a revoked grant from a throttle; Retry-After becomes nextRetryDelay.
import { ApplicationFailure } from '@temporalio/activity';
import { AccountNotConnectedError } from './gmail-accounts.js';
import { GmailError, GmailRateLimitError } from '../gmail/errors.js';

export function toActivityFailure(err: unknown): unknown {
  if (err instanceof AccountNotConnectedError) {
    return ApplicationFailure.create({ type: err.name, message: err.message, nonRetryable: true });
  }
  if (!(err instanceof GmailError)) return err;
  if (err instanceof GmailRateLimitError) {
    return ApplicationFailure.create({
      type: err.name,
      message: err.message,
      nextRetryDelay: err.retryAfterMs,
      details: [err.toDetails()],
    });
  }
  return ApplicationFailure.create({
    type: err.name,
    message: err.message,
    nonRetryable: !err.retryable,
    details: [err.toDetails()],
  });
}
