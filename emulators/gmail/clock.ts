// The emulator's notion of "now". Tests can move it forward (token expiry, history retention,
// watch expiration) without waiting; it never goes backwards.

export class Clock {
  private offsetMs = 0;

  now(): number {
    return Date.now() + this.offsetMs;
  }

  advance(ms: number): void {
    if (!(ms >= 0)) throw new Error('the clock only moves forward');
    this.offsetMs += ms;
  }

  get offset(): number {
    return this.offsetMs;
  }

  /** Restores an offset from a snapshot. */
  set offset(ms: number) {
    this.offsetMs = Math.max(0, ms);
  }

  reset(): void {
    this.offsetMs = 0;
  }
}
