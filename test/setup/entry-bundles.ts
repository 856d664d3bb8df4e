// The entry files of the processes a test run starts (the workers, `npm run dev`, the HTTP and codec
// servers, the backfill's worker process), bundled once per run (scripts/entry-bundles.ts) into a directory of the run's own
// inside the repository (a bundle's node_modules imports resolve from where it lies). ENTRY_BUNDLE_DIR
// names it to every test process and to what they start (src/shared/node-entry.ts).
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildEntryBundles } from '../../scripts/entry-bundles.js';
import { WORKER_ENTRY } from '../../src/stack/worker-processes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const ENTRIES = [
  ...Object.values(WORKER_ENTRY),
  'src/dev/main.ts',
  'src/http/main.ts',
  'src/codec-server/main.ts',
  'test/helpers/backfill-gmail-worker-process.ts',
];

export async function buildTestEntryBundles(): Promise<{ dir: string; remove(): Promise<void> }> {
  await mkdir(join(root, '.cache'), { recursive: true });
  const dir = await mkdtemp(join(root, '.cache', 'test-entry-bundles-'));
  await buildEntryBundles(root, ENTRIES, dir);
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
