// A JSON answer from any of our node:http servers (the app, the codec server, the emulators): the
// body with its type and length, unless the response is already under way or gone.
import type { ServerResponse } from 'node:http';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const payload = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}
