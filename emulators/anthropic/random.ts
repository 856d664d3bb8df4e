// Seeded draws keyed by purpose and request number, so one kind of draw (say, jitter) switched on does
// not shift the others (faults), and a run is reproducible from its seed and request order.
import { createHash } from 'node:crypto';

function digest(seed: number, purpose: string, n: number | string): Buffer {
  return createHash('sha256').update(`${seed}:${purpose}:${n}`).digest();
}

/** A float in [0, 1). */
export function draw(seed: number, purpose: string, n: number): number {
  return digest(seed, purpose, n).readUInt32BE(0) / 2 ** 32;
}

/**
 * An id like the API's (`msg_01…`, `toolu_01…`, `req_01…`): prefix, `01`, 22 alphanumerics. `n` is a
 * request number or a string key (say, a digest of the conversation and the block's position).
 */
export function makeId(prefix: string, seed: number, n: number | string): string {
  const chars = digest(seed, prefix, n)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '');
  return `${prefix}_01${chars.slice(0, 22)}`;
}
