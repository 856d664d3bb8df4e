// Workflow code (deterministic, in the bundle): a long-lived workflow that works on behalf of signals
// (the sync workflow's passes, woken by pushes) runs that work in the trace of the signal that woke it,
// so a trace goes from the Gmail push through the pass to the thread workflows it feeds. With tracing
// off (no OpenTelemetry interceptors in the bundle) the context is always the empty root: nothing changes.
import { context, type Context } from '@opentelemetry/api';

export class WakeTrace {
  private pending: Context | undefined;

  /** In a signal handler: the first signal since the last piece of work is the one it belongs to. */
  note(): void {
    this.pending ??= context.active();
  }

  /** Runs `fn` in the noted signal's trace (else the current one), and forgets the signal. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const noted = this.pending ?? context.active();
    this.pending = undefined;
    return context.with(noted, fn);
  }
}
