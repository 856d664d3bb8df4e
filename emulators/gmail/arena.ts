// Compact storage for raw messages. Small Buffers from Buffer.from() share Node's 8 KiB pool
// with short-lived allocations (parsing, decoding), and one live message keeps a whole slab
// alive: copying each raw message into large chunks owned by the mailbox avoids that waste.

const CHUNK_BYTES = 1 << 20;

export class ByteArena {
  private chunk = Buffer.allocUnsafeSlow(CHUNK_BYTES);
  private used = 0;

  /** A copy of `bytes` that lives in the arena (big messages get their own allocation). */
  keep(bytes: Buffer): Buffer {
    if (bytes.length > CHUNK_BYTES / 8) {
      const own = Buffer.allocUnsafeSlow(bytes.length);
      bytes.copy(own);
      return own;
    }
    if (this.used + bytes.length > CHUNK_BYTES) {
      this.chunk = Buffer.allocUnsafeSlow(CHUNK_BYTES);
      this.used = 0;
    }
    const view = this.chunk.subarray(this.used, this.used + bytes.length);
    bytes.copy(view);
    this.used += bytes.length;
    return view;
  }
}

/**
 * A flat copy of a string. Substrings V8 makes by slicing can keep their (much larger) parent
 * string alive; search fields are kept for the life of a message, so they are copied once.
 */
export function ownString(s: string): string {
  return s.length === 0 ? '' : Buffer.from(s, 'utf8').toString('utf8');
}
