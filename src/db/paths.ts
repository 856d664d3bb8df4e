// Where the database files live, found from this module's location so it works under tsx and after a build.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findProjectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return dir;
}

export const projectRoot = findProjectRoot();
export const prismaDir = join(projectRoot, 'prisma');
export const defaultMigrationsDir = join(prismaDir, 'migrations');
export const defaultEmbeddedDataDir = join(projectRoot, '.data', 'pglite');
