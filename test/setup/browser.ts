// The browser the page tests drive (playwright-core), found once per `npm test` run before any test:
//   CHROMIUM_PATH    this Chromium or Chrome, and no other;
//   on Linux x64     the one `npm install` brings: @sparticuz/chromium carries a brotli-packed headless
//                    Chromium, unpacked once into .cache/chromium/<version>/ (no apt, no root, no download);
//   otherwise        Debian's /usr/bin/chromium when it is there.
// It is started once here, so a browser that cannot run (a shared library missing) stops the run
// with one line that says what to do, instead of failing two suites half-way.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { projectRoot } from '../../src/temporal/project-root.js';

const DEBIAN_CHROMIUM = '/usr/bin/chromium';
/** The flags a sandbox-less machine (a container, root) needs. */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** No browser can be had: the message is the one line that says what to do. */
export class NoBrowserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoBrowserError';
  }
}

export async function prepareTestBrowser(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const path = await findBrowser(env);
  await tryLaunch(path);
  return path;
}

async function findBrowser(env: NodeJS.ProcessEnv): Promise<string> {
  const own = env['CHROMIUM_PATH'];
  if (own) {
    if (!existsSync(own)) throw new NoBrowserError(`CHROMIUM_PATH=${own} does not exist: fix or unset it`);
    return own;
  }
  if (platform() === 'linux' && arch() === 'x64') return unpackSparticuzChromium();
  if (existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  throw new NoBrowserError(
    `no browser for the page tests on ${platform()}-${arch()} (@sparticuz/chromium is Linux x64 only): ` +
      `install Chromium (Debian: apt-get install -y chromium) or set CHROMIUM_PATH=/path/to/chromium`,
  );
}

/**
 * Unpacks the package's Chromium into .cache/chromium/<version>/. The package unpacks into os.tmpdir()
 * and reuses whatever `chromium` file it finds there, so it runs in a child process whose TMPDIR is a
 * fresh directory, renamed into place only once complete: an interrupted unpack is never reused, and
 * a second run unpacking at the same time keeps the first one's copy.
 */
async function unpackSparticuzChromium(): Promise<string> {
  const require = createRequire(import.meta.url);
  let entry: string;
  try {
    entry = require.resolve('@sparticuz/chromium');
  } catch {
    throw new NoBrowserError('@sparticuz/chromium is not installed: run npm install');
  }
  const version = await packageVersion(entry);
  const dir = join(projectRoot(), '.cache', 'chromium', version);
  const binary = join(dir, 'chromium');
  if (existsSync(binary)) return binary;

  const partial = `${dir}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  const script = "const { default: c } = await import('@sparticuz/chromium'); await c.executablePath();";
  await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    cwd: projectRoot(),
    env: { ...process.env, TMPDIR: partial },
  });
  await rename(partial, dir).catch(async (err: NodeJS.ErrnoException) => {
    if (!existsSync(binary)) throw err;
    await rm(partial, { recursive: true, force: true });
  });
  return binary;
}

/** The version in the package.json above a package's entry file (its exports hide package.json). */
async function packageVersion(entry: string): Promise<string> {
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const { name, version } = JSON.parse(await readFile(file, 'utf8')) as { name?: string; version: string };
    if (name === '@sparticuz/chromium') return version;
  }
  throw new Error(`no package.json of @sparticuz/chromium above ${entry}`);
}

async function tryLaunch(path: string): Promise<void> {
  try {
    const browser = await chromium.launch({ executablePath: path, args: CHROMIUM_ARGS, timeout: 60_000 });
    await browser.close();
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    const library = /error while loading shared libraries: (\S+?):/.exec(text)?.[1];
    if (library) {
      throw new NoBrowserError(
        `the browser ${path} cannot load ${basename(library)}: install it (Debian: apt-get install -y libnss3 libnspr4 libexpat1) or set CHROMIUM_PATH`,
      );
    }
    throw new NoBrowserError(`the browser ${path} does not start (${text.split('\n')[0]}): set CHROMIUM_PATH to a working Chromium`);
  }
}
