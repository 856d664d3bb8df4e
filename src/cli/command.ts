// What the database-backed CLI commands share: a bad argument is a UsageError, printed with the
// command's usage (exit 2, nothing changed); the database is resolved for the command and released.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Env } from '../config/env.js';
import { createPrismaClient, type PrismaClient } from '../db/client.js';
import { resolveDatabase } from '../db/resolve-database.js';
import { createLogger } from '../shared/log.js';
import { InvalidRequest } from '../operations/errors.js';

const log = createLogger('cli');

export interface CliIo {
  out: (line: string) => void;
}

/** A bad argument: printed with the usage; the command exits 2 having changed nothing. */
export class UsageError extends InvalidRequest {}

export function usageFailure(io: CliIo, command: string, message: string, usage: string): number {
  io.out(`durable-inbox ${command}: ${message}\n${usage}`);
  return 2;
}

/** Runs `fn` with a Prisma client on the configured (or local) database; exit code 0, or 2 on an invalid request (a UsageError, or one the shared operations refused). */
export async function withDatabase(
  cfg: Env,
  io: CliIo,
  command: { name: string; usage: string },
  fn: (prisma: PrismaClient) => Promise<void>,
): Promise<number> {
  const database = await resolveDatabase(cfg, log);
  const prisma = createPrismaClient(database.url);
  try {
    await fn(prisma);
    return 0;
  } catch (err) {
    if (!(err instanceof InvalidRequest)) throw err;
    return usageFailure(io, command.name, err.message, command.usage);
  } finally {
    await prisma.$disconnect();
    await database.stop();
  }
}

type Options = NonNullable<ParseArgsConfig['options']>;
type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ options: O; allowPositionals: true; strict: true }>>;

/**
 * `<sub> [flags] [positionals]` of a command: the subcommand, and its flags parsed strictly; or the
 * exit code when the subcommand is unknown (usage printed, 2) or a flag is (usage failure, 2).
 */
export function parseSubcommand<O extends Options>(
  io: CliIo,
  command: { name: string; usage: string; subcommands: readonly string[]; options: O },
  argv: string[],
): ({ sub: string } & Parsed<O>) | number {
  const [sub, ...rest] = argv;
  if (!sub || !command.subcommands.includes(sub)) {
    io.out(command.usage);
    return 2;
  }
  try {
    return { sub, ...parseArgs({ args: rest, options: command.options, allowPositionals: true, strict: true }) };
  } catch (err) {
    return usageFailure(io, command.name, (err as Error).message, command.usage);
  }
}

/** `90m`, `1h`, `2d` before now (a `--since` flag). */
export function sinceDate(text: string, now = Date.now()): Date {
  const m = /^(\d+)\s*(m|h|d)$/.exec(text.trim());
  if (!m) throw new UsageError(`--since: expected a duration like 30m, 1h or 2d (got ${JSON.stringify(text)})`);
  const unit = { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd'];
  return new Date(now - Number(m[1]) * unit);
}
