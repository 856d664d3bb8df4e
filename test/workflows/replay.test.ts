// Replays every committed history in test/fixtures/histories against today's workflow code, with
// the production payload codec (the fixtures are encrypted with the fixed test key). A change to
// workflow code that would break running workflows fails here (non-determinism).
// Re-record after an intended change: RECORD_HISTORIES=1 npm test (and commit the fixtures).
import { beforeAll, describe, expect, it } from 'vitest';
import { createDataConverter } from '../../src/temporal/data-converter.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { getWorkflowBundle } from '../../src/workers/workflow-bundle.js';
import { recordedHistories, replayHistories } from '../helpers/histories.js';

const files = await recordedHistories();

describe('replay of recorded workflow histories', () => {
  // All on one replay worker: the bundle is loaded once, each history still replays on its own.
  let results: Map<string, Error | undefined>;
  beforeAll(async () => {
    results = await replayHistories({ workflowBundle: await getWorkflowBundle(), dataConverter: createDataConverter(fixedTestPayloadKeys()) }, files);
  }, 120_000);

  it('has recorded histories to replay', () => {
    expect(files.length).toBeGreaterThanOrEqual(5);
  });

  it.each(files)('%s replays deterministically', (file) => {
    expect(results.has(file), `${file} was not replayed`).toBe(true);
    const error = results.get(file);
    if (error) throw error;
  });
});
