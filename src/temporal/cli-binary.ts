// Finds a Temporal CLI binary without downloading release archives (the machine may only reach
// package registries): TEMPORAL_CLI, then `temporal` on PATH, then our cache, then a `go install`
// build into the cache. null means "no binary and no Go": callers fall back to the SDK's download.
import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, link, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { projectRoot } from './project-root.js';
import { forEachLine } from '../shared/lines.js';

/** v1.6.0+ carry `replace` directives in go.mod, which `go install pkg@version` refuses. */
export const TEMPORAL_CLI_VERSION = '1.5.1';
const CLI_MODULE = `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`;
// Without this the binary reports 0.0.0-DEV.
const CLI_LDFLAGS = `-X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_VERSION}`;
/** A build holding the lock longer than this is presumed wedged. */
const BUILD_WAIT_LIMIT_MS = 30 * 60_000;

export type TemporalCliSource = 'env' | 'path' | 'cache' | 'built';

export interface ResolvedTemporalCli {
  path: string;
  source: TemporalCliSource;
}

export interface ResolveTemporalCliOptions {
  /** Build with `go install` when nothing else is found (default true). */
  build?: boolean;
  log?: (msg: string) => void;
  /** The TEMPORAL_CLI setting: this binary, and no other. */
  override?: string;
  /** Environment to find `temporal` and `go` on PATH and to build with (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Default `<project>/.cache/temporal/v1.5.1`. */
  cacheDir?: string;
}

export class TemporalCliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemporalCliError';
  }
}

export function defaultTemporalCliCacheDir(): string {
  return join(projectRoot(), '.cache', 'temporal', `v${TEMPORAL_CLI_VERSION}`);
}

export async function resolveTemporalCli(opts: ResolveTemporalCliOptions = {}): Promise<ResolvedTemporalCli | null> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? (() => {});
  const cacheDir = opts.cacheDir ?? defaultTemporalCliCacheDir();

  if (opts.override) {
    if (!(await isExecutableFile(opts.override))) {
      throw new TemporalCliError(`TEMPORAL_CLI=${opts.override} is not an executable file; fix or unset it`);
    }
    return { path: opts.override, source: 'env' };
  }

  const onPath = await findOnPath('temporal', env);
  if (onPath) return { path: onPath, source: 'path' };

  const cached = join(cacheDir, 'temporal');
  if (await isExecutableFile(cached)) return { path: cached, source: 'cache' };

  if (opts.build === false) return null;
  const go = await findOnPath('go', env);
  if (!go) {
    log('no Temporal CLI found and no Go toolchain on PATH to build one');
    return null;
  }
  return buildIntoCache(go, cacheDir, env, log);
}

async function buildIntoCache(
  go: string,
  cacheDir: string,
  env: NodeJS.ProcessEnv,
  log: (m: string) => void,
): Promise<ResolvedTemporalCli> {
  return installIntoCache({
    cacheDir,
    binary: 'temporal',
    what: 'Temporal CLI',
    log,
    install: async (buildDir) => {
      log(
        `building Temporal CLI v${TEMPORAL_CLI_VERSION} with \`go install\` into ${cacheDir}; ` +
          'this takes several minutes the first time (later runs reuse the binary)',
      );
      await runGo(go, ['install', '-ldflags', CLI_LDFLAGS, CLI_MODULE], { ...env, GOBIN: buildDir }, log);
    },
  });
}

/**
 * Builds one binary into `cacheDir` under a build lock, so concurrent callers build it once: the
 * build goes into a private folder and is renamed into place, so a killed build never leaves a
 * half-written binary. `install(buildDir)` must leave `binary` in buildDir.
 */
export async function installIntoCache(opts: {
  cacheDir: string;
  binary: string;
  what: string;
  log: (m: string) => void;
  install: (buildDir: string) => Promise<void>;
}): Promise<{ path: string; source: 'cache' | 'built' }> {
  const { cacheDir, log } = opts;
  await mkdir(cacheDir, { recursive: true });
  const target = join(cacheDir, opts.binary);
  const release = await acquireBuildLock(join(cacheDir, '.build.lock'), target, log, opts.what);
  try {
    // A concurrent caller may have finished the build while we waited for the lock.
    if (await isExecutableFile(target)) return { path: target, source: 'cache' };
    await removeStaleBuildDirs(cacheDir);
    const buildDir = await mkdtemp(join(cacheDir, '.build-'));
    try {
      const started = Date.now();
      await opts.install(buildDir);
      await rename(join(buildDir, opts.binary), target);
      log(`built ${target} in ${Math.round((Date.now() - started) / 1000)}s`);
      return { path: target, source: 'built' };
    } finally {
      await rm(buildDir, { recursive: true, force: true });
    }
  } finally {
    await release();
  }
}

/**
 * Runs `go <args>` with `env`, logging its lines; a failure names the command and the last lines.
 * The working directory is GOBIN (a fresh build folder): no go.mod or go.work of the caller's interferes.
 */
export function runGo(go: string, args: string[], env: NodeJS.ProcessEnv, log: (m: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(go, args, { env, cwd: env['GOBIN'], stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    const onLine = (line: string) => {
      if (!line.trim()) return;
      tail.push(line);
      if (tail.length > 30) tail.shift();
      log(`go: ${line.replace(/^go: /, '')}`);
    };
    forEachLine(child.stdout, onLine);
    forEachLine(child.stderr, onLine);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new TemporalCliError(`go ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${tail.join('\n')}`));
    });
  });
}

/**
 * An O_EXCL-style lock: the file is created complete (pid inside) by hard-linking a temp file, so a
 * reader never sees it empty. A lock whose pid is gone is stale and gets removed. The lock only saves
 * duplicate work; correctness comes from the atomic rename, so the rare race on a stale lock is harmless.
 */
export async function acquireBuildLock(
  lockFile: string,
  target: string,
  log: (m: string) => void,
  what = 'Temporal CLI',
) {
  const mine = `${lockFile}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  await writeFile(mine, String(process.pid));
  const deadline = Date.now() + BUILD_WAIT_LIMIT_MS;
  let announced = false;
  try {
    for (;;) {
      try {
        await link(mine, lockFile);
        return async () => {
          await unlink(lockFile).catch(() => {});
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = Number.parseInt(await readFile(lockFile, 'utf8').catch(() => ''), 10);
      // An old lock is stale even if its pid is alive: pids get reused (containers restart at 1).
      const age = Date.now() - ((await stat(lockFile).catch(() => null))?.mtimeMs ?? 0);
      if (!Number.isInteger(holder) || !isAlive(holder) || age > BUILD_WAIT_LIMIT_MS) {
        await unlink(lockFile).catch(() => {});
        continue;
      }
      if (!announced) {
        log(`waiting for the ${what} build running in process ${holder}`);
        announced = true;
      }
      if (Date.now() > deadline) {
        throw new TemporalCliError(`gave up waiting for process ${holder} to build ${target} (lock ${lockFile})`);
      }
      await sleep(500);
    }
  } finally {
    await unlink(mine).catch(() => {});
  }
}

export async function removeStaleBuildDirs(cacheDir: string) {
  for (const name of await readdir(cacheDir)) {
    if (name.startsWith('.build-')) await rm(join(cacheDir, name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function isExecutableFile(path: string): Promise<boolean> {
  try {
    if (!(await stat(path)).isFile()) return false;
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function findOnPath(name: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return null;
}
