// End to end against the real dev server: what Temporal stores is ciphertext, clients with the key
// read it back, and the history replays with the codec (and only with it).
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type WorkflowBundle,
} from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startCodecServer } from '../../src/codec-server/server.js';
import { resolveTemporalCli } from '../../src/temporal/cli-binary.js';
import { AesGcmPayloadCodec } from '../../src/temporal/codec.js';
import { createDataConverter } from '../../src/temporal/data-converter.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import type { EchoActivities } from '../fixtures/workflows/echo.js';

const SECRET = `confidential-${randomUUID()}-board-minutes`;
const activities: EchoActivities = { shout: async (message) => `${message.toUpperCase()}!` };
const dataConverter = createDataConverter(fixedTestPayloadKeys());

/** `temporal workflow show -o json` prints payload bytes in base64: their text, joined. */
function payloadTexts(json: string): string {
  return [...json.matchAll(/"data": "([A-Za-z0-9+/=]+)"/g)].map((m) => Buffer.from(m[1]!, 'base64').toString('utf8')).join('\n');
}

let workflowBundle: WorkflowBundle;
let nativeConnection: NativeConnection;
let connection: Connection;

beforeAll(async () => {
  // The keyless replay below fails on purpose; keep core's warning about it out of the output.
  Runtime.install({
    logger: new DefaultLogger('WARN'),
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } },
  });
  workflowBundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../fixtures/workflows/echo.ts', import.meta.url)),
    logger: new DefaultLogger('WARN'),
  });
  const address = inject('temporalAddress');
  nativeConnection = await NativeConnection.connect({ address });
  connection = await Connection.connect({ address });
});

afterAll(async () => {
  await connection?.close();
  await nativeConnection?.close();
});

describe('encrypted workflow history', () => {
  it('stores only ciphertext, reads back through the codec, and replays with it', async () => {
    const taskQueue = `encrypted-history-${randomUUID()}`;
    const workflowId = `echo-${randomUUID()}`;
    const client = new Client({ connection, dataConverter });
    const rawClient = new Client({ connection }); // default data converter: no key

    const worker = await Worker.create({
      connection: nativeConnection,
      taskQueue,
      workflowBundle,
      activities,
      dataConverter,
    });
    const result = await worker.runUntil(async () => {
      const handle = await client.workflow.start('echo', {
        taskQueue,
        workflowId,
        args: [{ message: SECRET }],
        memo: { note: SECRET },
      });
      return handle.result();
    });
    expect(result).toEqual({ message: SECRET, shouted: `${SECRET.toUpperCase()}!` });

    // What the server holds: the secret appears in no form, and no payload is left in plain JSON.
    const history = await rawClient.workflow.getHandle(workflowId).fetchHistory();
    expect(history.events?.length).toBeGreaterThan(5);
    const stored = Buffer.from(proto.temporal.api.history.v1.History.encode(history).finish());
    expect(stored.includes(SECRET)).toBe(false);
    expect(stored.includes(SECRET.toUpperCase())).toBe(false);
    expect(stored.includes('binary/encrypted')).toBe(true);
    expect(stored.includes('json/plain')).toBe(false);

    // Without the key the result is unreadable; with it, result and memo come back.
    await expect(rawClient.workflow.getHandle(workflowId).result()).rejects.toThrow(
      'Unknown encoding: binary/encrypted',
    );
    expect(await client.workflow.getHandle(workflowId).result()).toEqual(result);
    const description = await client.workflow.getHandle(workflowId).describe();
    expect(description.memo).toEqual({ note: SECRET });

    await Worker.runReplayHistory({ workflowBundle, dataConverter }, history, workflowId);
    await expect(Worker.runReplayHistory({ workflowBundle }, history, workflowId)).rejects.toThrow(
      /Replay failed.*Unknown encoding: binary\/encrypted/,
    );
  });

  it('the temporal CLI shows history and query results in clear through the codec server, and only through it', async () => {
    const cli = await resolveTemporalCli();
    if (!cli) throw new Error('no Temporal CLI binary (npm run temporal:cli builds it)');
    const codecServer = await startCodecServer({ port: 0, codec: new AesGcmPayloadCodec(fixedTestPayloadKeys()), corsOrigins: [] });
    const taskQueue = `encrypted-cli-${randomUUID()}`;
    const workflowId = `echo-${randomUUID()}`;
    const client = new Client({ connection, dataConverter });
    const worker = await Worker.create({ connection: nativeConnection, taskQueue, workflowBundle, activities, dataConverter });
    const temporal = (...args: string[]) =>
      promisify(execFile)(cli.path, [...args, '--address', inject('temporalAddress'), '--workflow-id', workflowId]).then((r) => r.stdout);
    try {
      await worker.runUntil(async () => {
        await (await client.workflow.start('echo', { taskQueue, workflowId, args: [{ message: SECRET }] })).result();
        const withCodec = ['--codec-endpoint', codecServer.url];
        expect(payloadTexts(await temporal('workflow', 'show', '--output', 'json', ...withCodec))).toContain(SECRET.toUpperCase());
        expect(await temporal('workflow', 'query', '--type', 'input', ...withCodec)).toContain(SECRET);
        expect(payloadTexts(await temporal('workflow', 'show', '--output', 'json'))).not.toContain(SECRET);
        expect(await temporal('workflow', 'query', '--type', 'input')).not.toContain(SECRET);
      });
    } finally {
      await codecServer.close();
    }
  });
});
