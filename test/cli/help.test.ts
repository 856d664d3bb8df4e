// The command line's help, run as a user runs it: `npm run cli -- --help` and the `durable-inbox`
// launcher package.json names as its bin (bin/durable-inbox.js, through tsx), in a child process.
// Help needs no configuration; every group says what it is for, and `<group> --help` lists its
// commands, a line each, then their usage.
import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/temporal/project-root.js';

const root = projectRoot();
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin?: Record<string, string> };
const GROUPS = ['accounts', 'actions', 'agents', 'backfill', 'cleanup', 'mcp-tokens', 'memory', 'reminders', 'rules', 'schedules', 'threads'];

/** Runs a command in the checkout with no configuration in its environment; its exit code and output. */
async function run(file: string, args: string[]): Promise<{ code: number; out: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(DATABASE_URL|TEMPORAL_|DURABLE_INBOX_)/.test(k)));
  try {
    const { stdout } = await promisify(execFile)(file, args, { cwd: root, env, timeout: 60_000 });
    return { code: 0, out: stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, out: e.stdout ?? '' };
  }
}

describe('the CLI help', () => {
  it('package.json names the durable-inbox launcher, an executable node script', () => {
    expect(pkg.bin?.['durable-inbox']).toBe('bin/durable-inbox.js');
    const launcher = join(root, pkg.bin!['durable-inbox']!);
    accessSync(launcher, constants.X_OK);
    expect(readFileSync(launcher, 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
  });

  it('durable-inbox --help says what each group does, a line each, and exits 0', async () => {
    const { code, out } = await run(process.execPath, [join(root, 'bin/durable-inbox.js'), '--help']);
    expect(code, out).toBe(0);
    for (const group of GROUPS) expect(out, group).toMatch(new RegExp(`^  ${group} +\\S.{20,}$`, 'm'));
    expect(out).toContain('npm run cli -- <group> --help');
  });

  it('npm run cli -- --help says the same', async () => {
    const { code, out } = await run('npm', ['run', '--silent', 'cli', '--', '--help']);
    expect(code, out).toBe(0);
    for (const group of GROUPS) expect(out, group).toMatch(new RegExp(`^  ${group} +\\S.{20,}$`, 'm'));
  });

  it('durable-inbox reminders --help lists its commands, a line each, then their usage', async () => {
    const { code, out } = await run(process.execPath, [join(root, 'bin/durable-inbox.js'), 'reminders', '--help']);
    expect(code, out).toBe(0);
    for (const command of ['add', 'list', 'show', 'pause', 'resume', 'remove']) expect(out, command).toMatch(new RegExp(`^  ${command} +\\S.{10,}$`, 'm'));
    expect(out).toContain('usage: npm run cli -- reminders add TITLE --at HH:MM');
  });

  it('every group lists exactly the commands its usage names, each with what it does', async () => {
    const { GROUPS: help, groupHelp } = await import('../../src/cli/help.js');
    expect(Object.keys(help).sort()).toEqual(GROUPS);
    for (const [group, { commands, usage }] of Object.entries(help)) {
      // `npm run cli -- rules enable|disable|remove <rule id>` names enable, disable and remove.
      const named = [...usage.matchAll(new RegExp(`(?:-- |\\| )${group} ([a-z|-]+)`, 'g'))].flatMap((m) => m[1]!.split('|'));
      expect(commands.map(([c]) => c).sort(), group).toEqual([...new Set(named)].sort());
      const lines = groupHelp(group).split('\n');
      for (const [command, does] of commands) {
        expect(lines.find((l) => l.startsWith(`  ${command} `))?.slice(2 + command.length).trim(), `${group} ${command}`).toBe(does);
      }
    }
  });
});
