// What a foreground command (`npm run dev`, `npm run stack`) started, stopped in reverse order on
// exit: each stop is tried once, and one that fails is logged without keeping the rest running.
import type { Logger } from './log.js';

export class StopList {
  private readonly entries: { name: string; stop: () => Promise<void> }[] = [];
  /** Set once exit() began: later signals and late failures change nothing. */
  stopping = false;

  /** Stops of things started while stopping (a signal during start-up). */
  private readonly late: Promise<void>[] = [];
  /** The first exit(): later calls (a start-up step failing because a signal stopped its parts) wait for it. */
  private exiting: Promise<never> | undefined;

  constructor(private readonly log: Logger) {}

  push(entry: { name: string; stop: () => Promise<void> }): void {
    // Started after exit() began (Ctrl-C during start-up): stopped at once, not left running.
    if (this.stopping) this.late.push(this.stopOne(entry));
    else this.entries.push(entry);
  }

  /** Ctrl-C, SIGTERM and SIGHUP stop everything started so far and exit 0, from the first moment on. */
  exitOnSignals(): void {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.on(signal, () => {
        if (this.stopping) return;
        this.log.info(`${signal}: shutting down`);
        void this.exit(0);
      });
    }
  }

  /** Stops everything, last started first, then exits the process with `code` (the first caller's). */
  exit(code: number): Promise<never> {
    this.exiting ??= this.stopAll().then(() => process.exit(code));
    return this.exiting;
  }

  private async stopAll(): Promise<void> {
    this.stopping = true;
    for (const entry of this.entries.reverse()) await this.stopOne(entry);
    while (this.late.length > 0) await this.late.shift();
  }

  private async stopOne({ name, stop }: { name: string; stop: () => Promise<void> }): Promise<void> {
    try {
      await stop();
      this.log.debug(`stopped ${name}`);
    } catch (err) {
      this.log.warn(`stopping ${name} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
