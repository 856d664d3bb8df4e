// `npm run bench [-- case ...]`: runs benchmark cases and prints one figure per line with its unit.
// Each case lives in bench/cases/<name>.ts and exports `run(args: string[]): Promise<void>`.
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const casesDir = fileURLToPath(new URL('./cases/', import.meta.url));
const available = (await readdir(casesDir)).filter((f) => f.endsWith('.ts')).map((f) => f.replace(/\.ts$/, ''));
const [first, ...rest] = process.argv.slice(2);
const selected = first && !first.startsWith('-') ? first.split(',') : available;
const args = first && !first.startsWith('-') ? rest : process.argv.slice(2);

for (const name of selected) {
  if (!available.includes(name)) {
    console.error(`bench: unknown case "${name}" (available: ${available.join(', ')})`);
    process.exit(2);
  }
  console.log(`# ${name}`);
  const mod = (await import(`./cases/${name}.ts`)) as { run: (args: string[]) => Promise<void> };
  await mod.run(args);
}
process.exit(0);
