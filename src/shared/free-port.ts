import { createServer } from 'node:net';

// Below Linux's ephemeral range (32768-60999): a port taken from there can be handed to an outgoing
// connection's source between our probe and the caller's bind, as a parallel test's Postgres or gRPC
// client did (EADDRINUSE on start). Random, so parallel processes rarely pick the same one.
const LOW = 20_000;
const HIGH = 32_767;
const handedOut = new Set<number>();

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** A free port on 127.0.0.1 outside the ephemeral range, not handed out before by this process; the caller binds it a moment later. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW + 1));
    if (handedOut.has(port)) continue;
    if (await bindable(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port in ${LOW}-${HIGH} after 200 tries`);
}
