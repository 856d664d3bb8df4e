// Mail from outside into the local servers: what another server on the Internet does.
import { createTransport } from 'nodemailer';
import type { MailServersInfo } from './index.js';

/** The servers' MX port as another server reaches it: plain SMTP, STARTTLS offered, no login. */
function mxPort(servers: Pick<MailServersInfo, 'host' | 'smtp' | 'caPem'>) {
  return { host: servers.host, port: servers.smtp.mxPort, secure: false, tls: { ca: servers.caPem }, logger: false };
}

/** Mail from outside: to the servers' MX port, no login (as another server on the Internet would). */
export async function deliverFromOutside(
  servers: Pick<MailServersInfo, 'host' | 'smtp' | 'caPem'>,
  mail: { from: string; to: string; subject: string; text: string; messageId: string },
) {
  const transport = createTransport(mxPort(servers));
  try {
    return await transport.sendMail(mail);
  } finally {
    transport.close();
  }
}

/**
 * Another MTA on the Internet, for complete messages: their bytes as they are (8-bit headers, odd
 * syntax and all) to the MX port with the envelope given, no login, its connections kept for the
 * next message as an MTA keeps them. `deliver` resolves with Postfix's answer to the final dot
 * (`250 2.0.0 Ok: queued as …`); a refusal rejects with the server's reply in the message.
 */
export function outsideMta(servers: Pick<MailServersInfo, 'host' | 'smtp' | 'caPem'>, options: { connections?: number } = {}) {
  const transport = createTransport({ ...mxPort(servers), pool: true, maxConnections: options.connections ?? 4 });
  return {
    async deliver(mail: { envelope: { from: string; to: string[] }; raw: Buffer }): Promise<string> {
      return (await transport.sendMail({ envelope: mail.envelope, raw: mail.raw })).response;
    },
    close: () => transport.close(),
  };
}
