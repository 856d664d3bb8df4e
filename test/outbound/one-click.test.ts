// The one-click client against real servers on loopback: what it sends to the endpoint it may reach
// (through the test-only allowance), and every target it must refuse, each its own test. The refused
// targets are tried with the production client (no allowance): nothing may be sent to them.
import { createServer as createHttpServer, type Server } from 'node:http';
import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOneClickClient, ONE_CLICK_BODY, type OneClickClient } from '../../src/outbound/one-click.js';
import { startOneClickServer, type OneClickServer } from '../helpers/one-click-server.js';

let server: OneClickServer;
let allowed: OneClickClient;
let production: OneClickClient;

beforeAll(async () => {
  server = await startOneClickServer();
  allowed = createOneClickClient({ testAllowance: server.allowance, timeoutMs: 1_000, maxResponseBytes: 64 * 1024 });
  production = createOneClickClient({ timeoutMs: 1_000 });
});
afterAll(async () => {
  allowed.close();
  production.close();
  await server.close();
});

function hitsOf(path: string): number {
  return server.requests.filter((r) => r.path === path).length;
}

describe('the endpoint it may reach', () => {
  it('POSTs List-Unsubscribe=One-Click as a form, with no cookie, no credentials and nothing of the user', async () => {
    const first = await allowed.post(`${server.origin}/u/one?token=abc`);
    expect(first).toEqual({ outcome: 'done', status: 200 });
    // The server set a cookie on the first answer: the second POST must not carry it.
    expect(await allowed.post(`${server.origin}/u/one?token=abc`)).toEqual({ outcome: 'done', status: 200 });
    const seen = server.requests.filter((r) => r.path === '/u/one');
    expect(seen).toHaveLength(2);
    for (const r of seen) {
      expect(r.method).toBe('POST');
      expect(r.body).toBe(ONE_CLICK_BODY);
      expect(r.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(r.headers.cookie).toBeUndefined();
      expect(r.headers.authorization).toBeUndefined();
      expect(Object.keys(r.headers).sort()).toEqual(['connection', 'content-length', 'content-type', 'host', 'user-agent']);
    }
  });

  it('a 4xx is a failure not worth retrying, a 5xx one worth retrying', async () => {
    server.route('/u/gone', (_req, res) => res.writeHead(410).end('gone'));
    server.route('/u/down', (_req, res) => res.writeHead(503).end('later'));
    expect(await allowed.post(`${server.origin}/u/gone`)).toMatchObject({ outcome: 'failed', status: 410, retryable: false });
    expect(await allowed.post(`${server.origin}/u/down`)).toMatchObject({ outcome: 'failed', status: 503, retryable: true });
  });
});

describe('refused targets', () => {
  it.each([
    ['loopback 127.0.0.1', 'https://127.0.0.1/u'],
    ['private 10.0.0.1', 'https://10.0.0.1/u'],
    ['link-local metadata 169.254.169.254', 'https://169.254.169.254/latest/meta-data/'],
    ['IPv6 loopback [::1]', 'https://[::1]/u'],
    ['IPv4-mapped IPv6 [::ffff:127.0.0.1]', 'https://[::ffff:127.0.0.1]/u'],
    ['the unspecified address 0.0.0.0', 'https://0.0.0.0/u'],
  ])('%s is refused before anything is sent', async (_what, uri) => {
    const outcome = await production.post(uri);
    expect(outcome.outcome).toBe('refused');
    expect((outcome as { reason: string }).reason).toMatch(/not public/);
  });

  it('the allowed loopback port is refused to the production client', async () => {
    const before = server.requests.length;
    expect(await production.post(`${server.origin}/u/one`)).toMatchObject({ outcome: 'refused' });
    expect(server.requests.length).toBe(before);
  });

  it('a name that resolves to loopback (localhost, through the system resolver) is refused after resolution, even with the allowance', async () => {
    const before = server.requests.length;
    const outcome = await allowed.post(`https://localhost:${server.port}/u/one`);
    expect(outcome).toMatchObject({ outcome: 'refused' });
    expect((outcome as { reason: string }).reason).toMatch(/DNS lookup .*host:localhost/);
    expect(server.requests.length).toBe(before);
  });

  it('a name that resolves to a private address is refused after resolution', async () => {
    // The resolver answers as a hostile DNS zone would: a public-looking name, a private address.
    const lookup: LookupFunction = (_host, options, cb) => {
      if ((options as { all?: boolean }).all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: '10.0.0.1', family: 4 }]);
      else cb(null, '10.0.0.1', 4);
    };
    const client = createOneClickClient({ lookup, timeoutMs: 1_000 });
    try {
      const outcome = await client.post('https://unsubscribe.sender.example/u?t=1');
      expect(outcome).toMatchObject({ outcome: 'refused' });
      expect((outcome as { reason: string }).reason).toMatch(/10\.0\.0\.1.*host:unsubscribe\.sender\.example/);
    } finally {
      client.close();
    }
  });

  it('a redirect to a private address is not followed', async () => {
    // The redirect's target is a second loopback server: it must see nothing.
    const target = await startOneClickServer();
    try {
      server.route('/u/redirect-meta', (_req, res) => res.writeHead(302, { location: 'https://169.254.169.254/latest/meta-data/' }).end());
      server.route('/u/redirect-loopback', (_req, res) => res.writeHead(307, { location: `${target.origin}/stolen` }).end());
      const meta = await allowed.post(`${server.origin}/u/redirect-meta`);
      expect(meta).toMatchObject({ outcome: 'refused' });
      expect((meta as { reason: string }).reason).toMatch(/302 to https:\/\/169\.254\.169\.254.*not followed/);
      expect(await allowed.post(`${server.origin}/u/redirect-loopback`)).toMatchObject({ outcome: 'refused' });
      expect(target.requests).toHaveLength(0);
    } finally {
      await target.close();
    }
  });

  it('http: is refused without connecting', async () => {
    const plain: Server = createHttpServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    let hits = 0;
    plain.on('request', () => hits++);
    try {
      const port = (plain.address() as { port: number }).port;
      const outcome = await allowed.post(`http://127.0.0.1:${port}/u`);
      expect(outcome).toEqual({ outcome: 'refused', reason: 'http: is not https (one-click is https only)' });
      expect(hits).toBe(0);
      expect(await production.post('http://sender.example/u')).toMatchObject({ outcome: 'refused' });
    } finally {
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    }
  });

  it('credentials in the URI are refused (node would send them as an Authorization header)', async () => {
    expect(await allowed.post(`https://user:secret@127.0.0.1:${server.port}/u/one`)).toEqual({ outcome: 'refused', reason: 'the URI carries credentials' });
  });

  it('a 10 MB answer is cut at the cap', async () => {
    const tenMb = Buffer.alloc(10 * 1024 * 1024, 'x');
    // Streamed without a length (the cap counts bytes), and declared up front (refused on the header).
    server.route('/u/huge-stream', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(tenMb);
    });
    server.route('/u/huge-declared', (_req, res) => res.writeHead(200, { 'content-length': tenMb.length }).end(tenMb));
    expect(await allowed.post(`${server.origin}/u/huge-stream`)).toMatchObject({ outcome: 'failed', retryable: false, reason: expect.stringMatching(/longer than the cap of 65536 bytes/) });
    expect(await allowed.post(`${server.origin}/u/huge-declared`)).toMatchObject({ outcome: 'failed', retryable: false, reason: expect.stringMatching(/declares 10485760 bytes/) });
    expect(hitsOf('/u/huge-stream')).toBe(1);
  });

  it('a slow answer fails at the timeout', async () => {
    // Headers at once, then the body never ends; and an answer that never starts.
    server.route('/u/trickle', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('o');
    });
    server.route('/u/silent', () => undefined);
    const started = Date.now();
    expect(await allowed.post(`${server.origin}/u/trickle`)).toMatchObject({ outcome: 'failed', retryable: true, reason: 'no complete answer within 1000 ms' });
    expect(await allowed.post(`${server.origin}/u/silent`)).toMatchObject({ outcome: 'failed', retryable: true, reason: 'no complete answer within 1000 ms' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
