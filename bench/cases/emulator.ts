// Gmail emulator benchmark: messages.get throughput with quotas off (through googleapis, and
// over raw HTTP to show the client's own overhead), and the memory of a 100,000-message mailbox.
// The server runs in a child process (the standalone CLI), so it has a core of its own and the
// client's CPU is not counted against it. Flags: --seconds N (default 5), --concurrency N
// (default 16), --mailbox N (default 100000).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { OAuth2Client } from 'google-auth-library';
import { google, type gmail_v1 } from 'googleapis';
import { positiveFlag } from '../args.js';
import { spawnGmailEmulator } from '../../emulators/gmail/child.js';
import { isMainModule } from '../../src/shared/main-module.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Runs `worker` on `concurrency` loops for `seconds`; returns completed calls per second. */
async function measure(seconds: number, concurrency: number, worker: (i: number) => Promise<void>): Promise<number> {
  const deadline = Date.now() + seconds * 1000;
  let done = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, lane) => {
      let i = lane;
      while (Date.now() < deadline) {
        await worker(i);
        i += concurrency;
        done++;
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

function rawGet(agent: Agent, url: URL, token: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Server capacity without client overhead: HTTP/1.1 pipelining over raw sockets, `depth`
 * requests in flight on each of `connections` connections, responses framed by Content-Length.
 */
async function pipelined(url: string, token: string, ids: string[], seconds: number, connections = 4, depth = 8): Promise<number> {
  const { hostname, port } = new URL(url);
  const deadline = Date.now() + seconds * 1000;
  let done = 0;
  let next = 0;
  const requestFor = () => `GET /gmail/v1/users/me/messages/${ids[next++ % ids.length]} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n\r\n`;
  const start = performance.now();
  await Promise.all(
    Array.from(
      { length: connections },
      () =>
        new Promise<void>((resolve, reject) => {
          const socket = connect(Number(port), hostname);
          let buffered = Buffer.alloc(0);
          let inFlight = 0;
          const pump = () => {
            let out = '';
            while (inFlight < depth && Date.now() < deadline) {
              out += requestFor();
              inFlight++;
            }
            if (out) socket.write(out);
            if (inFlight === 0) {
              socket.end();
              resolve();
            }
          };
          socket.on('connect', pump);
          socket.on('error', reject);
          socket.on('data', (chunk: Buffer) => {
            buffered = Buffer.concat([buffered, chunk]);
            for (;;) {
              const headEnd = buffered.indexOf('\r\n\r\n');
              if (headEnd < 0) break;
              const head = buffered.toString('latin1', 0, headEnd);
              const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
              if (buffered.length < headEnd + 4 + length) break;
              if (!head.startsWith('HTTP/1.1 200')) return reject(new Error(head.split('\r\n')[0]));
              buffered = buffered.subarray(headEnd + 4 + length);
              inFlight--;
              done++;
            }
            pump();
          });
        }),
    ),
  );
  return done / ((performance.now() - start) / 1000);
}

async function throughput(seconds: number, concurrency: number): Promise<void> {
  const emulator = await spawnGmailEmulator(['--no-quota', '--messages', '2000']);
  const { details } = emulator;
  try {
    const auth = new OAuth2Client({ clientId: details.clientId, clientSecret: details.clientSecret, endpoints: { oauth2TokenUrl: details.tokenUrl } });
    auth.setCredentials({ refresh_token: details.refreshToken });
    const gmail = google.gmail({ version: 'v1', auth: auth as unknown as gmail_v1.Options['auth'], rootUrl: details.gmailRootUrl, retry: false });
    const ids: string[] = [];
    let pageToken: string | undefined;
    do {
      const { data } = await gmail.users.messages.list({ userId: 'me', maxResults: 500, ...(pageToken ? { pageToken } : {}) });
      ids.push(...(data.messages ?? []).map((m) => m.id ?? ''));
      pageToken = data.nextPageToken ?? undefined;
    } while (pageToken);
    const pick = (i: number) => ids[i % ids.length] as string;

    for (const format of ['full', 'metadata'] as const) {
      await measure(0.5, concurrency, async (i) => void (await gmail.users.messages.get({ userId: 'me', id: pick(i), format }))); // warm-up
      const rate = await measure(seconds, concurrency, async (i) => void (await gmail.users.messages.get({ userId: 'me', id: pick(i), format })));
      console.log(`emulator messages.get format=${format} (googleapis client, ${concurrency} concurrent): ${Math.round(rate)} gets/s`);
    }

    const token = (await auth.getAccessToken()).token ?? '';
    const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
    const base = `${details.url}/gmail/v1/users/me/messages/`;
    await measure(0.5, concurrency, (i) => rawGet(agent, new URL(base + pick(i)), token));
    const raw = await measure(seconds, concurrency, (i) => rawGet(agent, new URL(base + pick(i)), token));
    console.log(`emulator messages.get format=full (raw node:http keep-alive client, ${concurrency} concurrent): ${Math.round(raw)} gets/s`);
    agent.destroy();
    await pipelined(details.url, token, ids, 0.5);
    const capacity = await pipelined(details.url, token, ids, seconds);
    console.log(`emulator messages.get format=full (server capacity, one core: pipelined raw sockets, 4x8 in flight): ${Math.round(capacity)} gets/s`);
  } finally {
    await emulator.close();
  }
}

/** Child-process part: seeds one mailbox in-process and reports heap/RSS deltas after a full GC. */
async function measureMailboxMemory(count: number): Promise<void> {
  setFlagsFromString('--expose_gc');
  const gc = runInNewContext('gc') as () => void;
  const { startGmailEmulator } = await import('../../emulators/gmail/index.js');
  const emulator = await startGmailEmulator({ quota: false });
  emulator.world.createAccount({ email: 'big@example.com', name: 'Big Mailbox' });
  gc();
  const before = process.memoryUsage();
  const start = performance.now();
  emulator.world.seed('big@example.com', { seed: 1, count, spanDays: 365 });
  const seedSeconds = (performance.now() - start) / 1000;
  gc();
  const after = process.memoryUsage();
  const mailbox = emulator.world.getAccount('big@example.com').mailbox;
  const rawBytes = mailbox.allMessages().reduce((sum, m) => sum + m.raw.length, 0);
  // A full listing pass (what a backfill does before messages.get), straight on the store.
  const listStart = performance.now();
  let pageToken: string | undefined;
  let listed = 0;
  do {
    const page = mailbox.listMessages({ maxResults: 500, ...(pageToken ? { pageToken } : {}) });
    listed += page.messages.length;
    pageToken = page.nextPageToken;
  } while (pageToken);
  const listMs = performance.now() - listStart;
  console.log(
    JSON.stringify({
      count,
      seedSeconds,
      heapUsed: after.heapUsed - before.heapUsed,
      external: after.external - before.external, // includes arrayBuffers (Buffers)
      rss: after.rss - before.rss,
      rawBytes,
      listed,
      listMs,
    }),
  );
  await emulator.close();
}

async function memory(count: number): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/cases/emulator.ts', '--memory-child', String(count)], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  await once(child, 'exit');
  const m = JSON.parse(out.trim().split('\n').pop() ?? '{}') as { count: number; seedSeconds: number; heapUsed: number; external: number; rss: number; rawBytes: number; listed: number; listMs: number };
  const mib = (n: number) => (n / 1024 / 1024).toFixed(0);
  console.log(`emulator ${m.count}-message mailbox: ${mib(m.heapUsed)} MiB heap used`);
  console.log(`emulator ${m.count}-message mailbox: ${mib(m.external)} MiB external (raw message buffers; ${mib(m.rawBytes)} MiB of RFC 2822 bytes)`);
  console.log(`emulator ${m.count}-message mailbox: ${mib(m.rss)} MiB RSS delta`);
  console.log(`emulator seeding: ${Math.round(m.count / m.seedSeconds)} messages/s`);
  console.log(`emulator messages.list pass over ${m.listed} messages (500 per page, store only): ${Math.round(m.listMs)} ms`);
}

export async function run(args: string[]): Promise<void> {
  const seconds = positiveFlag(args, 'seconds', 5);
  const concurrency = positiveFlag(args, 'concurrency', 16);
  const mailbox = positiveFlag(args, 'mailbox', 100_000);
  await throughput(seconds, concurrency);
  await memory(mailbox);
}

if (isMainModule(import.meta.url) && process.argv[2] === '--memory-child') {
  await measureMailboxMemory(Number(process.argv[3] ?? 100_000));
}
