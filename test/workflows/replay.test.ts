// Replays every committed history in test/fixtures/histories against today's workflow code, with
// the production payload codec (the fixtures are encrypted with the fixed test key). A change to
// workflow code that would break running workflows fails here (non-determinism).
// Re-record after an intended change: RECORD_HISTORIES=1 npm test (and commit the fixtures).
import { readdir, readFile } from 'node:fs/promises';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { createDataConverter } from '../../src/temporal/data-converter.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { getWorkflowBundle } from '../../src/workers/workflow-bundle.js';
import { historiesDir } from '../helpers/histories.js';



const files = (await readdir(historiesDir, { recursive: true })).filter((f) => f.endsWith('.json')).sort();

describe('replay of recorded workflow histories', () => {
  it('has recorded histories to replay', () => {
    expect(files.length).toBeGreaterThanOrEqual(5);
  });

  it.each(files)('%s replays deterministically', async (file) => {
    const history: unknown = JSON.parse(await readFile(`${historiesDir}${file}`, 'utf8'));
    await Worker.runReplayHistory(
      { workflowBundle: await getWorkflowBundle(), dataConverter: createDataConverter(fixedTestPayloadKeys()) },
      history,
      file.replace(/\.json$/, '').replace(/\//g, '-'),
    );
  });
});
