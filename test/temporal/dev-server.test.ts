// startDevServer against real servers: reusing the run's shared one, and a private SQLite-backed one.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { resolveTemporalCli } from '../../src/temporal/cli-binary.js';
import { startDevServer } from '../../src/temporal/dev-server.js';
import { searchAttributeDefinitions } from '../../src/temporal/search-attributes.js';
import { waitUntil } from '../helpers/wait-until.js';

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function answers(address: string): Promise<boolean> {
  try {
    const connection = await Connection.connect({ address, connectTimeout: 1_000 });
    try {
      await connection.workflowService.getSystemInfo({});
      return true;
    } finally {
      await connection.close();
    }
  } catch {
    return false;
  }
}

const tempDirs: string[] = [];
afterAll(async () => {
  await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('startDevServer', () => {
  it('reuses a server already on the port, leaves it running on stop, and has our search attributes there', async () => {
    const shared = inject('temporalAddress');
    const port = Number(shared.split(':')[1]);
    const server = await startDevServer({ port, headless: true });
    expect(server).toMatchObject({ address: `127.0.0.1:${port}`, reused: true, uiUrl: null });
    await server.stop();
    expect(await answers(shared)).toBe(true);

    const connection = await Connection.connect({ address: shared });
    try {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
      expect(Object.keys(customAttributes ?? {})).toEqual(
        expect.arrayContaining(Object.keys(searchAttributeDefinitions)),
      );
    } finally {
      await connection.close();
    }
  });

  it('registers our search attributes on a reused server that lacks them', async (ctx) => {
    const cli = await resolveTemporalCli({ build: false });
    if (!cli) return ctx.skip('only the SDK-downloaded server is available here');
    const port = await freePort();
    const address = `127.0.0.1:${port}`;
    const bare = spawn(cli.path, ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--headless'], {
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => bare.once('exit', resolve));
    try {
      await waitUntil('the bare dev server to answer', () => answers(address), { timeoutMs: 60_000, everyMs: 200 });
      const before = await Connection.connect({ address });
      const initial = await before.operatorService.listSearchAttributes({ namespace: 'default' });
      await before.close();
      expect(Object.keys(initial.customAttributes ?? {})).not.toContain('InboxState');

      const server = await startDevServer({ port, headless: true });
      expect(server.reused).toBe(true);
      const connection = await Connection.connect({ address });
      try {
        const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
        expect(Object.keys(customAttributes ?? {})).toEqual(
          expect.arrayContaining(Object.keys(searchAttributeDefinitions)),
        );
        // A second reuse finds them all present and changes nothing.
        await startDevServer({ port, headless: true });
      } finally {
        await connection.close();
      }
    } finally {
      bare.kill('SIGTERM');
      await exited;
    }
  });

  it('runs a SQLite-backed server that keeps its state across restarts and stops cleanly', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dev-server-test-'));
    tempDirs.push(dir);
    const port = await freePort();
    const dbFile = join(dir, 'nested', 'temporal.db');
    const namespace = 'persisted-ns';

    const first = await startDevServer({ port, headless: true, dbFile, namespace });
    expect(first).toMatchObject({ address: `127.0.0.1:${port}`, reused: false, uiUrl: null });
    let connection = await Connection.connect({ address: first.address });
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: { RestartMarker: 2 } }); // KEYWORD
    await connection.close();
    await first.stop();
    expect(await answers(first.address)).toBe(false);

    const second = await startDevServer({ port, headless: true, dbFile, namespace });
    try {
      expect(second.reused).toBe(false);
      connection = await Connection.connect({ address: second.address });
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
      await connection.close();
      expect(Object.keys(customAttributes ?? {})).toContain('RestartMarker');
    } finally {
      await second.stop();
    }
  });

  it('refuses a port held by something that is not Temporal', async () => {
    const sockets = new Set<Socket>();
    const blocker: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {}); // the gRPC client resets the connection
      socket.end('hello\n');
    });
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    try {
      await expect(startDevServer({ port, headless: true })).rejects.toThrow(
        `port ${port} is in use, but not by a Temporal server`,
      );
    } finally {
      sockets.forEach((socket) => socket.destroy());
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
