// What the bench cases share: percentiles, sizes, process memory, and the Temporal server a case
// runs on (the dev server, or with --stack the Temporal server on PostgreSQL).
import { readdir, readFile } from 'node:fs/promises';
import { databaseNameOf } from '../src/db/connection-url.js';
import { startDevServer } from '../src/temporal/dev-server.js';
import { startTemporalServer } from '../src/temporal/server.js';

/** The p-th percentile of an ascending list (nearest rank); NaN for an empty one. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
export const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** Resident memory (VmRSS) of a process, in bytes; 0 when it is gone. */
export async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  return kb ? Number(kb) * 1024 : 0;
}

/** This process's descendants whose command name starts with `temporal` (the server; the dev server's CLI). */
export async function temporalServerPids(): Promise<number[]> {
  const parentOf = new Map<number, number>();
  const nameOf = new Map<number, string>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const m = /^(\d+) \((.*)\) \S+ (\d+)/.exec(stat);
    if (m) {
      parentOf.set(Number(m[1]), Number(m[3]));
      nameOf.set(Number(m[1]), m[2]!);
    }
  }
  const descends = (pid: number): boolean => {
    for (let p = parentOf.get(pid); p !== undefined && p > 1; p = parentOf.get(p)) if (p === process.pid) return true;
    return false;
  };
  return [...nameOf].filter(([pid, name]) => name.startsWith('temporal') && descends(pid)).map(([pid]) => pid);
}

/** The Temporal server of a case, and the PostgreSQL databases it keeps (none for the dev server). */
export async function startBenchTemporal(
  stack: boolean,
  databaseUrl: string,
  sqlMaxConns?: { persistence: number; visibility: number },
): Promise<{ address: string; databases: string[]; stop(): Promise<void>; what: string }> {
  if (!stack) {
    const dev = await startDevServer({ port: 19_000 + Math.floor(Math.random() * 2000), headless: true });
    return { address: dev.address, databases: [], stop: () => dev.stop(), what: 'the Temporal dev server (SQLite in memory)' };
  }
  const server = await startTemporalServer({ databaseUrl: `${databaseUrl}_temporal`, port: 0, headless: true, ...(sqlMaxConns && { sqlMaxConns }) });
  return { address: server.address, databases: [databaseNameOf(server.databaseUrl), server.visibilityDatabase], stop: () => server.stop(), what: 'the Temporal server on PostgreSQL' };
}
