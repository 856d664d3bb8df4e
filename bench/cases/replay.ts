// What waking an evicted thread costs the workflow worker: its run is rebuilt by replaying its whole
// history (a new run's modules, then every activation again) before the new event is handled. The
// recorded thread histories (test/fixtures/histories/thread-*.json, real runs of the product's
// scenarios) are replayed with our bundle and the production codec on one replay worker, N rounds,
// on this process's CPU clock (every thread of it). No server: the history fetch is not counted.
//   --rounds N (10)   --only a,b   histories whose name contains one of these (default: every thread-*)
//   --no-promise-hook  an experiment, not how workers run: without the SDK's promise hook (it captures
//                      a stack trace for every promise workflow code creates, for the stack trace
//                      query), to measure its share. Replay runs workflows in this thread (the SDK's
//                      debug mode), so the hook can be left out here.
//   --count            also counts the calls into the sandbox (vm runInContext) and the promises made,
//                      per replay (the counting costs CPU of its own: read the CPU figure without it)
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { promiseHooks } from 'node:v8';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { wholeFlag } from '../args.js';
import { createDataConverter } from '../../src/temporal/data-converter.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { getWorkflowBundle } from '../../src/workers/workflow-bundle.js';

const historiesDir = fileURLToPath(new URL('../../test/fixtures/histories/', import.meta.url));

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

export async function run(args: string[]): Promise<void> {
  const rounds = wholeFlag(args, 'rounds', 10);
  const onlyAt = args.indexOf('--only');
  const only = onlyAt >= 0 ? args[onlyAt + 1]!.split(',') : undefined;
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const noPromiseHook = args.includes('--no-promise-hook');
  if (noPromiseHook) {
    const { globalHandlers } = createRequire(import.meta.url)('@temporalio/worker/lib/workflow/vm-shared.js') as { globalHandlers: { setPromiseHook(): void } };
    globalHandlers.setPromiseHook = () => undefined;
  }
  const files = (await readdir(historiesDir)).filter((f) => f.startsWith('thread-') && f.endsWith('.json') && (!only || only.some((o) => f.includes(o)))).sort();
  const histories = await Promise.all(
    files.map(async (f) => {
      const history = JSON.parse(await readFile(`${historiesDir}${f}`, 'utf8')) as { events: unknown[] };
      return { name: f.replace(/\.json$/, ''), history, events: history.events.length };
    }),
  );
  const counting = args.includes('--count');
  let callIns = 0;
  let promises = 0;
  if (counting) {
    const runInContext = vm.Script.prototype.runInContext;
    vm.Script.prototype.runInContext = function (this: vm.Script, ...a: Parameters<typeof runInContext>) {
      callIns += 1;
      return runInContext.apply(this, a);
    };
    promiseHooks.onInit(() => void (promises += 1));
  }
  const options = { workflowBundle: await getWorkflowBundle(), dataConverter: createDataConverter(fixedTestPayloadKeys()) };
  // One replay worker for every round; the first round warms it (its start, the bundle's first load).
  let before = 0;
  async function* all() {
    for (let round = -1; round < rounds; round++) {
      if (round === 0) {
        before = cpuMs();
        callIns = 0;
        promises = 0;
      }
      for (const h of histories) yield { history: h.history, workflowId: `${h.name}#${round}` };
    }
  }
  for await (const r of Worker.runReplayHistories(options, all())) if (r.error) throw r.error;
  const perReplay = (cpuMs() - before) / (rounds * histories.length);
  const replays = rounds * histories.length;
  if (counting) console.log(`replay: ${(callIns / replays).toFixed(0)} calls into the sandbox and ${(promises / replays).toFixed(0)} promises per replayed thread history (this process)`);
  const events = histories.reduce((sum, h) => sum + h.events, 0) / histories.length;
  console.log(
    `replay: ${perReplay.toFixed(1)} CPU ms per replayed thread history (${histories.length} recorded thread histories of ${events.toFixed(0)} events on average, ${rounds} rounds, this process${noPromiseHook ? '; without the SDK\'s promise hook' : ''})`,
  );
}
