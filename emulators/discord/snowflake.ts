// Discord snowflakes: milliseconds since the Discord epoch (2015-01-01) shifted left by 22 bits, then
// worker, process and a 12-bit increment. Decimal strings, as the API sends them.
export const DISCORD_EPOCH = 1_420_070_400_000n;

export class SnowflakeGenerator {
  private increment = 0n;
  private lastMs = 0n;

  constructor(private readonly worker = 1n) {}

  next(nowMs: number = Date.now()): string {
    let ms = BigInt(Math.floor(nowMs));
    // Ids stay strictly increasing even when the clock does not move (or moves back).
    if (ms < this.lastMs) ms = this.lastMs;
    if (ms === this.lastMs) {
      this.increment = (this.increment + 1n) & 0xfffn;
      if (this.increment === 0n) ms += 1n;
    } else {
      this.increment = 0n;
    }
    this.lastMs = ms;
    return (((ms - DISCORD_EPOCH) << 22n) | (this.worker << 17n) | (1n << 12n) | this.increment).toString();
  }
}

export const isSnowflake = (value: string): boolean => /^\d{1,20}$/.test(value);

/** The creation time encoded in a snowflake, in epoch milliseconds. */
export function snowflakeTime(id: string): number {
  return Number((BigInt(id) >> 22n) + DISCORD_EPOCH);
}
