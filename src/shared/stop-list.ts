// What a foreground command (`npm run dev`, `npm run stack`) started, stopped in reverse order on
// exit: each stop is tried once, and one that fails is logged without keeping the rest running.
import type { Logger } from './log.js';

export class StopList {
  private readonly entries: { name: string; stop: () => Promise<void> }[] = [];
  /** Set once exit() began: later signals and late failures change nothing. */
  stopping = false;

  constructor(private readonly log: Logger) {}

  push(entry: { name: string; stop: () => Promise<void> }): void {
    this.entries.push(entry);
  }

  /** Stops everything, last started first, then exits the process with `code`. */
  async exit(code: number): Promise<never> {
    if (!this.stopping) {
      this.stopping = true;
      for (const { name, stop } of this.entries.reverse()) {
        try {
          await stop();
          this.log.debug(`stopped ${name}`);
        } catch (err) {
          this.log.warn(`stopping ${name} failed: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }
    process.exit(code);
  }
}
