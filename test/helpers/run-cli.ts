// Runs a CLI command's entry against the test database and collects what it prints.
import { inject } from 'vitest';
import type { CliIo } from '../../src/cli/command.js';
import { loadConfig, type Env } from '../../src/config/env.js';

type Entry = (cfg: Env, argv: string[], io: CliIo) => Promise<number>;

/** `env`: more of the environment the command reads (its Google client, its push settings, ...). */
export function cliRunner(entry: Entry, env: Record<string, string> = {}): (...argv: string[]) => Promise<{ code: number; out: string }> {
  return async (...argv) => {
    const lines: string[] = [];
    const code = await entry(loadConfig({ ...env, DATABASE_URL: inject('databaseUrl'), LOG_LEVEL: 'warn' }), argv, { out: (l) => lines.push(l) });
    return { code, out: lines.join('\n') };
  };
}
