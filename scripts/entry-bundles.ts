// Process entry files (the workers, say) bundled with esbuild into one ES module each, our code only:
// node_modules stay imports. A worker process started from its bundle loads in ~1.6 s of CPU where
// `node --import tsx` takes ~4.4 s (tsx's hooks see every import, node_modules' too; 2026-11-28), and
// the suites and the chaos bench start dozens of them. Every module keeps its own import.meta.url (its
// source file's), so a path relative to a source file means what it means under tsx, and the entry
// stays its process's main module (src/shared/main-module.ts). src/shared/node-entry.ts starts them.
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { bundledEntryPath } from '../src/shared/node-entry.js';

/** import.meta.url in each of our TypeScript files becomes that file's URL. */
const sourceUrls: Plugin = {
  name: 'source-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const source = await readFile(args.path, 'utf8');
      return { contents: source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' };
    });
  },
};

/** Bundles each entry (a path relative to `root`) into `outDir`, at bundledEntryPath(outDir, entry). */
export async function buildEntryBundles(root: string, entries: readonly string[], outDir: string): Promise<void> {
  await Promise.all(
    entries.map((entry) =>
      build({
        entryPoints: [join(root, entry)],
        outfile: bundledEntryPath(outDir, entry),
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        packages: 'external',
        sourcemap: 'linked',
        plugins: [sourceUrls],
        // The process was started with the bundle; its entry module checks for its source file.
        banner: { js: `process.argv[1] = ${JSON.stringify(resolve(root, entry))};` },
        logLevel: 'warning',
      }),
    ),
  );
}
