// Summarises the .cpuprofile files `node --cpu-prof` wrote (one per thread): how busy each thread
// was, its top functions by self time, and self time by where the code comes from (the workflow
// bundle's modules, the SDK, zod, ...). docs/performance.md shows how it is used.
//   npx tsx bench/cpu-profile.ts DIR [--top N] [--inclusive fnA,fnB]   (time in and under the named functions)
//                                        [--callers fn]   (the first frames outside node: that lead to fn's self time)
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a function's code comes from; the workflow bundle's own modules are named by their source path. */
function originOf(url: string, fn: string): string {
  if (fn === '(idle)' || fn === '(program)' || fn === '(garbage collector)') return fn;
  if (url === '' || url.startsWith('node:')) return fn === '(root)' ? fn : 'node internals / native';
  if (url.includes('workflow-bundle') || url.startsWith('evalmachine') || url.includes('/workflows/')) return 'workflow bundle';
  const pkg = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) return pkg;
  return url.replace(/^file:\/\/.*?\/(src|bench|emulators)\//, '$1/');
}

async function summarise(file: string, top: number, inclusive: string[], callersOf?: string): Promise<void> {
  const p = JSON.parse(await readFile(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
  const totalUs = p.endTime - p.startTime;
  let idleUs = 0;
  const byFunction = new Map<string, number>();
  const byOrigin = new Map<string, number>();
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') idleUs += us;
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(src|bench)\//, '$1/')}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    const origin = originOf(url, functionName);
    byOrigin.set(origin, (byOrigin.get(origin) ?? 0) + us);
  }
  const busyUs = totalUs - idleUs;
  const pct = (us: number) => `${((us / busyUs) * 100).toFixed(1)}%`;
  console.log(`\n${file}: ${(totalUs / 1e6).toFixed(1)} s profiled, busy ${(busyUs / 1e6).toFixed(1)} s (${((busyUs / totalUs) * 100).toFixed(0)}%)`);
  console.log('  self time by origin (share of busy):');
  for (const [origin, us] of [...byOrigin].filter(([o]) => o !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${pct(us).padStart(6)}  ${origin}`);
  console.log('  top functions by self time (share of busy):');
  for (const [fn, us] of [...byFunction].filter(([f]) => !f.startsWith('(idle)')).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${pct(us).padStart(6)}  ${fn}`);
  // Time with a frame of each origin anywhere on the stack (each sample counted once per origin).
  const parentOf = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const underOrigin = new Map<string, number>();
  for (const [id, us] of self) {
    if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const { url, functionName } = byId.get(at)!.callFrame;
      seen.add(originOf(url, functionName));
    }
    for (const o of seen) underOrigin.set(o, (underOrigin.get(o) ?? 0) + us);
  }
  console.log('  time with the origin anywhere on the stack (share of busy):');
  for (const [origin, us] of [...underOrigin].filter(([o]) => !o.startsWith('(') && o !== 'node internals / native').sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${pct(us).padStart(6)}  ${origin}`);
  if (callersOf) {
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const callers = new Map<string, number>();
    for (const [id, us] of self) {
      if (byId.get(id)!.callFrame.functionName !== callersOf) continue;
      let at = parent.get(id);
      const chain: string[] = [];
      while (at !== undefined && chain.length < 3) {
        const { functionName, url, lineNumber } = byId.get(at)!.callFrame;
        if (url && !url.startsWith('node:')) chain.push(`${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(src|bench)\//, '$1/')}:${lineNumber + 1}`);
        at = parent.get(at);
      }
      const key = chain.join(' < ') || '(no JS caller)';
      callers.set(key, (callers.get(key) ?? 0) + us);
    }
    console.log(`  where ${callersOf}'s self time comes from (share of busy):`);
    for (const [key, us] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`    ${pct(us).padStart(6)}  ${key}`);
  }
  if (inclusive.length === 0) return;
  // Time in and under each named function, counted once where it calls itself.
  const under = (id: number, name: string, inside: boolean): number => {
    const node = byId.get(id)!;
    const here = inside || node.callFrame.functionName === name;
    return (here ? (self.get(id) ?? 0) : 0) + (node.children ?? []).reduce((sum, c) => sum + under(c, name, here), 0);
  };
  const root = p.nodes[0]!.id;
  console.log('  time in and under (share of busy):');
  for (const name of inclusive) console.log(`    ${pct(under(root, name, false)).padStart(6)}  ${name}`);
}

const dir = process.argv[2];
if (!dir) {
  console.error('usage: tsx bench/cpu-profile.ts DIR [--top N]');
  process.exit(2);
}
const topAt = process.argv.indexOf('--top');
const top = topAt >= 0 ? Number(process.argv[topAt + 1]) : 15;
const inclusiveAt = process.argv.indexOf('--inclusive');
const inclusive = inclusiveAt >= 0 ? process.argv[inclusiveAt + 1]!.split(',') : [];
const callersAt = process.argv.indexOf('--callers');
const callersOf = callersAt >= 0 ? process.argv[callersAt + 1] : undefined;
for (const f of (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile')).sort()) await summarise(join(dir, f), top, inclusive, callersOf);
