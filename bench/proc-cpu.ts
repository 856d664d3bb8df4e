// CPU time per process group during a bench scenario, read from /proc, so that figures compare
// across machines of different speed: our workers (this process and the worker processes it
// started), the Temporal server (dev server or temporal-server), PostgreSQL (every postgres
// process on the machine), the emulators (the emulator processes this process started) and the
// mail servers (the Dovecot and Postfix this process started: mail-servers/).
// A process that exits during the scenario (a SIGKILLed worker) takes its CPU time with it, so
// the workers' share is a floor when workers are killed.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export const CPU_GROUPS = ['workers', 'temporal', 'postgres', 'emulators', 'mailServers'] as const;
export type CpuGroup = (typeof CPU_GROUPS)[number];

/** Clock ticks per second of /proc's utime and stime (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
  cpuMs: number;
}

/** The program a process runs (Dovecot's and Postfix's children rename themselves). */
function exe(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return '';
  }
}

function readProc(pid: number): Proc | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm is in parentheses and may hold spaces: the fields after the last ')' are positional.
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
    return { pid, ppid: Number(fields[1]), comm, cpuMs: (ticks * 1000) / TICKS_PER_SECOND };
  } catch {
    return undefined; // gone between the listing and the read
  }
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** Which group a process belongs to, or none (not part of the run). */
export function groupOf(p: { comm: string; cmdline: string; ours: boolean; exe?: string }): CpuGroup | undefined {
  if (p.comm === 'postgres' || p.comm.startsWith('postgres:')) return 'postgres';
  if (!p.ours) return undefined;
  if (/^\/usr\/(sbin\/dovecot|lib\/dovecot\/|lib\/postfix\/|sbin\/post)/.test(p.exe ?? '') || /\/usr\/lib\/postfix\/sbin\/master/.test(p.cmdline)) return 'mailServers';
  if (p.comm.startsWith('temporal')) return 'temporal'; // the dev server, temporal-server, temporal-ui-server
  if (/(^|[\s/])emulators\//.test(p.cmdline)) return 'emulators';
  return 'workers';
}

export type CpuSnapshot = Map<number, { group: CpuGroup; cpuMs: number }>;

/** The CPU time so far of every process in a group. */
export function cpuSnapshot(root = process.pid): CpuSnapshot {
  const procs = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readProc(Number(name)))
    .filter((p): p is Proc => p !== undefined);
  const children = new Map<number, number[]>();
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
  const ours = new Set<number>([root]);
  const queue = [root];
  while (queue.length > 0) {
    for (const c of children.get(queue.pop()!) ?? []) {
      if (ours.has(c)) continue;
      ours.add(c);
      queue.push(c);
    }
  }
  const snapshot: CpuSnapshot = new Map();
  for (const p of procs) {
    const mine = ours.has(p.pid);
    const group = groupOf({ comm: p.comm, cmdline: mine ? cmdline(p.pid) : '', ours: mine, exe: mine ? exe(p.pid) : '' });
    if (group) snapshot.set(p.pid, { group, cpuMs: p.cpuMs });
  }
  return snapshot;
}

/** CPU milliseconds each group spent between two snapshots (a process new since `before` counts from zero). */
export function cpuSpent(before: CpuSnapshot, after: CpuSnapshot): Record<CpuGroup, number> {
  const spent: Record<CpuGroup, number> = { workers: 0, temporal: 0, postgres: 0, emulators: 0, mailServers: 0 };
  for (const [pid, now] of after) spent[now.group] += now.cpuMs - (before.get(pid)?.cpuMs ?? 0);
  return spent;
}

/** `<label> CPU ms/email: total T (workers W, Temporal server S, PostgreSQL P, emulators E[, mail servers M])`. */
export function cpuPerEmailLine(label: string, spent: Record<CpuGroup, number>, emails: number): string {
  const per = (ms: number) => (ms / Math.max(1, emails)).toFixed(1);
  const total = CPU_GROUPS.reduce((sum, g) => sum + spent[g], 0);
  const mail = spent.mailServers > 0 ? `, mail servers ${per(spent.mailServers)}` : '';
  return `${label} CPU ms/email: ${per(total)} (workers ${per(spent.workers)}, Temporal server ${per(spent.temporal)}, PostgreSQL ${per(spent.postgres)}, emulators ${per(spent.emulators)}${mail})`;
}
