// `prisma generate` that works offline (npm postinstall, `npm run db:generate`).
// Generating the client needs no native engine, but the Prisma CLI tries to download the schema
// engine unless PRISMA_SCHEMA_ENGINE_BINARY names an existing file; generate never runs it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { projectRoot } from '../src/db/paths.js';

const env: NodeJS.ProcessEnv = { ...process.env, CHECKPOINT_DISABLE: '1' };
const configured = env.PRISMA_SCHEMA_ENGINE_BINARY;
if (!configured || !existsSync(configured)) {
  // This script itself: a file that exists and that generate will not execute.
  env.PRISMA_SCHEMA_ENGINE_BINARY = fileURLToPath(import.meta.url);
}

const prismaCli = createRequire(import.meta.url).resolve('prisma/build/index.js');
const result = spawnSync(process.execPath, [prismaCli, 'generate', ...process.argv.slice(2)], {
  cwd: projectRoot,
  env,
  stdio: 'inherit',
});
if (result.error) throw result.error;
process.exit(result.status ?? 1);
