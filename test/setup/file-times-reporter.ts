// A vitest reporter that prints, at the end of a run, every test file with its time, slowest first:
// the wall time from its start to its end (what the run waited for), and within it the import of the
// file and the time of its tests and hooks, and the CPU the file's test process and the children it
// waited for used meanwhile (test/setup/file-cpu.ts). So the next slow or heavy file is seen in CI's
// output as it lands.
// After the table it names every failed test and file with the first line of its error, so the end of
// a long log (all a CI record may keep) still says what failed.
// Used beside the default reporter (vitest.config.ts, .ci/run).
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

interface FileTime {
  file: string;
  wallMs: number;
  importMs: number;
  testsMs: number;
  tests: number;
  state: string;
  cpuMs: number | undefined;
}

export default class FileTimesReporter implements Reporter {
  private started = new Map<string, number>();
  private times: FileTime[] = [];
  private failures: string[] = [];
  private root = process.cwd();

  onInit(vitest: { config: { root: string } }): void {
    this.root = vitest.config.root;
  }

  /** Queued: its worker has it, before its import. */
  onTestModuleQueued(module: TestModule): void {
    this.started.set(module.id, performance.now());
  }

  onTestModuleEnd(module: TestModule): void {
    const start = this.started.get(module.id);
    const diagnostic = module.diagnostic();
    this.times.push({
      file: relative(this.root, module.moduleId),
      wallMs: start === undefined ? diagnostic.duration : performance.now() - start,
      importMs: diagnostic.collectDuration,
      testsMs: diagnostic.duration,
      tests: [...module.children.allTests()].length,
      state: module.state(),
      cpuMs: module.meta().cpuMs,
    });
    const file = relative(this.root, module.moduleId);
    const firstLine = (message: string | undefined) => (message ?? '').split('\n')[0]!.slice(0, 300);
    for (const error of module.errors()) this.failures.push(`${file}: ${firstLine(error.message)}`);
    for (const test of module.children.allTests()) {
      const result = test.result();
      if (result.state === 'failed') this.failures.push(`${file} > ${test.fullName}: ${firstLine(result.errors?.[0]?.message)}`);
    }
  }

  onTestRunEnd(): void {
    if (this.times.length === 0) return;
    const rows = [...this.times].sort((a, b) => b.wallMs - a.wallMs);
    const s = (ms: number | undefined) => (ms === undefined ? '–' : `${(ms / 1000).toFixed(1)} s`).padStart(13);
    const row = (wall: string, cpu: string, imp: string, tests: string, n: string, file: string) => `${wall}${cpu}${imp}${tests}${n.padStart(7)}  ${file}`;
    const lines = rows.map((r) => row(s(r.wallMs), s(r.cpuMs), s(r.importMs), s(r.testsMs), String(r.tests), `${r.file}${r.state === 'passed' ? '' : `  (${r.state})`}`));
    const total = rows.reduce((sum, r) => sum + r.wallMs, 0);
    const cpu = rows.reduce((sum, r) => sum + (r.cpuMs ?? 0), 0);
    process.stdout.write(
      [
        '',
        `Test files by time (${rows.length} files, ${(total / 1000).toFixed(0)} s of file time and ${(cpu / 1000).toFixed(0)} s of their CPU in all):`,
        row('wall'.padStart(13), 'cpu'.padStart(13), 'import'.padStart(13), 'tests+hooks'.padStart(13), 'tests', 'file'),
        ...lines,
        '',
        ...(this.failures.length === 0 ? [] : [`Failed (${this.failures.length}):`, ...this.failures.map((f) => `  ${f}`), '']),
      ].join('\n'),
    );
  }
}
