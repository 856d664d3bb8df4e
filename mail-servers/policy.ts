// A Postfix policy service (the SMTP Access Policy Delegation protocol, postfix.org/SMTPD_POLICY_README.html)
// on loopback, asked by the submission listeners at the end of DATA: it answers DUNNO, so every
// message goes through as it would without it, unless a test holds it. A held answer keeps the
// client waiting for the server's reply to its final dot, which is where a crash test kills it:
// the message is with the server, the answer is not with the client. Released, Postfix takes it.
import { createServer, type Server, type Socket } from 'node:net';

export interface PolicyGate {
  /** inet:127.0.0.1:PORT, for smtpd_end_of_data_restrictions = check_policy_service … */
  address: string;
  /** From now on, answers wait until release(). */
  hold(): void;
  /** Resolves with the request (name=value pairs) once a message is being held. */
  held(): Promise<Record<string, string>>;
  /** Answers every held request (DUNNO: Postfix goes on and takes the message) and stops holding. */
  release(): void;
  close(): Promise<void>;
}

export async function startPolicyGate(): Promise<PolicyGate> {
  let holding = false;
  let waiting: Array<() => void> = [];
  let onHeld: Array<(request: Record<string, string>) => void> = [];
  const heldRequests: Record<string, string>[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      let end: number;
      // A request is name=value lines ended by an empty line; Postfix reuses the connection.
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const request = Object.fromEntries(
          buffer
            .slice(0, end)
            .split('\n')
            .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
        );
        buffer = buffer.slice(end + 2);
        const answer = () => socket.write('action=DUNNO\n\n');
        if (!holding) {
          answer();
          continue;
        }
        waiting.push(answer);
        heldRequests.push(request);
        for (const resolve of onHeld) resolve(request);
        onHeld = [];
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const port = (server.address() as { port: number }).port;
  return {
    address: `inet:127.0.0.1:${port}`,
    hold() {
      holding = true;
    },
    held() {
      const first = heldRequests[0];
      return first ? Promise.resolve(first) : new Promise((resolve) => onHeld.push(resolve));
    },
    release() {
      holding = false;
      const answers = waiting;
      waiting = [];
      heldRequests.length = 0;
      for (const answer of answers) answer();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
