// Every test file's CPU time, for the file-times reporter's table (a setup file: it runs before each
// file in its test process). A test process runs one file at a time, so what the process and the
// children it waited for (workers, CLIs, servers the file started and stopped) used between the file's
// start and its end is the file's. Not counted: what it asked of the shared Temporal dev server and
// PostgreSQL, and children still running when the file ends.
import { readFileSync } from 'node:fs';
import { afterAll } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    /** CPU milliseconds of the test process and its finished children during this file. */
    cpuMs?: number;
  }
}

/** utime + stime + cutime + cstime of this process, in milliseconds (/proc/self/stat; 100 ticks a second on Linux). */
function processCpuMs(): number | undefined {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return undefined; // not Linux: the table goes without the column
  }
}

const atStart = processCpuMs();
// Vitest hands the file's suite as the second argument and requires the first to be destructured.
// eslint-disable-next-line no-empty-pattern
afterAll(({}, suite) => {
  const atEnd = processCpuMs();
  if (atStart !== undefined && atEnd !== undefined) suite.meta.cpuMs = atEnd - atStart;
});
