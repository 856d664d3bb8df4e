// Resolution order of the Temporal CLI, in temp dirs. The "go" here is a shell script that records
// its arguments and writes a fake binary, so the build path is exercised without a real build.
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveTemporalCli, TEMPORAL_CLI_VERSION, TemporalCliError } from '../../src/temporal/cli-binary.js';

let root: string;
let cacheDir: string;
let emptyPathDir: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'cli-binary-test-'));
  cacheDir = join(root, 'cache', `v${TEMPORAL_CLI_VERSION}`);
  emptyPathDir = join(root, 'empty-bin');
  await mkdir(emptyPathDir);
});
afterEach(() => rm(root, { recursive: true, force: true }));

async function executable(path: string, script = '#!/bin/sh\necho fake temporal\n') {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, script);
  await chmod(path, 0o755);
  return path;
}

/** A fake `go` that logs each call and, after an optional delay, "installs" a binary into $GOBIN. */
async function fakeGo(opts: { delaySeconds?: number; fail?: boolean } = {}) {
  const binDir = join(root, 'go-bin');
  const callLog = join(root, 'go-calls.log');
  await executable(
    join(binDir, 'go'),
    [
      '#!/bin/sh',
      'PATH=/usr/bin:/bin', // the caller's PATH holds only this script
      `echo "$*" >> '${callLog}'`,
      opts.delaySeconds ? `sleep ${opts.delaySeconds}` : '',
      opts.fail ? 'echo "go: module lookup disabled" >&2; exit 1' : '',
      'printf "#!/bin/sh\\necho built temporal\\n" > "$GOBIN/temporal"',
      'chmod +x "$GOBIN/temporal"',
    ].join('\n'),
  );
  const calls = async () => (await readFile(callLog, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  return { binDir, calls };
}

describe('resolveTemporalCli', () => {
  it('TEMPORAL_CLI pointing at a missing file is a clear error', async () => {
    const missing = join(root, 'nope', 'temporal');
    const attempt = resolveTemporalCli({ override: missing, env: { PATH: emptyPathDir }, cacheDir });
    await expect(attempt).rejects.toThrow(TemporalCliError);
    await expect(resolveTemporalCli({ override: missing, env: { PATH: emptyPathDir }, cacheDir })).rejects.toThrow(
      `TEMPORAL_CLI=${missing} is not an executable file`,
    );
  });

  it('TEMPORAL_CLI pointing at a non-executable file is an error too', async () => {
    const plain = join(root, 'temporal.txt');
    await writeFile(plain, 'not a program');
    await expect(resolveTemporalCli({ override: plain, env: { PATH: emptyPathDir }, cacheDir })).rejects.toThrow(
      /not an executable file/,
    );
  });

  it('TEMPORAL_CLI wins over PATH and cache', async () => {
    const chosen = await executable(join(root, 'mine', 'temporal'));
    const pathDir = join(root, 'path-bin');
    await executable(join(pathDir, 'temporal'));
    await executable(join(cacheDir, 'temporal'));
    const resolved = await resolveTemporalCli({ override: chosen, env: { PATH: pathDir }, cacheDir });
    expect(resolved).toEqual({ path: chosen, source: 'env' });
  });

  it('`temporal` on PATH comes before the cache', async () => {
    const pathDir = join(root, 'path-bin');
    const onPath = await executable(join(pathDir, 'temporal'));
    await executable(join(cacheDir, 'temporal'));
    const resolved = await resolveTemporalCli({ env: { PATH: `${emptyPathDir}:${pathDir}` }, cacheDir });
    expect(resolved).toEqual({ path: onPath, source: 'path' });
  });

  it('a cached binary is used without building, even with Go available', async () => {
    const cached = await executable(join(cacheDir, 'temporal'));
    const go = await fakeGo();
    const resolved = await resolveTemporalCli({ env: { PATH: go.binDir }, cacheDir, build: true });
    expect(resolved).toEqual({ path: cached, source: 'cache' });
    expect(await go.calls()).toEqual([]);
  });

  it('returns null when nothing is found and there is no Go', async () => {
    expect(await resolveTemporalCli({ env: { PATH: emptyPathDir }, cacheDir })).toBeNull();
  });

  it('returns null without building when build is false', async () => {
    const go = await fakeGo();
    expect(await resolveTemporalCli({ env: { PATH: go.binDir }, cacheDir, build: false })).toBeNull();
    expect(await go.calls()).toEqual([]);
  });

  it('builds once with go install into the cache, then reuses it', async () => {
    const go = await fakeGo();
    const messages: string[] = [];
    const first = await resolveTemporalCli({ env: { PATH: go.binDir }, cacheDir, log: (m) => messages.push(m) });
    expect(first).toEqual({ path: join(cacheDir, 'temporal'), source: 'built' });
    expect(await go.calls()).toEqual([
      `install -ldflags -X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_VERSION} github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`,
    ]);
    expect(messages.join('\n')).toMatch(/takes several minutes/);
    // Only the binary is left: no temp build dir, no lock.
    expect(await readdir(cacheDir)).toEqual(['temporal']);

    const second = await resolveTemporalCli({ env: { PATH: go.binDir }, cacheDir });
    expect(second).toEqual({ path: join(cacheDir, 'temporal'), source: 'cache' });
    expect(await go.calls()).toHaveLength(1);
  });

  it('concurrent callers share one build', async () => {
    const go = await fakeGo({ delaySeconds: 1 });
    const results = await Promise.all([
      resolveTemporalCli({ env: { PATH: go.binDir }, cacheDir }),
      resolveTemporalCli({ env: { PATH: go.binDir }, cacheDir }),
      resolveTemporalCli({ env: { PATH: go.binDir }, cacheDir }),
    ]);
    expect(await go.calls()).toHaveLength(1);
    expect(results.map((r) => r?.source).sort()).toEqual(['built', 'cache', 'cache']);
  });

  it('a failed build leaves no binary and reports go output', async () => {
    const go = await fakeGo({ fail: true });
    await expect(resolveTemporalCli({ env: { PATH: go.binDir }, cacheDir })).rejects.toThrow(/module lookup disabled/);
    expect(await readdir(cacheDir)).toEqual([]);
  });

  it('a stale lock and half-finished build dir from a killed build are cleaned up', async () => {
    await mkdir(join(cacheDir, '.build-killed'), { recursive: true });
    await writeFile(join(cacheDir, '.build-killed', 'temporal'), 'half a binary');
    await writeFile(join(cacheDir, '.build.lock'), '999999999'); // no such pid
    const go = await fakeGo();
    expect(await resolveTemporalCli({ env: { PATH: go.binDir }, cacheDir })).toMatchObject({ source: 'built' });
    expect(await readdir(cacheDir)).toEqual(['temporal']);
  });
});
