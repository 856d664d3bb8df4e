// How a process of ours is started from one of its entry files: from the entry's bundle when
// ENTRY_BUNDLE_DIR holds one (scripts/entry-bundles.ts: `npm test` builds them once per run, and a
// production image can), otherwise the TypeScript through tsx.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** Where an entry's bundle lives in a bundle directory (`src/workers/x.ts` → `<dir>/src/workers/x.mjs`). */
export function bundledEntryPath(dir: string, entry: string): string {
  return join(dir, entry.replace(/\.ts$/, '.mjs'));
}

/** Node's arguments that start `entry` (a path relative to the repository, the processes' cwd). */
export function nodeEntryArgs(entry: string, bundleDir: string | undefined = process.env['ENTRY_BUNDLE_DIR']): string[] {
  const bundled = bundleDir ? bundledEntryPath(bundleDir, entry) : undefined;
  return bundled && existsSync(bundled) ? ['--enable-source-maps', bundled] : ['--import', 'tsx', entry];
}
