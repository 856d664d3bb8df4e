// The source files the workflow bundle includes: every file reached from the bundle's entry
// (src/workflows/index.ts) through imports that survive compilation (type-only imports are erased).
// eslint.config.js holds these files to the workflow rules, and a test checks the list against
// the bundle webpack builds, so a module that workflow code starts to import is linted at once.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const workflowEntry = path.join(projectRoot, 'src/workflows/index.ts');

const IMPORT = /^\s*(import|export)\s+(type\s+)?([^'"]*?)\s*from\s*['"](\.{1,2}\/[^'"]+)['"]/gm;

/** Whether `import {…} from` brings in a value (not only `type X` specifiers). */
function importsValue(clause) {
  const braces = clause.match(/\{([^}]*)\}/);
  const outside = clause.replace(/\{[^}]*\}/, '').replace(/,/g, '').trim();
  if (outside) return true; // a default or namespace import, or `export *`
  if (!braces) return true;
  const names = braces[1].split(',').map((s) => s.trim()).filter(Boolean);
  return names.length === 0 || names.some((n) => !n.startsWith('type '));
}

function resolve(from, spec) {
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [base.replace(/\.js$/, '.ts'), `${base}.ts`, base]) {
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`${path.relative(projectRoot, from)}: cannot resolve ${spec}`);
}

/** Project-relative paths of the files the workflow bundle includes, sorted. */
export function workflowBundleFiles(entry = workflowEntry) {
  const seen = new Set();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      if (m[2] || !importsValue(m[3])) continue;
      queue.push(resolve(file, m[4]));
    }
  }
  return [...seen].map((f) => path.relative(projectRoot, f)).sort();
}
