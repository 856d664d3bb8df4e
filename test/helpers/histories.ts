// Recording workflow histories for the replay tests. `RECORD_HISTORIES=1 npm test` writes the
// histories of the scenarios that call recordHistory into test/fixtures/histories (as
// `temporal workflow show --output json` prints them); commit them. Without the variable this
// does nothing, so ordinary runs never rewrite fixtures.
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import { inject } from 'vitest';
import { resolveTemporalCli } from '../../src/temporal/cli-binary.js';

export const historiesDir = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

/** The committed histories, as paths below historiesDir, in order. */
export async function recordedHistories(): Promise<string[]> {
  return (await readdir(historiesDir, { recursive: true })).filter((f) => f.endsWith('.json')).sort();
}

/**
 * Replays the histories on one replay worker (the bundle is loaded once for all of them, not once per
 * history) and answers, for each file, the error its replay ended with (undefined: it replayed).
 */
export async function replayHistories(options: ReplayWorkerOptions, files: string[]): Promise<Map<string, Error | undefined>> {
  const results = new Map<string, Error | undefined>();
  async function* histories() {
    for (const file of files) {
      const history: unknown = JSON.parse(await readFile(`${historiesDir}${file}`, 'utf8'));
      yield { history, workflowId: file };
    }
  }
  for await (const { workflowId, error } of Worker.runReplayHistories(options, histories())) {
    results.set(workflowId, error as Error | undefined);
  }
  return results;
}

export async function recordHistory(h: { handle(threadId: string): WorkflowHandle }, threadId: string, name: string) {
  await recordWorkflowHistory(h.handle(threadId), name);
}

export async function recordWorkflowHistory(handle: WorkflowHandle, name: string) {
  if (!process.env.RECORD_HISTORIES) return;
  const cli = await resolveTemporalCli({ build: false });
  if (!cli) throw new Error('RECORD_HISTORIES needs the temporal CLI (npm run temporal:cli)');
  const { workflowId } = handle;
  const { stdout } = await promisify(execFile)(
    cli.path,
    ['workflow', 'show', '--workflow-id', workflowId, '--output', 'json', '--address', inject('temporalAddress')],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  await mkdir(historiesDir, { recursive: true });
  await writeFile(`${historiesDir}${name}.json`, stdout);
}
