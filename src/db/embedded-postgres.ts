// PostgreSQL for machines without one: PGlite (PostgreSQL compiled to wasm, in this process)
// served over the PostgreSQL wire protocol on 127.0.0.1, so Prisma, pg and psql connect as usual.
//
// What pglite-socket 0.2 does with connections: PGlite is a single backend session; the server
// accepts up to `maxConnections` sockets and runs their messages one at a time through a queue,
// keeping an open transaction's statements together. So extra connections add no parallelism,
// and session state is shared: advisory locks do not separate connections. Beyond maxConnections
// a client gets a garbled "Too many connections" and is dropped, hence the generous limit here
// and a small pool per client (EMBEDDED_POOL_SIZE).
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedPostgresOptions {
  /** PGlite's data directory (created if missing); `:memory:` keeps nothing. */
  dataDir: string;
  /** TCP port; 0 picks a free one (see the returned url). */
  port: number;
  host?: string;
}

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/** Sockets the server accepts at once, like PostgreSQL's default: several processes' pools may attach. */
export const EMBEDDED_MAX_CONNECTIONS = 100;
/** Pool size for a client of the embedded server: its queries are serialised anyway. */
export const EMBEDDED_POOL_SIZE = 2;

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const host = options.host ?? '127.0.0.1';
  const inMemory = options.dataDir === ':memory:';
  const releaseLock = inMemory ? () => {} : lockDataDir(options.dataDir);

  let db: PGlite | undefined;
  let server: PGLiteSocketServer | undefined;
  try {
    if (!inMemory) mkdirSync(dirname(options.dataDir), { recursive: true });
    db = await PGlite.create(inMemory ? {} : { dataDir: options.dataDir });
    server = new PGLiteSocketServer({ db, host, port: options.port, maxConnections: EMBEDDED_MAX_CONNECTIONS });
    await server.start();
  } catch (err) {
    await server?.stop().catch(() => {});
    await db?.close().catch(() => {});
    releaseLock();
    const inUse = (err as { code?: string }).code === 'EADDRINUSE';
    throw new Error(
      inUse
        ? `cannot start embedded PostgreSQL: ${host}:${options.port} is already in use`
        : `cannot start embedded PostgreSQL (data in ${options.dataDir}): ${(err as Error).message}`,
      { cause: err },
    );
  }

  const port = Number(server.getServerConn().split(':').pop());
  const url = `postgresql://postgres@${host}:${port}/postgres`;
  const running = { db, server };
  let stopping: Promise<void> | undefined;
  return {
    url,
    stop: () =>
      (stopping ??= (async () => {
        try {
          await running.server.stop();
        } finally {
          await running.db.close();
          releaseLock();
        }
      })()),
  };
}

/**
 * PGlite has no postmaster.pid: two processes opening one data directory would corrupt it.
 * A `<dataDir>.lock` file holding our pid guards it; a lock whose process is gone is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  const lockPath = `${dataDir}.lock`;
  mkdirSync(dirname(lockPath), { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockPath, { force: true });
    } catch (err) {
      if ((err as { code?: string }).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(lockPath, 'utf8').trim());
      if (holder && isAlive(holder)) {
        throw new Error(`embedded PostgreSQL data in ${dataDir} is in use by process ${holder} (${lockPath})`);
      }
      rmSync(lockPath, { force: true });
    }
  }
  throw new Error(`cannot lock ${lockPath}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
}
