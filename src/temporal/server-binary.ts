// Finds the Temporal server (PostgreSQL-capable, production shape), its SQL schema tool, its SQL
// schema files and the Web UI server, without downloading release archives (the machine may only
// reach package registries): an env override, then PATH, then our cache, then a `go install` build
// into the cache. Same conventions as cli-binary.ts (build lock, build dir + atomic rename).
//   TEMPORAL_SERVER_BIN     the server binary (`temporal-server`)
//   TEMPORAL_SQL_TOOL_BIN   the schema tool (`temporal-sql-tool`)
//   TEMPORAL_SCHEMA_DIR     the server's `schema` directory (holds postgresql/v12/{temporal,visibility})
//   TEMPORAL_UI_SERVER_BIN  the Web UI server (ui-server v2 `start` binary)
import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  acquireBuildLock,
  findOnPath,
  isExecutableFile,
  installIntoCache,
  removeStaleBuildDirs,
  runGo,
  TemporalCliError,
} from './cli-binary.js';
import { projectRoot } from './project-root.js';

/**
 * The release we run (≤ v1.29.1 carry CVE-2025-14986). v1.31.0 builds too now that the proxy serves
 * go.temporal.io/auto-scaled-workers; moving on means checking deploy/temporal/* against its config.
 * Keep docker-compose.yml's temporalio/server and temporalio/admin-tools tags equal to this.
 */
export const TEMPORAL_SERVER_VERSION = '1.30.9';
const SERVER_MODULE = 'go.temporal.io/server';
const SERVER_PACKAGES = [
  { pkg: `${SERVER_MODULE}/cmd/server`, built: 'server', name: 'temporal-server' },
  { pkg: `${SERVER_MODULE}/cmd/tools/sql`, built: 'sql', name: 'temporal-sql-tool' },
] as const;

/** The Web UI server the Temporal CLI v1.5.1 embeds (so its module is in a warm Go cache already). */
export const TEMPORAL_UI_SERVER_VERSION = '2.42.1';
const UI_PACKAGE = 'github.com/temporalio/ui-server/v2/cmd/server';
const UI_BINARY = 'temporal-ui-server';

const execFileAsync = promisify(execFile);

export type TemporalBinarySource = 'env' | 'path' | 'cache' | 'built';

export interface TemporalServerBinaries {
  /** `temporal-server` */
  server: string;
  /** `temporal-sql-tool` */
  sqlTool: string;
  /** The server's `schema` directory: `postgresql/v12/temporal/versioned` etc. live below it. */
  schemaDir: string;
  /** Where the server binary came from. */
  source: TemporalBinarySource;
}

export interface ResolveTemporalServerOptions {
  /** Build with `go install` when nothing else is found (default true). */
  build?: boolean;
  log?: (msg: string) => void;
  /** The TEMPORAL_SERVER_BIN, TEMPORAL_SQL_TOOL_BIN, TEMPORAL_SCHEMA_DIR and TEMPORAL_UI_SERVER_BIN settings. */
  overrides?: TemporalServerOverrides;
  /** Environment to find binaries and `go` on PATH and to build with (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Default `<project>/.cache/temporal-server/v1.30.9`. */
  cacheDir?: string;
}

export interface TemporalServerOverrides {
  server?: string;
  sqlTool?: string;
  schemaDir?: string;
  uiServer?: string;
}

export function defaultTemporalServerCacheDir(): string {
  return join(projectRoot(), '.cache', 'temporal-server', `v${TEMPORAL_SERVER_VERSION}`);
}

export function defaultTemporalUiCacheDir(): string {
  return join(projectRoot(), '.cache', 'temporal-ui', `v${TEMPORAL_UI_SERVER_VERSION}`);
}

/** The PostgreSQL 12+ schema directories below a server `schema` directory. */
export function postgresSchemaDirs(schemaDir: string): { temporal: string; visibility: string } {
  return {
    temporal: join(schemaDir, 'postgresql', 'v12', 'temporal', 'versioned'),
    visibility: join(schemaDir, 'postgresql', 'v12', 'visibility', 'versioned'),
  };
}

/**
 * The server, the schema tool and the schema files. null means "something is missing and there is
 * no Go to build it" (or build: false).
 */
export async function resolveTemporalServer(
  opts: ResolveTemporalServerOptions = {},
): Promise<TemporalServerBinaries | null> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? (() => {});
  const cacheDir = opts.cacheDir ?? defaultTemporalServerCacheDir();

  const overrides = opts.overrides ?? {};
  const server = await checkedOverride('TEMPORAL_SERVER_BIN', overrides.server);
  const sqlTool = await checkedOverride('TEMPORAL_SQL_TOOL_BIN', overrides.sqlTool);
  const schemaDir = await checkedSchemaOverride(overrides.schemaDir);
  const found = {
    server: server ? { path: server, source: 'env' as TemporalBinarySource } : null,
    sqlTool: sqlTool ? { path: sqlTool, source: 'env' as TemporalBinarySource } : null,
    schemaDir,
  };

  // PATH: only a matching release (a different one would not fit our schema files or our config).
  for (const [key, name] of [
    ['server', 'temporal-server'],
    ['sqlTool', 'temporal-sql-tool'],
  ] as const) {
    if (found[key]) continue;
    const onPath = await findOnPath(name, env);
    if (!onPath) continue;
    const version = await reportedVersion(onPath);
    if (version === TEMPORAL_SERVER_VERSION) found[key] = { path: onPath, source: 'path' };
    else log(`ignoring ${onPath}: it reports version ${version ?? '(none)'}, we need ${TEMPORAL_SERVER_VERSION}`);
  }

  const cached = cachePaths(cacheDir);
  if (!found.server && (await isExecutableFile(cached.server))) found.server = { path: cached.server, source: 'cache' };
  if (!found.sqlTool && (await isExecutableFile(cached.sqlTool)))
    found.sqlTool = { path: cached.sqlTool, source: 'cache' };
  if (!found.schemaDir && (await isDirectory(postgresSchemaDirs(cached.schemaDir).visibility)))
    found.schemaDir = cached.schemaDir;

  if (!found.server || !found.sqlTool || !found.schemaDir) {
    if (opts.build === false) return null;
    const go = await findOnPath('go', env);
    if (!go) {
      log(`no Temporal server ${TEMPORAL_SERVER_VERSION} found and no Go toolchain on PATH to build one`);
      return null;
    }
    const built = await buildServerIntoCache(go, cacheDir, env, log, {
      binaries: !found.server || !found.sqlTool,
      schema: !found.schemaDir,
    });
    found.server ??= { path: cached.server, source: built };
    found.sqlTool ??= { path: cached.sqlTool, source: built };
    found.schemaDir ??= cached.schemaDir;
  }
  return {
    server: found.server.path,
    sqlTool: found.sqlTool.path,
    schemaDir: found.schemaDir,
    source: found.server.source,
  };
}

/** The Web UI server binary (ui-server v2), or null when there is none and no Go to build it. */
export async function resolveTemporalUiServer(
  opts: ResolveTemporalServerOptions = {},
): Promise<{ path: string; source: TemporalBinarySource } | null> {
  const env = opts.env ?? process.env;
  const log = opts.log ?? (() => {});
  const cacheDir = opts.cacheDir ?? defaultTemporalUiCacheDir();
  const override = await checkedOverride('TEMPORAL_UI_SERVER_BIN', opts.overrides?.uiServer);
  if (override) return { path: override, source: 'env' };
  const target = join(cacheDir, UI_BINARY);
  if (await isExecutableFile(target)) return { path: target, source: 'cache' };
  if (opts.build === false) return null;
  const go = await findOnPath('go', env);
  if (!go) {
    log('no Temporal Web UI server found and no Go toolchain on PATH to build one');
    return null;
  }
  const built = await installIntoCache({
    cacheDir,
    binary: UI_BINARY,
    what: 'Temporal Web UI server',
    log,
    install: async (buildDir) => {
      log(`building the Temporal Web UI server v${TEMPORAL_UI_SERVER_VERSION} with \`go install\` into ${cacheDir}`);
      // go install names the binary after its package folder (server); installIntoCache renames it.
      await runGo(go, ['install', `${UI_PACKAGE}@v${TEMPORAL_UI_SERVER_VERSION}`], buildEnv(env, buildDir), log);
      await rename(join(buildDir, 'server'), join(buildDir, UI_BINARY));
    },
  });
  return built;
}

function cachePaths(cacheDir: string) {
  return {
    server: join(cacheDir, 'temporal-server'),
    sqlTool: join(cacheDir, 'temporal-sql-tool'),
    schemaDir: join(cacheDir, 'schema'),
  };
}

async function buildServerIntoCache(
  go: string,
  cacheDir: string,
  env: NodeJS.ProcessEnv,
  log: (m: string) => void,
  want: { binaries: boolean; schema: boolean },
): Promise<'built' | 'cache'> {
  await mkdir(cacheDir, { recursive: true });
  const cached = cachePaths(cacheDir);
  const release = await acquireBuildLock(join(cacheDir, '.build.lock'), cached.server, log, 'Temporal server');
  try {
    // A concurrent caller may have finished the build while we waited for the lock.
    const needBinaries =
      want.binaries && !((await isExecutableFile(cached.server)) && (await isExecutableFile(cached.sqlTool)));
    const needSchema = want.schema && !(await isDirectory(postgresSchemaDirs(cached.schemaDir).visibility));
    if (!needBinaries && !needSchema) return 'cache';
    await removeStaleBuildDirs(cacheDir);
    // Build into a private directory and rename: a killed build never leaves a half-written binary.
    const buildDir = await mkdtemp(join(cacheDir, '.build-'));
    try {
      const started = Date.now();
      const goEnv = buildEnv(env, buildDir);
      if (needBinaries) {
        log(
          `building Temporal server v${TEMPORAL_SERVER_VERSION} and temporal-sql-tool with \`go install\` into ` +
            `${cacheDir}; this takes several minutes the first time (later runs reuse the binaries)`,
        );
        await runGo(go, ['install', ...SERVER_PACKAGES.map((p) => `${p.pkg}@v${TEMPORAL_SERVER_VERSION}`)], goEnv, log);
      }
      if (needSchema) {
        // The schema files ship in the server module; copy them so the cache stands on its own
        // (`go clean -modcache` must not break it).
        const moduleDir = await goModuleDir(go, `${SERVER_MODULE}@v${TEMPORAL_SERVER_VERSION}`, goEnv, buildDir);
        await cp(join(moduleDir, 'schema'), join(buildDir, 'schema'), { recursive: true });
        await makeWritable(join(buildDir, 'schema')); // the module cache's files are read-only
        await rm(cached.schemaDir, { recursive: true, force: true });
        await rename(join(buildDir, 'schema'), cached.schemaDir);
      }
      if (needBinaries) {
        // The server last: its presence is what a waiting caller checks first.
        for (const p of [...SERVER_PACKAGES].reverse()) await rename(join(buildDir, p.built), join(cacheDir, p.name));
        const version = await reportedVersion(cached.server);
        if (version !== TEMPORAL_SERVER_VERSION) {
          throw new TemporalCliError(`${cached.server} reports version ${version ?? '(none)'} after the build`);
        }
      }
      log(
        `Temporal server ${TEMPORAL_SERVER_VERSION} ready in ${cacheDir} (${Math.round((Date.now() - started) / 1000)}s)`,
      );
      return 'built';
    } finally {
      await rm(buildDir, { recursive: true, force: true });
    }
  } finally {
    await release();
  }
}

/**
 * v1.30.9's go.mod asks for go ≥ 1.26.10: GOTOOLCHAIN=auto lets an older local Go fetch that
 * toolchain from the module proxy. A caller's explicit non-local choice is kept.
 */
function buildEnv(env: NodeJS.ProcessEnv, gobin: string): NodeJS.ProcessEnv {
  const toolchain = env['GOTOOLCHAIN'] && env['GOTOOLCHAIN'] !== 'local' ? env['GOTOOLCHAIN'] : 'auto';
  return { ...env, GOBIN: gobin, GOTOOLCHAIN: toolchain };
}

async function goModuleDir(go: string, moduleAtVersion: string, env: NodeJS.ProcessEnv, cwd: string): Promise<string> {
  try {
    const { stdout } = await execFileAsync(go, ['mod', 'download', '-json', moduleAtVersion], {
      env,
      cwd,
      maxBuffer: 1 << 20,
    });
    const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
    if (!dir) throw new Error(`no Dir in: ${stdout}`);
    return dir;
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new TemporalCliError(`go mod download ${moduleAtVersion} failed: ${e.stderr || e.message}`);
  }
}

/** "temporal version 1.30.9" → "1.30.9"; null when the binary does not say. */
async function reportedVersion(binary: string): Promise<string | null> {
  try {
    const { stdout } = await execFileAsync(binary, ['--version'], { timeout: 10_000 });
    return /(\d+\.\d+\.\d+)/.exec(stdout)?.[1] ?? null;
  } catch {
    return null;
  }
}

async function checkedOverride(name: string, value: string | undefined): Promise<string | null> {
  if (!value) return null;
  if (!(await isExecutableFile(value))) {
    throw new TemporalCliError(`${name}=${value} is not an executable file; fix or unset it`);
  }
  return value;
}

async function checkedSchemaOverride(value: string | undefined): Promise<string | null> {
  if (!value) return null;
  const { visibility } = postgresSchemaDirs(value);
  if (!(await isDirectory(visibility))) {
    throw new TemporalCliError(
      `TEMPORAL_SCHEMA_DIR=${value} has no postgresql/v12/visibility/versioned; point it at the server's schema directory`,
    );
  }
  return value;
}

async function makeWritable(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await makeWritable(path);
    else await chmod(path, 0o644);
  }
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isDirectory() ?? false;
}
