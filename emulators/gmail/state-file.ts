// The emulated world kept in a file (dev mode's DATA_DIR), so that a restarted demo continues with
// the mailbox, drafts and grants Postgres and Temporal know: restored at start, written shortly
// after each change (an unclean stop loses little) and at close. Written whole to a temporary file
// and renamed over the old one, so a crash mid-write leaves the previous state readable.
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import type { GmailWorld, WorldSnapshot } from './world.js';

export type StateLoad =
  | { outcome: 'restored'; accounts: number }
  | { outcome: 'missing' }
  /** The file was moved aside to `movedTo`; the world starts empty. */
  | { outcome: 'unreadable'; reason: string; movedTo: string };

export class WorldStateFile {
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    readonly path: string,
    private readonly world: GmailWorld,
    private readonly opts: { debounceMs?: number; onError?: (err: unknown) => void } = {},
  ) {}

  /** Restores the world from the file, if there is one it can read. */
  load(): StateLoad {
    if (!existsSync(this.path)) return { outcome: 'missing' };
    try {
      this.world.restore(JSON.parse(readFileSync(this.path, 'utf8')) as WorldSnapshot);
      return { outcome: 'restored', accounts: this.world.listAccounts().length };
    } catch (err) {
      const movedTo = `${this.path}.unreadable`;
      renameSync(this.path, movedTo);
      return { outcome: 'unreadable', reason: err instanceof Error ? err.message : String(err), movedTo };
    }
  }

  /** Something changed: write soon (changes within the debounce go into one write). */
  changed(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.save().catch((err: unknown) => (this.opts.onError ?? console.error)(err));
    }, this.opts.debounceMs ?? 500);
    this.timer.unref();
  }

  /** Writes the world now (after any write in progress). */
  save(): Promise<void> {
    const next = this.writing.then(async () => {
      const tmp = `${this.path}.tmp`;
      await writeFile(tmp, JSON.stringify(this.world.snapshot()));
      await rename(tmp, this.path);
    });
    this.writing = next.catch(() => {});
    return next;
  }

  /** The last write; no more after it. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.save();
  }
}
