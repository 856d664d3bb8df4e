// The floor's workflows (bench/floor/floor.ts), bundled alone: bare Temporal workflows of the
// thread's shape, with nothing of ours in them, to compare the product's cost against.
import { condition, defineSignal, proxyActivities, proxyLocalActivities, setHandler, sleep } from '@temporalio/workflow';
import type { FloorActivities } from './activities.js';

export const floorMessageSignal = defineSignal<[string]>('floorMessage');

const { floorStep } = proxyActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });
const local = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });

/** The thread's shape: started by signal-with-start with a 1 kB payload, three activities one after another (1 kB results), done. */
export async function floorThreadWorkflow(): Promise<void> {
  const messages: string[] = [];
  setHandler(floorMessageSignal, (payload) => void messages.push(payload));
  await condition(() => messages.length > 0);
  let carried = messages[0]!;
  for (let step = 0; step < 3; step++) carried = await floorStep(carried);
}

/** A timer wake-up: sleeps until `at`, then one activity and two local activities; then waits, as a thread does. */
export async function floorTimerWorkflow(at: number): Promise<void> {
  await sleep(Math.max(1, at - Date.now()));
  await local.floorJournal('woken');
  await floorStep('x'.repeat(1024));
  await local.floorJournal('done');
  await condition(() => false);
}
