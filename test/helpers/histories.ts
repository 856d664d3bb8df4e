// Recording workflow histories for the replay tests. `RECORD_HISTORIES=1 npm test` writes the
// histories of the scenarios that call recordHistory into test/fixtures/histories (as
// `temporal workflow show --output json` prints them); commit them. Without the variable this
// does nothing, so ordinary runs never rewrite fixtures.
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { inject } from 'vitest';
import { resolveTemporalCli } from '../../src/temporal/cli-binary.js';

export const historiesDir = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

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
