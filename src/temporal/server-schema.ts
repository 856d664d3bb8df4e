// Temporal's PostgreSQL schemas (persistence + SQL visibility), set up with the release's own
// temporal-sql-tool, exactly as docker-compose.yml's temporal-schema service does:
//   create-database; setup-schema -v 0.0; update-schema -d <versioned dir>
// All three are idempotent in v1.30 (an existing database is fine, setup-schema leaves a newer
// version alone, update-schema applies only the missing steps), so this runs on every start.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { databaseNameOf, redactUrl } from '../db/connection-url.js';
import { postgresSchemaDirs } from './server-binary.js';

const execFileAsync = promisify(execFile);

export interface TemporalSchemaOptions {
  /** `temporal-sql-tool` */
  sqlTool: string;
  /** The server's `schema` directory (see resolveTemporalServer). */
  schemaDir: string;
  /** postgresql://user[:password]@host:port/<persistence database> */
  databaseUrl: string;
  /** The visibility database on the same server. */
  visibilityDatabase: string;
  log?: (m: string) => void;
}

export interface PostgresTarget {
  host: string;
  port: number;
  user: string;
  password: string;
}

/** host/port/user/password of a postgresql:// URL (defaults as libpq: 5432, user postgres). */
export function postgresTarget(databaseUrl: string): PostgresTarget {
  const url = new URL(databaseUrl);
  return {
    host: url.hostname || '127.0.0.1',
    port: url.port ? Number(url.port) : 5432,
    user: decodeURIComponent(url.username) || 'postgres',
    password: decodeURIComponent(url.password),
  };
}

/** Creates both databases if missing and brings their schemas to this release's version. */
export async function setupTemporalSchemas(opts: TemporalSchemaOptions): Promise<void> {
  const log = opts.log ?? (() => {});
  const target = postgresTarget(opts.databaseUrl);
  const dirs = postgresSchemaDirs(opts.schemaDir);
  const steps: Array<[database: string, versionedDir: string]> = [
    [databaseNameOf(opts.databaseUrl), dirs.temporal],
    [opts.visibilityDatabase, dirs.visibility],
  ];
  for (const [database, versionedDir] of steps) {
    const started = Date.now();
    for (const command of [['create-database'], ['setup-schema', '-v', '0.0'], ['update-schema', '-d', versionedDir]]) {
      await runSqlTool(opts.sqlTool, target, database, command, opts.databaseUrl);
    }
    log(`schema of ${database} is up to date (${Date.now() - started} ms)`);
  }
}

async function runSqlTool(
  sqlTool: string,
  target: PostgresTarget,
  database: string,
  command: string[],
  databaseUrl: string,
): Promise<void> {
  const args = [
    '--plugin',
    'postgres12',
    '--ep',
    target.host,
    '-p',
    String(target.port),
    '-u',
    target.user,
    '--db',
    database,
    ...command,
  ];
  try {
    // The password through the environment, not argv (visible in `ps`).
    await execFileAsync(sqlTool, args, {
      env: { PATH: process.env['PATH'] ?? '', SQL_PASSWORD: target.password },
      maxBuffer: 16 << 20,
      timeout: 120_000,
    });
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    const output = `${e.stdout ?? ''}\n${e.stderr ?? ''}`
      .split('\n')
      .filter((line) => line.trim() && !line.includes('DEBUG'))
      .slice(-15)
      .join('\n');
    throw new Error(
      `temporal-sql-tool ${command[0]} on database ${database} (${redactUrl(databaseUrl)}) failed: ${e.message.split('\n')[0]}\n${output}`,
      { cause: err },
    );
  }
}
