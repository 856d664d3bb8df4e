// The benches' CPU accounting from /proc: which process counts in which group, and what a
// snapshot pair says a busy child process spent.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { cpuPerEmailLine, cpuSnapshot, cpuSpent, groupOf } from '../../bench/proc-cpu.js';

describe('bench CPU per process group', () => {
  it('groups PostgreSQL wherever it runs, and the rest only when this run started it', () => {
    expect(groupOf({ comm: 'postgres', cmdline: '', ours: false })).toBe('postgres');
    expect(groupOf({ comm: 'temporal', cmdline: 'temporal server start-dev', ours: true })).toBe('temporal');
    expect(groupOf({ comm: 'temporal-server', cmdline: '', ours: true })).toBe('temporal');
    expect(groupOf({ comm: 'node', cmdline: 'node --import tsx emulators/gmail/main.ts --port 0', ours: true })).toBe('emulators');
    expect(groupOf({ comm: 'node', cmdline: 'node --import tsx src/workers/gmail-worker.ts', ours: true })).toBe('workers');
    expect(groupOf({ comm: 'node', cmdline: 'node some-other-app.js', ours: false })).toBeUndefined();
    // Dovecot's and Postfix's processes rename themselves: their program says what they are.
    expect(groupOf({ comm: 'imap', cmdline: 'dovecot/imap', ours: true, exe: '/usr/lib/dovecot/imap' })).toBe('mailServers');
    expect(groupOf({ comm: 'dovecot', cmdline: 'dovecot -F -c x', ours: true, exe: '/usr/sbin/dovecot' })).toBe('mailServers');
    expect(groupOf({ comm: 'smtpd', cmdline: 'smtpd -n 127.0.0.1:2525 -t inet', ours: true, exe: '/usr/lib/postfix/sbin/smtpd' })).toBe('mailServers');
    expect(groupOf({ comm: 'sh', cmdline: "/bin/sh -c /usr/lib/postfix/sbin/master -c '/tmp/x' -d", ours: true, exe: '/usr/bin/dash' })).toBe('mailServers');
    expect(groupOf({ comm: 'imap', cmdline: 'dovecot/imap', ours: false, exe: '/usr/lib/dovecot/imap' })).toBeUndefined();
  });

  it('counts what a child process burns between two snapshots in its group', async () => {
    const before = cpuSnapshot();
    // A busy child of this process: about 300 ms of CPU.
    const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 300; while (Date.now() < end);']);
    const ticks: number[] = [];
    const sampler = setInterval(() => ticks.push(cpuSpent(before, cpuSnapshot()).workers), 50);
    await once(child, 'exit');
    clearInterval(sampler);
    // The child's share shows while it runs (a process that has exited takes its time with it).
    expect(Math.max(...ticks)).toBeGreaterThan(100);
    const line = cpuPerEmailLine('case', { workers: 1000, temporal: 500, postgres: 100, emulators: 50, mailServers: 0 }, 10);
    expect(line).toBe('case CPU ms/email: 165.0 (workers 100.0, Temporal server 50.0, PostgreSQL 10.0, emulators 5.0)');
    const withMail = cpuPerEmailLine('case', { workers: 1000, temporal: 500, postgres: 100, emulators: 0, mailServers: 200 }, 10);
    expect(withMail).toBe('case CPU ms/email: 180.0 (workers 100.0, Temporal server 50.0, PostgreSQL 10.0, emulators 0.0, mail servers 20.0)');
  });
});
