// What listChanges remembers of each message it follows, per (folder, UIDVALIDITY, UID): the labels
// it last saw, which the message's next change is diffed against (docs/imap.md "Changes"). In this
// process by default; the workers keep it in PostgreSQL (src/accounts/imap-label-memory.ts), so a
// keyword set while they were down is diffed after the restart, not lost.

/** Labels and the point of the folder's MODSEQ at which they held. */
export interface RememberedLabels {
  labels: string[];
  at: string;
}

export interface RememberedMessage extends RememberedLabels {
  id: string;
  threadId: string;
  /**
   * 'changes': listChanges saw it, `at` = the page's HIGHESTMODSEQ (the cursor it hands on); 'read': a
   * read saw it first, `at` = the message's MODSEQ then (kept until listChanges sees it).
   */
  seenBy: 'changes' | 'read';
  /**
   * What listChanges diffed against when it wrote this entry: a page read again from the older cursor
   * (its cursor never saved: the activity failed after the listing) diffs against it again, so the
   * change is not lost to a memory already ahead of the cursor.
   */
  before?: RememberedLabels;
  /**
   * Expunged, told by the page whose HIGHESTMODSEQ is `at`: kept until a cursor past that page is read
   * from, so the page read again from an older cursor names the message by its id again.
   */
  gone?: boolean;
}

export interface LabelMemory {
  /** What is remembered of these UIDs of the folder; of all its UIDs without `uids` (servers without QRESYNC). */
  load(folder: string, uidValidity: string, uids?: readonly number[]): Promise<Map<number, RememberedMessage>>;
  /**
   * What a listChanges page read from the cursor at `cursorModseq` saw: `seen` replaces each UID's
   * entry (expunged ones marked gone); the gone entries of pages at or before that cursor are forgotten.
   */
  save(folder: string, uidValidity: string, seen: ReadonlyMap<number, RememberedMessage>, cursorModseq: string): Promise<void>;
  /** A read's baseline: kept only where nothing is remembered of the UID yet. */
  noteRead(folder: string, uidValidity: string, uid: number, message: RememberedMessage): Promise<void>;
  /** A cursor's baselines (getCursor without CONDSTORE): each kept only where nothing is remembered of its UID yet. */
  noteBaselines(folder: string, uidValidity: string, baselines: ReadonlyMap<number, RememberedMessage>): Promise<void>;
}

/**
 * The labels the message had at the cursor's point (`cursorModseq`): the entry's when it is not
 * newer than the cursor, else the baseline it replaced; undefined when nothing that old is known.
 */
export function labelsAt(entry: RememberedMessage | undefined, cursorModseq: bigint): RememberedLabels | undefined {
  if (!entry) return undefined;
  if (BigInt(entry.at) <= cursorModseq) return { labels: entry.labels, at: entry.at };
  if (entry.before && BigInt(entry.before.at) <= cursorModseq) return entry.before;
  return undefined;
}

export function inMemoryLabelMemory(): LabelMemory {
  const folders = new Map<string, Map<number, RememberedMessage>>();
  const key = (folder: string, uidValidity: string) => `${uidValidity}:${folder}`;
  const of = (folder: string, uidValidity: string) => {
    let map = folders.get(key(folder, uidValidity));
    if (!map) folders.set(key(folder, uidValidity), (map = new Map()));
    return map;
  };
  return {
    async load(folder, uidValidity, uids) {
      const map = of(folder, uidValidity);
      if (!uids) return new Map(map);
      return new Map(uids.flatMap((uid) => (map.has(uid) ? [[uid, map.get(uid)!] as const] : [])));
    },
    async save(folder, uidValidity, seen, cursorModseq) {
      const map = of(folder, uidValidity);
      for (const [uid, entry] of map) if (entry.gone && BigInt(entry.at) <= BigInt(cursorModseq)) map.delete(uid);
      for (const [uid, message] of seen) map.set(uid, message);
    },
    async noteRead(folder, uidValidity, uid, message) {
      const map = of(folder, uidValidity);
      if (!map.has(uid)) map.set(uid, message);
    },
    async noteBaselines(folder, uidValidity, baselines) {
      const map = of(folder, uidValidity);
      for (const [uid, message] of baselines) if (!map.has(uid)) map.set(uid, message);
    },
  };
}
