// The SMTP side of the Gmail stand-in (smtp.gmail.com): submission with implicit TLS and AUTH, the
// message handed on to the real Postfix (which delivers it), and then, as Gmail does, a copy filed
// in [Gmail]/Sent Mail by the server itself (\Seen, the same bytes, so the same X-GM-THRID). A
// message without a Message-ID gets one first, so the delivered and the filed copy carry the same.
import { randomUUID } from 'node:crypto';
import { createTransport } from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { headerValue } from './gmail-ids.js';
import type { SideSession, Upstream } from './side-session.js';

export interface SmtpFrontOptions {
  /** Postfix's submission port (STARTTLS). */
  relay: Upstream;
  account: { user: string; password: string };
  sentFolder: string;
  cert: string;
  key: string;
}

export interface SmtpFront {
  port: number;
  close(): Promise<void>;
}

export async function startSmtpFront(opts: SmtpFrontOptions, side: SideSession): Promise<SmtpFront> {
  const relay = createTransport({
    host: opts.relay.host,
    port: opts.relay.port,
    secure: false,
    requireTLS: true,
    tls: { ca: [opts.relay.ca] },
    auth: { user: opts.account.user, pass: opts.account.password },
  });
  const server = new SMTPServer({
    secure: true,
    cert: opts.cert,
    key: opts.key,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === opts.account.user && auth.password === opts.account.password) callback(null, { user: auth.username });
      else callback(Object.assign(new Error('Username and Password not accepted.'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        void (async () => {
          let raw = Buffer.concat(chunks);
          if (!headerValue(raw, 'message-id')) raw = Buffer.concat([Buffer.from(`Message-ID: <${randomUUID()}@mail.gmail.com>\r\n`), raw]);
          const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : opts.account.user;
          await relay.sendMail({ envelope: { from, to: session.envelope.rcptTo.map((r) => r.address) }, raw });
          await side.append(opts.sentFolder, raw, ['\\Seen']);
        })().then(
          () => callback(),
          (err: Error) => callback(Object.assign(new Error(`Temporary failure: ${err.message}`), { responseCode: 451 })),
        );
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    close: async () => {
      relay.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
