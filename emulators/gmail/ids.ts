// Gmail-shaped identifiers, deterministic given the emulator seed, and the check Gmail applies
// to the message and thread ids it is given.
import { badRequest } from './errors.js';
import { Random } from './random.js';

/**
 * A message or thread id as Gmail reads it: hexadecimal (either case) for a signed 64-bit
 * integer, so 1 to 16 digits below 8000000000000000. Anything else is 400 "Invalid id value"
 * (measured against Gmail by other projects), not 404; a well-formed unknown id is 404.
 */
export function gmailId(id: string): string {
  if (!/^[0-9a-f]{1,16}$/i.test(id) || (id.length === 16 && parseInt(id[0] as string, 16) >= 8)) throw badRequest('Invalid id value');
  return id.toLowerCase();
}

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

  snapshot(): { random: number; counter: number } {
    return { random: this.random.position, counter: this.counter };
  }

  restore(state: { random: number; counter: number }): void {
    this.random.position = state.random;
    this.counter = state.counter;
  }

  draftId(): string {
    return 'r' + String(this.random.int(1e8, 9e8)) + String(this.random.int(1e9, 9e9));
  }

  /** History ids increase with gaps, as Gmail's do. */
  historyGap(): number {
    return this.random.int(1, 12);
  }
}
