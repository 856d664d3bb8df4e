// The checkout's root directory (where package.json lives), found from this module's own location
// so it works the same under tsx (src/...) and after a build (dist/src/...).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

export function projectRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return (cached = dir);
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}
