// Resolution of the Temporal server binaries and schema files, in temp dirs. The "go" here is a
// shell script that records its calls, "installs" fake binaries into $GOBIN and answers
// `go mod download -json` with a fake module directory (read-only, like Go's module cache).
import { access, chmod, constants, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TemporalCliError } from '../../src/temporal/cli-binary.js';
import {
  postgresSchemaDirs,
  resolveTemporalServer,
  resolveTemporalUiServer,
  TEMPORAL_SERVER_VERSION,
} from '../../src/temporal/server-binary.js';

let root: string;
let cacheDir: string;
let emptyPathDir: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'server-binary-test-'));
  cacheDir = join(root, 'cache', `v${TEMPORAL_SERVER_VERSION}`);
  emptyPathDir = join(root, 'empty-bin');
  await mkdir(emptyPathDir);
});
afterEach(async () => {
  await chmodTree(root).catch(() => {});
  await rm(root, { recursive: true, force: true });
});

/** The fake module directory is read-only; make it removable again. */
async function chmodTree(dir: string) {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await chmodTree(join(dir, entry.name));
  }
}

async function executable(path: string, script: string) {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, script);
  await chmod(path, 0o755);
  return path;
}

const fakeBinary = (version: string) => `#!/bin/sh\necho "temporal version ${version}"\n`;

async function fakeModule() {
  const moduleDir = join(root, 'gomodcache', `server@v${TEMPORAL_SERVER_VERSION}`);
  for (const dir of Object.values(postgresSchemaDirs(join(moduleDir, 'schema')))) {
    await mkdir(join(dir, 'v1.0'), { recursive: true });
    await writeFile(join(dir, 'v1.0', 'manifest.json'), '{}');
  }
  await chmodReadOnly(moduleDir);
  return moduleDir;
}

async function chmodReadOnly(dir: string) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await chmodReadOnly(path);
    else await chmod(path, 0o444);
  }
  await chmod(dir, 0o555);
}

async function fakeGo(opts: { delaySeconds?: number; fail?: boolean } = {}) {
  const moduleDir = await fakeModule();
  const binDir = join(root, 'go-bin');
  const callLog = join(root, 'go-calls.log');
  await executable(
    join(binDir, 'go'),
    [
      '#!/bin/sh',
      'PATH=/usr/bin:/bin',
      `echo "GOTOOLCHAIN=$GOTOOLCHAIN $*" >> '${callLog}'`,
      opts.delaySeconds ? `sleep ${opts.delaySeconds}` : '',
      opts.fail ? 'echo "go: go.temporal.io/auto-scaled-workers: not found" >&2; exit 1' : '',
      'if [ "$1" = "mod" ]; then',
      `  printf '{"Path":"go.temporal.io/server","Dir":"${moduleDir}"}\\n'`,
      '  exit 0',
      'fi',
      'for pkg in "$@"; do',
      '  case "$pkg" in',
      `    */cmd/server@*) printf '${fakeBinary(TEMPORAL_SERVER_VERSION).replace(/\n/g, '\\n')}' > "$GOBIN/server"; chmod +x "$GOBIN/server";;`,
      `    */cmd/tools/sql@*) printf '${fakeBinary(TEMPORAL_SERVER_VERSION).replace(/\n/g, '\\n')}' > "$GOBIN/sql"; chmod +x "$GOBIN/sql";;`,
      '  esac',
      'done',
    ].join('\n'),
  );
  const calls = async () => (await readFile(callLog, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  return { binDir, calls };
}

describe('resolveTemporalServer', () => {
  it('an override pointing at a missing file is a clear error', async () => {
    const missing = join(root, 'nope', 'temporal-server');
    await expect(
      resolveTemporalServer({ overrides: { server: missing }, env: { PATH: emptyPathDir }, cacheDir }),
    ).rejects.toThrow(
      new TemporalCliError(`TEMPORAL_SERVER_BIN=${missing} is not an executable file; fix or unset it`),
    );
  });

  it('TEMPORAL_SCHEMA_DIR must hold the PostgreSQL schemas', async () => {
    await expect(
      resolveTemporalServer({ overrides: { schemaDir: root }, env: { PATH: emptyPathDir }, cacheDir }),
    ).rejects.toThrow(/TEMPORAL_SCHEMA_DIR=.* has no postgresql\/v12\/visibility\/versioned/);
  });

  it('without Go, or with build: false, a missing piece gives null', async () => {
    expect(await resolveTemporalServer({ env: { PATH: emptyPathDir }, cacheDir })).toBeNull();
    const go = await fakeGo();
    expect(await resolveTemporalServer({ env: { PATH: go.binDir }, cacheDir, build: false })).toBeNull();
    expect(await go.calls()).toEqual([]);
  });

  it('builds both binaries in one go install with GOTOOLCHAIN=auto, copies the schemas, then reuses the cache', async () => {
    const go = await fakeGo();
    const env = { PATH: go.binDir, GOTOOLCHAIN: 'local' };
    const built = await resolveTemporalServer({ env, cacheDir });
    expect(built).toEqual({
      server: join(cacheDir, 'temporal-server'),
      sqlTool: join(cacheDir, 'temporal-sql-tool'),
      schemaDir: join(cacheDir, 'schema'),
      source: 'built',
    });
    expect(await go.calls()).toEqual([
      `GOTOOLCHAIN=auto install go.temporal.io/server/cmd/server@v${TEMPORAL_SERVER_VERSION} go.temporal.io/server/cmd/tools/sql@v${TEMPORAL_SERVER_VERSION}`,
      `GOTOOLCHAIN=auto mod download -json go.temporal.io/server@v${TEMPORAL_SERVER_VERSION}`,
    ]);
    // A writable copy: the cache must survive `go clean -modcache` and be removable.
    const manifest = join(postgresSchemaDirs(built!.schemaDir).visibility, 'v1.0', 'manifest.json');
    await access(manifest, constants.W_OK);

    const again = await resolveTemporalServer({ env, cacheDir });
    expect(again?.source).toBe('cache');
    expect(await go.calls()).toHaveLength(2);
  });

  it('concurrent callers share one build', async () => {
    const go = await fakeGo({ delaySeconds: 1 });
    const results = await Promise.all(
      [1, 2, 3].map(() => resolveTemporalServer({ env: { PATH: go.binDir }, cacheDir })),
    );
    expect(results.map((r) => r?.server)).toEqual(Array(3).fill(join(cacheDir, 'temporal-server')));
    expect((await go.calls()).filter((c) => c.includes(' install '))).toHaveLength(1);
  });

  it('a failed build is an error with Go output, and leaves no binary behind', async () => {
    const go = await fakeGo({ fail: true });
    await expect(resolveTemporalServer({ env: { PATH: go.binDir }, cacheDir })).rejects.toThrow(/auto-scaled-workers/);
    expect(await resolveTemporalServer({ env: { PATH: emptyPathDir }, cacheDir, build: false })).toBeNull();
  });

  it('uses binaries on PATH only when they are this release; the schemas still come from the cache', async () => {
    const go = await fakeGo();
    const pathDir = join(root, 'path-bin');
    await executable(join(pathDir, 'temporal-server'), fakeBinary('1.29.1'));
    await executable(join(pathDir, 'temporal-sql-tool'), fakeBinary(TEMPORAL_SERVER_VERSION));
    const logs: string[] = [];
    const resolved = await resolveTemporalServer({
      env: { PATH: `${pathDir}:${go.binDir}` },
      cacheDir,
      log: (m) => logs.push(m),
    });
    expect(resolved?.sqlTool).toBe(join(pathDir, 'temporal-sql-tool'));
    expect(resolved?.server).toBe(join(cacheDir, 'temporal-server'));
    expect(logs.join('\n')).toContain('reports version 1.29.1');
  });

  it('honours all overrides without building anything', async () => {
    const go = await fakeGo();
    const moduleDir = join(root, 'gomodcache', `server@v${TEMPORAL_SERVER_VERSION}`);
    const server = await executable(join(root, 'own', 'temporal-server'), fakeBinary('1.30.0'));
    const sqlTool = await executable(join(root, 'own', 'temporal-sql-tool'), fakeBinary('1.30.0'));
    const resolved = await resolveTemporalServer({
      overrides: { server, sqlTool, schemaDir: join(moduleDir, 'schema') },
      env: { PATH: go.binDir },
      cacheDir,
    });
    expect(resolved).toEqual({ server, sqlTool, schemaDir: join(moduleDir, 'schema'), source: 'env' });
    expect(await go.calls()).toEqual([]);
  });
});

describe('resolveTemporalUiServer', () => {
  it('honours TEMPORAL_UI_SERVER_BIN, else null without Go', async () => {
    const ui = await executable(join(root, 'own', 'ui-server'), '#!/bin/sh\n');
    expect(
      await resolveTemporalUiServer({ overrides: { uiServer: ui }, env: { PATH: emptyPathDir }, cacheDir }),
    ).toEqual({
      path: ui,
      source: 'env',
    });
    expect(await resolveTemporalUiServer({ env: { PATH: emptyPathDir }, cacheDir })).toBeNull();
  });
});
