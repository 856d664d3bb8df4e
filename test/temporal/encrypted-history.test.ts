// End to end against the real dev server: what Temporal stores is ciphertext, clients with the key
// read it back, and the history replays with the codec (and only with it). Failures too: their
// message and stack trace are sealed like payloads.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { ActivityFailure, ApplicationFailure, Client, Connection, WorkflowFailedError } from '@temporalio/client';
import proto from '@temporalio/proto';
import { NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startCodecServer } from '../../src/codec-server/server.js';
import { resolveTemporalCli } from '../../src/temporal/cli-binary.js';
import { AesGcmPayloadCodec } from '../../src/temporal/codec.js';
import { createDataConverter } from '../../src/temporal/data-converter.js';
import { fixedTestPayloadKeys } from '../../src/temporal/encryption-keys.js';
import { bundleWorkflows } from '../../src/workers/workflow-bundle.js';
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
  workflowBundle = await bundleWorkflows(fileURLToPath(new URL('../fixtures/workflows/echo.ts', import.meta.url)));
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
    // Keyless, the workflow task fails on the first payload ("Unknown encoding: binary/encrypted"), a
    // message the failure converter itself seals as "Encoded failure".
    await expect(Worker.runReplayHistory({ workflowBundle }, history, workflowId)).rejects.toThrow(
      /Replay failed.*Encoded failure/,
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

  it('seals a failed activity message and stack trace: raw history reads "Encoded failure", the codec server and the CLI open it', async () => {
    const cli = await resolveTemporalCli();
    if (!cli) throw new Error('no Temporal CLI binary (npm run temporal:cli builds it)');
    const codecServer = await startCodecServer({ port: 0, codec: new AesGcmPayloadCodec(fixedTestPayloadKeys()), corsOrigins: [] });
    const taskQueue = `encrypted-failure-${randomUUID()}`;
    const workflowId = `echo-${randomUUID()}`;
    const client = new Client({ connection, dataConverter });
    const refusing: EchoActivities = {
      shout: async (message) => {
        throw ApplicationFailure.nonRetryable(`refused to shout ${message}`, 'ShoutRefused');
      },
    };
    const worker = await Worker.create({ connection: nativeConnection, taskQueue, workflowBundle, activities: refusing, dataConverter });
    try {
      // With the key, the failure reads as it was thrown.
      const err: unknown = await worker.runUntil(
        client.workflow.execute('echo', { taskQueue, workflowId, args: [{ message: SECRET }] }).catch((e: unknown) => e),
      );
      expect(err).toBeInstanceOf(WorkflowFailedError);
      const activityFailure = (err as WorkflowFailedError).cause;
      expect(activityFailure).toBeInstanceOf(ActivityFailure);
      const thrown = activityFailure?.cause as Error | undefined;
      expect(thrown?.message).toBe(`refused to shout ${SECRET}`);
      expect(thrown?.stack).toContain('encrypted-history.test.ts');

      // What the server holds: "Encoded failure", no stack, the real ones in an encrypted payload.
      const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
      const failed = history.events?.find((e) => e.activityTaskFailedEventAttributes)?.activityTaskFailedEventAttributes?.failure;
      expect(failed?.message).toBe('Encoded failure');
      expect(failed?.stackTrace).toBe('');
      expect(failed?.applicationFailureInfo?.type).toBe('ShoutRefused');
      const sealed = failed?.encodedAttributes;
      expect(Buffer.from(sealed?.metadata?.encoding ?? []).toString()).toBe('binary/encrypted');
      const workflowFailure = history.events?.find((e) => e.workflowExecutionFailedEventAttributes)?.workflowExecutionFailedEventAttributes?.failure;
      expect(workflowFailure?.message).toBe('Encoded failure');
      expect(workflowFailure?.cause?.message).toBe('Encoded failure');
      const stored = Buffer.from(proto.temporal.api.history.v1.History.encode(history).finish());
      expect(stored.includes(SECRET)).toBe(false);
      expect(stored.includes('refused to shout')).toBe(false);
      expect(stored.includes('encrypted-history.test')).toBe(false);

      // The codec server (what the Web UI calls) opens the sealed attributes.
      const reply = await fetch(`${codecServer.url}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          payloads: [
            {
              metadata: Object.fromEntries(Object.entries(sealed!.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])),
              data: Buffer.from(sealed!.data!).toString('base64'),
            },
          ],
        }),
      });
      expect(reply.status).toBe(200);
      const [opened] = ((await reply.json()) as { payloads: { data: string }[] }).payloads;
      const attributes = JSON.parse(Buffer.from(opened!.data, 'base64').toString('utf8')) as { message: string; stack_trace: string };
      expect(attributes.message).toBe(`refused to shout ${SECRET}`);
      expect(attributes.stack_trace).toContain('encrypted-history.test.ts');

      // So does `temporal workflow show --codec-endpoint`; without it the CLI sees only ciphertext.
      const temporal = (...args: string[]) =>
        promisify(execFile)(cli.path, [...args, '--address', inject('temporalAddress'), '--workflow-id', workflowId]).then((r) => r.stdout);
      expect(payloadTexts(await temporal('workflow', 'show', '--output', 'json', '--codec-endpoint', codecServer.url))).toContain(
        `refused to shout ${SECRET}`,
      );
      expect(await temporal('workflow', 'show', '--output', 'json')).not.toContain('refused to shout');
    } finally {
      await codecServer.close();
    }
  });
});
