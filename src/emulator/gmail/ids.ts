// Gmail-shaped identifiers, deterministic given the emulator seed.
import { Random } from './random.js';

export class IdSource {
  private readonly random: Random;
  private counter = 0;

  constructor(seed: number) {
    this.random = new Random(seed ^ 0x1d5);
  }

  /**
   * 16 hex digits whose high bits are the epoch ms, like Gmail's message ids (whose thread ids are
   * the id of the thread's first message).
   */
  messageId(internalDate: number): string {
    // A 20-bit counter below the ms: ids collide only for > 1M messages in one ms (the store checks).
    this.counter = (this.counter + 1) & 0xfffff;
    return Math.max(0, Math.floor(internalDate)).toString(16).padStart(11, '0').slice(-11) + this.counter.toString(16).padStart(5, '0');
  }

  draftId(): string {
    return 'r' + String(this.random.int(1e8, 9e8)) + String(this.random.int(1e9, 9e9));
  }

  /** History ids increase with gaps, as Gmail's do. */
  historyGap(): number {
    return this.random.int(1, 12);
  }
}
