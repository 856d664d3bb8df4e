// Real mail servers for the IMAP tests, `npm run dev -- --imap` and `npm run bench -- pipeline
// --provider imap`: a private Dovecot (IMAP, LMTP, SASL) and a private Postfix
// (SMTP) on 127.0.0.1 and free ports, with config, certificates and mail in one temporary directory,
// and two mailboxes: the user's and a correspondent's. Needs root (Dovecot and Postfix drop to their
// own users) and Debian's dovecot-imapd, dovecot-lmtpd and postfix (.ci/run installs them).
//
// Each test file starts its own pair in beforeAll (about a second): tests that restart Dovecot or
// kick connections then disturb nobody else. `info` is plain data, so a globalSetup could start one
// pair per run and provide() it; from a worker, `kickImapUser(info, address)` still works, restart does not.
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../src/shared/free-port.js';
import { makeCertificates } from './certificates.js';
import { startDovecot, type Dovecot, type MailAccount } from './dovecot.js';
import { startPostfix, type Postfix } from './postfix.js';

const run = promisify(execFile);

export type { MailAccount } from './dovecot.js';

/** Everything a client needs, as plain data (safe to pass through vitest's provide/inject). */
export interface MailServersInfo {
  host: '127.0.0.1';
  imap: {
    /** Plain IMAP that must be upgraded with STARTTLS before login (Dovecot has ssl = required). */
    starttlsPort: number;
    /** IMAP over TLS from the first byte (like 993). */
    implicitTlsPort: number;
  };
  smtp: {
    /** Like port 25 of an MX: no auth, takes mail for the two test domains only. */
    mxPort: number;
    /** Submission with STARTTLS and SASL (like 587). */
    submissionPort: number;
    /** Submission with implicit TLS and SASL (like 465). */
    submissionsPort: number;
  };
  /** The product's user, and someone who writes to them. Both can log in to IMAP and SMTP. */
  user: MailAccount;
  correspondent: MailAccount;
  /** The CA that signed both servers' certificate (for 127.0.0.1 and localhost): clients trust this. */
  caPem: string;
  /** Names the server certificate is valid for. */
  certificateNames: string[];
  dovecotConfig: string;
  versions: { dovecot: string; postfix: string };
  dir: string;
}

export interface MailServers extends MailServersInfo {
  info: MailServersInfo;
  /** Stops and starts Dovecot: every IMAP connection drops; mail and ports stay. */
  restartDovecot(): Promise<void>;
  /** doveadm kick: drops the address's IMAP connections; resolves with how many it dropped. */
  kickImapUser(address: string): Promise<number>;
  /** The user of a mailbox changes its password (IMAP and SMTP logins with the old one are refused from now). */
  setPassword(address: string, password: string): Promise<void>;
  /**
   * How many messages Postfix still holds; 0 means everything it accepted has reached its mailbox (or
   * bounced): a test that asserts a mailbox did NOT receive something waits for this first.
   */
  queuedMessages(): Promise<number>;
  /** The servers' recent log lines, for a failing test's message. */
  logs(): string;
  /** Stops both servers and deletes the directory with their config and mail. */
  stop(): Promise<void>;
}

export interface MailServerOptions {
  /** Without Postfix: an IMAP server alone (e.g. a second Dovecot with other capabilities). */
  postfix?: boolean;
  /** Replaces Dovecot's advertised CAPABILITY list (its imap_capability setting). */
  imapCapability?: string;
  /** 'gmail': Gmail's folder layout for the Gmail stand-in (dovecot.ts). */
  folders?: 'standard' | 'gmail';
  /** false: a Dovecot that keeps no keywords (PERMANENTFLAGS without \\*), as Exchange (DovecotOptions.keywords). */
  keywords?: boolean;
  /** XOAUTH2/OAUTHBEARER logins checked at this tokeninfo endpoint (DovecotOptions.oauth2), beside passwords. */
  oauth2?: { tokeninfoUrl: string };
  /** The user's mailbox (default USER): a test that stores the account in the shared database gives it an address of its own. */
  user?: MailAccount;
  /** The correspondent's mailbox (default CORRESPONDENT): a test whose rules name its domain gives it a domain of its own (rules are the installation's). */
  correspondent?: MailAccount;
  /** More mailboxes beside the user's and the correspondent's (the dev demo's senders, so replies to them arrive). */
  others?: MailAccount[];
  /** A Postfix policy service the submission ports ask at the end of DATA (startPolicyGate's address). */
  submissionPolicy?: string;
  /** Each server log line (default: kept for logs() only; MAIL_SERVERS_LOG=1 prints them). */
  log?: (line: string) => void;
}

export const USER: MailAccount = { address: 'user@inbox.test', password: 'user-app-password' };
export const CORRESPONDENT: MailAccount = { address: 'alice@correspondent.test', password: 'alice-password' };

export async function startMailServers(options: MailServerOptions = {}): Promise<MailServers> {
  await checkPrerequisites();
  const log =
    options.log ?? (process.env['MAIL_SERVERS_LOG'] ? (line: string) => console.error(`[mail] ${line}`) : undefined);
  // The free ports are only free until someone else binds them: on a collision, new ports. (A Postfix
  // master that cannot bind exits before its log service runs, so it says nothing: tried again too.)
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options, log);
    } catch (err) {
      const message = (err as Error).message;
      if (attempt >= 3 || !/Address already in use|^Postfix exited before/i.test(message)) throw err;
    }
  }
}

async function startOnce(options: MailServerOptions, log: ((line: string) => void) | undefined): Promise<MailServers> {
  const dir = await mkdtemp(join(tmpdir(), 'durable-inbox-mail-'));
  // Dovecot's and Postfix's own users must reach their sockets and files in here.
  await chmod(dir, 0o755);
  // A run that ends without stop() (a crashed test file) still leaves no mail behind in /tmp.
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeDir);
  let dovecot: Dovecot | undefined;
  let postfix: Postfix | undefined;
  const stop = async () => {
    await postfix?.stop();
    await dovecot?.stop();
    process.removeListener('exit', removeDir);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const certs = await makeCertificates(dir);
    const { imapPort, imapsPort, mxPort, submissionPort, submissionsPort } = await distinctFreePorts([
      'imapPort',
      'imapsPort',
      'mxPort',
      'submissionPort',
      'submissionsPort',
    ] as const);
    const user = options.user ?? USER;
    const correspondent = options.correspondent ?? CORRESPONDENT;
    const accounts = [user, correspondent, ...(options.others ?? [])];
    dovecot = await startDovecot({
      dir,
      imapPort,
      imapsPort,
      certFile: certs.certFile,
      keyFile: certs.keyFile,
      accounts,
      imapCapability: options.imapCapability,
      ...(options.folders ? { folders: options.folders } : {}),
      ...(options.keywords === false ? { keywords: false } : {}),
      ...(options.oauth2 ? { oauth2: options.oauth2 } : {}),
      log,
    });
    if (options.postfix !== false) {
      postfix = await startPostfix({
        dir,
        mxPort,
        submissionPort,
        submissionsPort,
        certFile: certs.certFile,
        keyFile: certs.keyFile,
        addresses: accounts.map((a) => a.address),
        lmtpSocket: dovecot.lmtpSocket,
        authSocket: dovecot.authSocket,
        ...(options.submissionPolicy ? { submissionPolicy: options.submissionPolicy } : {}),
        log,
      });
    }
    const d = dovecot;
    const info: MailServersInfo = {
      host: '127.0.0.1',
      imap: { starttlsPort: imapPort, implicitTlsPort: imapsPort },
      smtp: { mxPort, submissionPort, submissionsPort },
      user,
      correspondent,
      caPem: certs.caPem,
      certificateNames: certs.names,
      dovecotConfig: d.config,
      versions: { dovecot: d.version, postfix: postfix?.version ?? '' },
      dir,
    };
    return {
      ...info,
      info,
      restartDovecot: () => d.restart(),
      kickImapUser: (address) => d.kick(address),
      setPassword: (address, password) => d.setPassword(address, password),
      queuedMessages: async () => (postfix ? postfix.queuedMessages() : 0),
      logs: () => [`--- dovecot`, d.outputTail(), ...(postfix ? ['--- postfix', postfix.outputTail()] : [])].join('\n'),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** doveadm kick from any process that has the servers' info (e.g. a test worker, with servers from globalSetup). */
export async function kickImapUser(info: Pick<MailServersInfo, 'dovecotConfig'>, address: string): Promise<void> {
  await run('doveadm', ['-c', info.dovecotConfig, 'kick', address]);
}

async function distinctFreePorts<K extends string>(names: readonly K[]): Promise<Record<K, number>> {
  const ports = new Set<number>();
  while (ports.size < names.length) ports.add(await freePort());
  const list = [...ports];
  return Object.fromEntries(names.map((name, i) => [name, list[i]])) as Record<K, number>;
}

async function checkPrerequisites(): Promise<void> {
  const missing: string[] = [];
  for (const [program, pkg] of [
    ['dovecot', 'dovecot-imapd'],
    ['doveadm', 'dovecot-core'],
    ['/usr/lib/dovecot/imap', 'dovecot-imapd'],
    ['/usr/lib/dovecot/lmtp', 'dovecot-lmtpd'],
    ['postfix', 'postfix'],
    ['openssl', 'openssl'],
  ] as const) {
    const found = await run('sh', ['-c', `command -v ${program}`]).then(
      () => true,
      () => false,
    );
    if (!found) missing.push(pkg);
  }
  if (missing.length > 0) {
    throw new Error(
      `the IMAP tests need Debian's ${[...new Set(missing)].join(', ')}: run .ci/run, or apt-get install dovecot-imapd dovecot-lmtpd postfix`,
    );
  }
  if (process.getuid?.() !== 0) {
    throw new Error(
      'the IMAP tests start Dovecot and Postfix, which must be started as root (they drop to their own users)',
    );
  }
}
