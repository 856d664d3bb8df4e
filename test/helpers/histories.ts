// Recording workflow histories for the replay tests. `RECORD_HISTORIES=1 npm test` writes the
// histories of the scenarios that call recordHistory into test/fixtures/histories; commit them.
// Without the variable this does nothing, so ordinary runs never rewrite fixtures.
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';

export const historiesDir = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

export async function recordHistory(h: { handle(threadId: string): WorkflowHandle }, threadId: string, name: string) {
  if (!process.env.RECORD_HISTORIES) return;
  const history = await h.handle(threadId).fetchHistory();
  await mkdir(historiesDir, { recursive: true });
  const { historyToJSON } = await import('@temporalio/common/lib/proto-utils.js');
  await writeFile(`${historiesDir}${name}.json`, `${historyToJSON(history)}\n`);
}
